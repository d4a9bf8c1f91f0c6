/* dg_engine.h - what identifies a cuDNN graph-API engine config: the
 * engine's global index and its knob choices (knob type, value), as the
 * plan cache stores them ("ID" or "ID:T=V,T=V,..."), and the notes cuDNN
 * attaches to the engine (bit masks). cudnn-frontend names a plan the same
 * way ("eng<ID>_k<T>=<V>..."); an engine config is rebuilt from exactly
 * these integers (dnngraph.cu, dg_config_of).
 *
 * Plain C, no CUDA or cuDNN types: included by dnngraph.h (nvcc) and by
 * tests/unit/test_dg_engine.c. */
#ifndef MATRIX_ENGINE_DG_ENGINE_H
#define MATRIX_ENGINE_DG_ENGINE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define DG_MAX_KNOBS 64 /* cuDNN 9.19 has 44 knob types */

typedef struct dg_engine {
    int64_t id;                        /* CUDNN_ATTR_ENGINE_GLOBAL_INDEX */
    int nknobs;
    int64_t knob_type[DG_MAX_KNOBS];   /* cudnnBackendKnobType_t */
    int64_t knob_value[DG_MAX_KNOBS];  /* CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE */
    unsigned numerical, behavior;      /* 1 << cudnnBackendNumericalNote_t / BehaviorNote_t */
} dg_engine;

/* e as "ID" or "ID:T=V,T=V,..." into s (n bytes); "" when the whole text
 * does not fit, which dg_engine_parse refuses (a text cut short could read
 * back as another engine config: "42:12=345" cut to "42:12=3"). */
static inline void dg_engine_str(const dg_engine *e, char *s, size_t n)
{
    size_t len = (size_t)snprintf(s, n, "%lld", (long long)e->id);
    for (int i = 0; i < e->nknobs && len < n; i++)
        len += (size_t)snprintf(s + len, n - len, "%s%lld=%lld", i ? "," : ":",
                                (long long)e->knob_type[i], (long long)e->knob_value[i]);
    if (len >= n && n > 0)
        s[0] = 0;
}

/* One integer at *p (decimal, optional minus) into *v, *p moved past it; 0 or -1. */
static inline int dg_engine_int(const char **p, int64_t *v)
{
    char *end;
    if (!((**p >= '0' && **p <= '9') || (**p == '-' && (*p)[1] >= '0' && (*p)[1] <= '9')))
        return -1;
    errno = 0;
    long long x = strtoll(*p, &end, 10);
    if (errno)
        return -1;
    *v = (int64_t)x;
    *p = end;
    return 0;
}

/* s back into e (notes 0): 0, or -1 when s is not exactly what
 * dg_engine_str writes (id >= 0, knob types >= 0, at most DG_MAX_KNOBS). */
static inline int dg_engine_parse(const char *s, dg_engine *e)
{
    const char *p = s;
    e->nknobs = 0;
    e->numerical = e->behavior = 0;
    if (dg_engine_int(&p, &e->id) || e->id < 0)
        return -1;
    if (!*p)
        return 0;
    if (*p++ != ':')
        return -1;
    for (;;) {
        if (e->nknobs == DG_MAX_KNOBS)
            return -1;
        int64_t t, v;
        if (dg_engine_int(&p, &t) || t < 0 || *p++ != '=' || dg_engine_int(&p, &v))
            return -1;
        e->knob_type[e->nknobs] = t;
        e->knob_value[e->nknobs++] = v;
        if (!*p)
            return 0;
        if (*p++ != ',')
            return -1;
    }
}

#endif
