/* mem.c - tracked allocator, see mem.h. */
#include "config.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t mem_now;    /* bytes */
static size_t mem_high;   /* bytes */
static size_t mem_failed; /* bytes */

/* Bytes the kernel says can still be allocated (MemAvailable), or 0 when it
 * cannot be read. */
static size_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    size_t kb = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %zu kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024;
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
