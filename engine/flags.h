/* flags.h - matrix-engine's command line: the options, declared as data
 * (one table in flags.c: name, kind, where it goes, levels, help), and the
 * level names that the result record prints back. */
#ifndef MATRIX_ENGINE_FLAGS_H
#define MATRIX_ENGINE_FLAGS_H

#include "engine.h"
#include "measure.h"

#include <stdio.h>

extern const char *const lv_task[];    /* infer, train */
extern const char *const lv_prec[];    /* fp32, tf32, fp16, bf16, int8 */
extern const char *const lv_runtime[]; /* eager, inductor, onnxruntime, tensorrt */
extern const char *const lv_quant[];   /* dynamic, static */
extern const char *const lv_onoff[];   /* off, on */
extern const char *const lv_compile[]; /* none, default, reduce-overhead, max-autotune */
extern const char *const lv_device[];  /* auto, cpu, cuda */

struct opts {
    point pt;
    const char *result, *weights, *save_weights, *dump;
    const char *data;    /* --data DIR: MNIST's IDX files; NULL: synthetic inputs */
    const char *profile; /* --profile FILE: per-op CSV after the timed steps */
    measure_cfg m;
    int steps;
    int list_models, help, version;
    long seed;
    double lr;
    unsigned long long given; /* bit k: the flag of flags.c's table row k was on the command line */
};

/* The defaults (mnist_cnn, batch 64, every online CPU, 0.2 s warm-up, ...). */
void flags_defaults(struct opts *o);
/* Parse argv into o (after flags_defaults): 0, or -1 with a message on
 * stderr. Derived settings (max_time >= min_time, steps, seed) are set. */
int flags_parse(int argc, char **argv, struct opts *o);
/* Whether --NAME was on the command line (after flags_parse). */
int flags_given(const struct opts *o, const char *name);
/* The --help text. */
void flags_usage(FILE *f);
/* Single-character edits between a and b (at most 64 characters each, else
 * SIZE_MAX): the did-you-mean of an unknown flag or model. */
size_t flags_edit_distance(const char *a, const char *b);

#endif
