/* mem.c - tracked allocator, see mem.h. */
#include "config.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static size_t mem_now;    /* bytes */
static size_t mem_high;   /* bytes */
static size_t mem_failed; /* bytes */

size_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    size_t kb = 0, avail;
    struct rlimit rl;
    if (f) {
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %zu kB", &kb) == 1)
                break;
        fclose(f);
    }
    avail = kb * 1024;
    /* a limit of the process (ulimit -v, -d) bounds it too */
    int res[] = {RLIMIT_AS, RLIMIT_DATA};
    for (size_t i = 0; i < sizeof res / sizeof res[0]; i++)
        if (getrlimit(res[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (!avail || rl.rlim_cur < avail))
            avail = (size_t)rl.rlim_cur;
    return avail;
}

void *mem_alloc(size_t bytes)
{
    void *p = NULL;
    size_t avail;
    if (bytes == 0)
        bytes = 64;
    avail = mem_available();
    if (bytes > (size_t)1 << 24 && avail && bytes > avail) {
        mem_failed = bytes;
        return NULL;
    }
    if (posix_memalign(&p, 64, (bytes + 63) & ~(size_t)63) != 0) {
        mem_failed = bytes;
        return NULL;
    }
    memset(p, 0, bytes);
    mem_now += bytes;
    if (mem_now > mem_high)
        mem_high = mem_now;
    return p;
}

void mem_free(void *p, size_t bytes)
{
    if (!p)
        return;
    if (bytes == 0)
        bytes = 64;
    mem_now -= bytes;
    free(p);
}

size_t mem_current(void) { return mem_now; }
size_t mem_peak(void) { return mem_high; }
size_t mem_failed_bytes(void) { return mem_failed; }
