/* test_data_ring.c - the host side of --data's pinned upload (engine/data.c,
 * issue 18 item 1): the staging ring's slots and refusals, and the batches a
 * run takes through it - made one step ahead on the timed path, made in the
 * step on the op-by-op path (dump, profile), in any mix - are the batches
 * the pageable path makes in the step (same images, labels and pixels, same
 * epochs), with every copy of a model of the device's buffers and streams
 * ordered as engine/cuda/backend_cuda.cu orders them. */
#include "config.h"
#include "t.h"

#include "../../engine/data.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N 37     /* images: 3 epochs of 4 batches of 8 (5 dropped) fit in 40 steps */
#define ROWS 3
#define COLS 2
#define BATCH 8
#define PX (ROWS * COLS)

/* A data set of N images (pixel values from the image's number) bound as
 * data_bind binds it, without a graph. */
static void make_set(data_set *d, uint8_t *pix, uint8_t *lab)
{
    memset(d, 0, sizeof *d);
    for (int i = 0; i < N; i++) {
        lab[i] = (uint8_t)(i % 10);
        for (int k = 0; k < PX; k++)
            pix[i * PX + k] = (uint8_t)(i * 7 + k);
    }
    d->n = N;
    d->rows = ROWS;
    d->cols = COLS;
    d->pix = pix;
    d->lab = lab;
    d->batch = BATCH;
    d->ranks = 1;
    d->seed = 5;
    d->epoch_steps = N / BATCH;
    d->next = d->epoch_steps;
    d->order = malloc(N * sizeof *d->order);
    d->index = malloc(BATCH * sizeof *d->index);
    if (!d->order || !d->index)
        abort();
}

static void ring_slots(void)
{
    data_ring q = {0, 0};
    CHECK_INT(data_ring_take(&q), -1); /* nothing made */
    CHECK_INT(data_ring_make(&q), 0);
    CHECK_INT(data_ring_make(&q), 1);
    CHECK_INT(data_ring_make(&q), -1); /* both slots wait: slot 0 not taken */
    CHECK_INT((int)q.made, 2);
    CHECK_INT(data_ring_take(&q), 0);
    CHECK_INT(data_ring_make(&q), 0); /* slot 0 again, once taken */
    CHECK_INT(data_ring_take(&q), 1);
    CHECK_INT(data_ring_take(&q), 0);
    CHECK_INT(data_ring_take(&q), -1);
    CHECK_INT((int)data_ring_epochs(&q, 2), 2); /* batches 0..2, 2 per epoch: epochs 1 and 2 */
    data_ring e = {0, 0};
    CHECK_INT((int)data_ring_epochs(&e, 4), 0);
}

/* The device, as far as ordering goes: each slot's device buffer holds the
 * batch its last copy brought; sent / taken say whether the copy into it
 * and the copy out of it were queued (the events). */
struct dev {
    int64_t host[DATA_SLOTS];  /* the batch in the slot's pinned buffer */
    int64_t dev[DATA_SLOTS];   /* the batch in the slot's device buffer */
    int unread[DATA_SLOTS];    /* the device buffer holds a batch no take copied out yet */
    int64_t input;             /* the batch in the step's input tensor */
};

/* One step of the engine (session.c's data_feed and data_ahead), with the
 * pixels of the batch the step reads compared with the pageable path's. */
static void step(data_set *d, data_ring *q, struct dev *v, void *const *host, int32_t *const *index, int ahead,
                 data_set *ref, float *refx, int32_t *refy)
{
    int slot;
    if (q->made == q->taken) { /* none made ahead: make it now */
        slot = data_ring_make(q);
        CHECK(slot >= 0);
        CHECK(!v->unread[slot]); /* stage_send waits for the slot's last take */
        data_fill_slot(d, slot, host, index);
        v->host[slot] = q->made - 1;
        v->dev[slot] = v->host[slot];
        v->unread[slot] = 1;
    }
    slot = data_ring_take(q);
    CHECK(slot >= 0);
    CHECK(v->unread[slot]); /* stage_take reads a copy that was sent */
    v->input = v->dev[slot];
    v->unread[slot] = 0;
    data_took_slot(d, slot, index);
    CHECK_INT((int)v->input, (int)(q->taken - 1)); /* batches in order */
    data_next(ref, refx, refy);
    CHECK(memcmp(host[2 * slot], refx, BATCH * PX * sizeof(float)) == 0);
    CHECK(memcmp(host[2 * slot + 1], refy, BATCH * sizeof(int32_t)) == 0);
    if (ahead) { /* the timed path: the next batch while the step runs */
        int next = data_ring_make(q);
        CHECK(next >= 0 && next != slot); /* never the slot the step reads */
        CHECK(!v->unread[next]);
        data_fill_slot(d, next, host, index);
        v->host[next] = q->made - 1;
        v->dev[next] = v->host[next];
        v->unread[next] = 1;
        CHECK(v->input != v->dev[next]);
    }
    /* the images of the batch the step took (the dump's data_index) */
    CHECK(memcmp(d->index, ref->index, BATCH * sizeof(int32_t)) == 0);
    CHECK_INT((int)data_ring_epochs(q, d->epoch_steps), (int)ref->epoch);
}

/* pattern[i]: step i runs ahead (timed) or not (op by op) */
static void run(const char *pattern)
{
    static uint8_t pix[N * PX], lab[N];
    data_set d, ref;
    make_set(&d, pix, lab);
    make_set(&ref, pix, lab);
    float *x[DATA_SLOTS], refx[BATCH * PX];
    int32_t *y[DATA_SLOTS], *index[DATA_SLOTS], refy[BATCH];
    void *host[2 * DATA_SLOTS];
    for (int s = 0; s < DATA_SLOTS; s++) {
        x[s] = calloc(BATCH * PX, sizeof(float));
        y[s] = calloc(BATCH, sizeof(int32_t));
        index[s] = calloc(BATCH, sizeof(int32_t));
        if (!x[s] || !y[s] || !index[s])
            abort();
        host[2 * s] = x[s];
        host[2 * s + 1] = y[s];
    }
    data_ring q = {0, 0};
    struct dev v;
    memset(&v, 0, sizeof v);
    int before = t_failures;
    for (const char *p = pattern; *p; p++)
        step(&d, &q, &v, host, index, *p == 't', &ref, refx, refy);
    CHECK_INT((int)q.taken, (int)ref.batches);
    CHECK(q.made - q.taken == (pattern[strlen(pattern) - 1] == 't'));
    if (t_failures != before)
        fprintf(stderr, "  (steps %s)\n", pattern);
    for (int s = 0; s < DATA_SLOTS; s++) {
        free(x[s]);
        free(y[s]);
        free(index[s]);
    }
    free(d.order);
    free(d.index);
    free(ref.order);
    free(ref.index);
}

int main(void)
{
    ring_slots();
    /* t: a timed step (be.step, the next batch made during it); o: op by
     * op (dump, --profile, MATRIX_ENGINE_PROFILE); 40 steps: 3 epochs */
    run("tttttttttttttttttttttttttttttttttttttttt");
    run("oooooooooooooooooooooooooooooooooooooooo");
    run("ottttttttttttttttttttttttttttttttttttooo"); /* warm-up, timed, --profile */
    run("tototootttoottotototttttoooottttoooottto");
    T_DONE();
}
