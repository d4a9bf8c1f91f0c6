/* plans.cu - the CUDA backend's side of the persistent plan cache
 * (engine/plancache.h): which file (the GPU, its compute capability and SM
 * count, the driver, the CUDA runtime, cuDNN and cuBLASLt versions and the
 * engine's version make the context; a change of any of them is another
 * file, and a file whose context differs is stale), the counts on stderr
 * and in the result record.
 *
 * What is kept (conv.cu, gemm.cu): for each convolution direction the cuDNN
 * algorithm and math type chosen by the heuristics or the timed search; for
 * each cuBLASLt product the verified algorithm (its opaque bytes), chosen by
 * the heuristics or by autotune. Keys hold the whole problem (shape, layout,
 * types, math, epilogue, search mode, workspace cap) and a digest of the key
 * struct. A hit is not trusted: conv.cu checks the algorithm against the
 * descriptor (workspace query, one call as the step makes it), gemm.cu with
 * cublasLtMatmulAlgoCheck and its numerical verification; one that fails is
 * rejected (counted in plan_cache_rejected) and searched again. */
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char plans_info[512] = "plan_cache=off\n";

void cu_plans_open(void)
{
    char dir[4096], ctx[1024], label[160];
    int drv = cu.driver_version, rt = cu.runtime_version; /* be_init's */
    cu.plans = NULL;
    int d = plancache_dir(cu.pt.plan_cache, dir, sizeof dir);
    if (d <= 0) {
        if (d < 0)
            fprintf(stderr, "matrix-engine: plan cache: %s; going on without one\n", dir);
        snprintf(plans_info, sizeof plans_info, "plan_cache=off\n");
        return;
    }
    size_t dnn = 0;
#ifdef HAVE_CUDNN
    dnn = cudnnGetVersion();
#endif
    snprintf(ctx, sizeof ctx,
             "engine %s; gpu %s; cc %d.%d; sms %d; driver %d; cuda runtime %d; cudnn %zu; "
             "cublaslt %zu",
             PACKAGE_VERSION, cu.prop.name, cu.prop.major, cu.prop.minor,
             cu.prop.multiProcessorCount, drv, rt, dnn, cublasLtGetVersion());
    snprintf(label, sizeof label, "%.120s-sm%d%d", cu.prop.name, cu.prop.major, cu.prop.minor);
    cu.plans = plancache_open(dir, label, ctx);
    if (!cu.plans)
        cu_fail(__FILE__, __LINE__, "plancache_open", "out of host memory");
}

void cu_plans_close(void)
{
    if (!cu.plans)
        return;
    plancache_stats st;
    (void)plancache_save(cu.plans); /* a failure is said there, once */
    plancache_get_stats(cu.plans, &st);
    fprintf(stderr,
            "matrix-engine: plan cache: %d hits, %d misses (%d of them rejected hits), %d stored%s, "
            "'%s'\n",
            st.hits, st.misses, st.rejected, st.stored, st.save_failed ? " (not saved)" : "",
            plancache_path(cu.plans));
    plancache_info(cu.plans, plans_info, sizeof plans_info);
    plancache_close(cu.plans);
    cu.plans = NULL;
}

const char *cu_plans_info(void) { return plans_info; }

void cu_hex_put(const void *p, size_t n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 15];
    }
    out[2 * n] = 0;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int cu_hex_get(const char *s, void *p, size_t n)
{
    unsigned char *b = (unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        int hi = hex_digit(s[2 * i]), lo = hi < 0 ? -1 : hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        b[i] = (unsigned char)(hi << 4 | lo);
    }
    return s[2 * n] == 0 || s[2 * n] == ' ' ? 0 : -1;
}

uint64_t cu_digest(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}
