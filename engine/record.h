/* record.h - the result record matrix-engine writes (key=value lines,
 * written as outfile.h says), the records of the ways out (unsupported,
 * out of memory), and what /proc/cpuinfo says. */
#ifndef MATRIX_ENGINE_RECORD_H
#define MATRIX_ENGINE_RECORD_H

#include "backend.h"
#include "flags.h"

#include <stddef.h>

struct record {
    char *buf;
    size_t len, cap;
};

/* Append "key=value\n" (newlines in the value become spaces). */
void rec(struct record *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Write the record to path (outfile.h: through path.tmp.PID renamed over
 * it, or in place for a device or a FIFO); 0 on success, nothing to do when
 * path is NULL. */
int rec_write(const struct record *r, const char *path);
/* The point's settings, the engine and the CPU. */
void rec_point(struct record *r, const struct opts *o);
/* The contents of the first line of /proc/cpuinfo starting with key. */
void cpuinfo(const char *key, char *out, size_t n);
/* 1 when /proc/cpuinfo's flags hold flag. */
int cpu_has(const char *flag);
/* Append what to a comma-separated list of ignored settings. */
void add_ignored(char *buf, size_t n, const char *what);

/* The backend whose peak memory the oom record reports (NULL: the host's). */
void record_backend(const backend *b);
/* Write status=unsupported with the reason; returns the exit status 3. */
int finish_unsupported(const struct opts *o, const char *ignored, const char *reason);
/* Write status=oom for an allocation of bytes for what; returns 1. */
int finish_oom(const struct opts *o, size_t bytes, const char *what);
/* Write status=oom for a point with a tensor of more than GRAPH_MAX_NUMEL
 * elements (graph.too_big: its name and shape); returns 1. */
int finish_too_big(const struct opts *o, const char *what);

#endif
