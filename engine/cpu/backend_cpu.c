/* backend_cpu.c - the CPU backend's table (backend.h). */
#include "config.h"
#include "cpu.h"
#include "pool.h"
#include "../backend.h"
#include "../mem.h"

#include <string.h>
#ifdef HAVE_CBLAS
#include <cblas.h>
/* OpenBLAS extension: absent from other CBLAS libraries */
#pragma weak openblas_set_num_threads
#endif

void *backend_ws;
size_t backend_ws_bytes;

/* Our pool owns the parallelism: OpenBLAS runs one thread inside each of
 * our threads, so the two never compete for the cores. */
static int cpu_init(int threads)
{
#ifdef HAVE_CBLAS
    if (openblas_set_num_threads)
        openblas_set_num_threads(1);
#endif
    return pool_start(threads);
}

static void cpu_fini(void) { pool_stop(); }
static void cpu_copy_bytes(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }
static void cpu_sync(void) {}

/* Fill b with the CPU backend. */
void backend_cpu_setup(backend *b)
{
    memset(b, 0, sizeof *b);
    b->name = "cpu";
    b->init = cpu_init;
    b->fini = cpu_fini;
    b->alloc = mem_alloc;
    b->free = mem_free;
    b->upload = cpu_copy_bytes;
    b->download = cpu_copy_bytes;
    b->sync = cpu_sync;
    b->workspace = cpu_op_workspace;
    b->saved = cpu_op_saved;
    cpu_ops_register(b->ops);
}
