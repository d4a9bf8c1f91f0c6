/* session.h - one point of matrix-engine from its options to its result,
 * as the steps main() calls in order. Each step returns SESSION_GO to go
 * on, or the process's exit status (having written the record of the way
 * out: status=unsupported, status=oom, or a message on stderr). */
#ifndef MATRIX_ENGINE_SESSION_H
#define MATRIX_ENGINE_SESSION_H

#include "backend.h"
#include "data.h"
#include "flags.h"
#include "graph.h"
#include "measure.h"
#include "models/models.h"

#define SESSION_GO (-1)

/* The graph and backend a step runs on. */
struct run {
    graph g;
    backend be;
    int nrun;        /* ops per step */
    /* --data: the input pipeline, run at the start of every step; the
     * batch is staged on the host for a device backend */
    data_set *data;
    int data_direct; /* the cpu: the pipeline writes into the input tensors */
    float *stage_x;
    int32_t *stage_y;
    /* the pinned upload (data.h, MATRIX_ENGINE_DATA_UPLOAD): a device
     * backend's staging ring; staged 0 on the cpu and with pageable */
    int staged;
    data_ring ring;
    void *stage_host[DATA_SLOTS * 2];  /* slot s: [2s] input, [2s + 1] labels (pinned) */
    int32_t *stage_index[DATA_SLOTS]; /* the images of each slot's batch (data_set.index) */
    /* dump mode: called after each op */
    void (*hook)(struct run *r, int opi);
    void *hook_ctx;
};

struct session {
    struct opts o;
    struct run r;
    const model_desc *md;
    model_info info;
    char ignored[512];   /* settings that do not apply (result key ignored) */
    char err[512];
    char device_fallback[640]; /* --device auto ran on the cpu with a GPU present: why ("" otherwise) */
    long online;         /* online CPUs */
    double t_start;      /* process start (main entered), s */
    double t_setup;      /* start to the first measured step, s */
    double t_plan0, t_plan1; /* the backend's prepare (algorithm choice) began / ended, s */
    int folded, fused;   /* BN folded, ops fused by the passes */
    int nsaved;          /* infer, autograd on: activations kept for a backward */
    int flash;           /* attention ops in the flash form (pass_flash_attention) */
    int bnrelu;          /* ReLU backwards folded into BN backwards (pass_bn_relu_bwd) */
    int quiet;           /* a rank other than 0: writes no result */
    int buckets;         /* data parallel: gradient buckets */
    char *arena;         /* planned activations */
    size_t arena_bytes;
    size_t ws;           /* kernel workspace, bytes */
    double flops;        /* per step */
    measure_result mr;
    data_set data;       /* --data */
    double prof_sum_s;   /* --profile: the ops' times summed over the profiled steps, s */
    double prof_wall_s;  /* --profile: wall time of the profiled steps, s */
};

/* Options and defaults: --help / --list-models answered here (exit 0), a
 * bad flag or model is 2. */
int session_flags(struct session *s, int argc, char **argv);
/* --gpus N > 1: start N ranks (comm_launch: local, or mpirun) and wait for them (the exit
 * status), or, in a rank, join them (engine_comm). */
int session_ranks(struct session *s, int argc, char **argv);
/* The backend: cuda when asked for (or auto with a GPU and the module). */
int session_device(struct session *s);
/* What cannot run here (unsupported) and what does not apply (ignored). */
int session_check(struct session *s);
/* Backend start, model graph, parameters and inputs filled (or loaded). */
int session_build(struct session *s);
/* BN folding, fusion, autodiff, autograd's saved set, mixed precision, the
 * memory plan. */
int session_passes(struct session *s);
/* Persistent tensors to the device, the arena, the workspace, the backend's
 * prepare (library handles, algorithm choice). */
int session_place(struct session *s);
/* --dump: run the reference dump instead of measuring; the exit status. */
int session_dump(struct session *s);
/* Warm up and time steps (measure.h); --save-weights; the profile. */
int session_measure(struct session *s);
/* Write the result record; the exit status. */
int session_result(struct session *s);
/* Free everything. */
void session_free(struct session *s);

#endif
