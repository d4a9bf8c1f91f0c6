/* record.c - the result record (record.h). */
#include "config.h"
#include "record.h"
#include "check.h"
#include "knobs.h"
#include "mem.h"
#include "outfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rec(struct record *r, const char *key, const char *fmt, ...)
{
    char val[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof val, fmt, ap);
    va_end(ap);
    for (char *p = val; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    size_t need = strlen(key) + strlen(val) + 3;
    if (r->len + need >= r->cap) {
        r->cap = (r->cap + need) * 2;
        r->buf = realloc(r->buf, r->cap);
        mallocCheck(r->buf);
    }
    r->len += sprintf(r->buf + r->len, "%s=%s\n", key, val);
}

int rec_write(const struct record *r, const char *path)
{
    outfile of;
    char err[512];
    if (!path)
        return 0;
    if (out_open(&of, path, err, sizeof err) == 0) {
        fwrite(r->buf, 1, r->len, of.f);
        if (out_close(&of, err, sizeof err) == 0)
            return 0;
    }
    fprintf(stderr, "matrix-engine: unable to write the result file: %s\n", err);
    return -1;
}

void cpuinfo(const char *key, char *out, size_t n)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    snprintf(out, n, "unknown");
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(out, n, "%s", c);
            }
            break;
        }
    fclose(f);
}

int cpu_has(const char *flag)
{
    char fl[8192], pat[64];
    cpuinfo("flags", fl, sizeof fl);
    snprintf(pat, sizeof pat, " %s ", flag);
    strcat(fl, " ");
    memmove(fl + 1, fl, strlen(fl) + 1);
    fl[0] = ' ';
    return strstr(fl, pat) != NULL;
}

void rec_point(struct record *r, const struct opts *o)
{
    const point *p = &o->pt;
    char cpu[256];
    rec(r, "model", "%s", p->model);
    rec(r, "task", "%s", lv_task[p->train]);
    rec(r, "batch", "%d", p->batch);
    rec(r, "seq_len", "%d", p->seq_len);
    rec(r, "precision", "%s", lv_prec[p->precision]);
    rec(r, "channels_last", "%s", lv_onoff[p->channels_last]);
    rec(r, "cudnn_benchmark", "%s", lv_onoff[p->cudnn_benchmark]);
    rec(r, "eval", "%s", lv_onoff[p->eval]);
    rec(r, "inference_mode", "%s", lv_onoff[p->inference_mode]);
    rec(r, "compile", "%s", lv_compile[p->compile]);
    rec(r, "syncbn", "%s", lv_onoff[p->syncbn]);
    rec(r, "ema", "%s", lv_onoff[p->ema]);
    rec(r, "gpus", "%d", p->gpus);
    rec(r, "threads", "%d", p->threads);
    rec(r, "data", "%s", o->data ? o->data : "synthetic");
    rec(r, "engine", "native");
    rec(r, "engine_version", "%s", PACKAGE_VERSION);
    char knobs[512]; /* the MATRIX_ENGINE_* settings (knobs.h), checked before the point ran */
    knobs_list(knobs, sizeof knobs);
    rec(r, "knobs", "%s", knobs);
    cpuinfo("model name", cpu, sizeof cpu);
    rec(r, "cpu", "%s", cpu);
}

int finish_unsupported(const struct opts *o, const char *ignored, const char *reason)
{
    struct record r = {0};
    rec(&r, "status", "unsupported");
    rec(&r, "reason", "%s", reason);
    rec_point(&r, o);
    rec(&r, "device", "%s", o->pt.device == DEV_CUDA ? "cuda" : "cpu");
    rec(&r, "ignored", "%s", ignored);
    fprintf(stderr, "matrix-engine: unsupported: %s\n", reason);
    rec_write(&r, o->result);
    free(r.buf);
    return 3;
}

static const backend *active_be; /* for the records written on the way out */

void record_backend(const backend *b) { active_be = b; }

/* status=oom with reason; returns 1. */
static int finish_oom_reason(const struct opts *o, const char *reason)
{
    struct record r = {0};
    rec(&r, "status", "oom");
    rec(&r, "reason", "%s", reason);
    rec_point(&r, o);
    rec(&r, "device", "%s", o->pt.device == DEV_CUDA ? "cuda" : "cpu");
    rec(&r, "peak_mem_bytes", "%zu", active_be && active_be->peak ? active_be->peak() : mem_peak());
    fprintf(stderr, "matrix-engine: %s\n", reason);
    rec_write(&r, o->result);
    free(r.buf);
    return 1;
}

int finish_oom(const struct opts *o, size_t bytes, const char *what)
{
    char reason[256];
    snprintf(reason, sizeof reason, "out of memory: failed to allocate %zu bytes (%.2f GiB) for %s",
             bytes, bytes / 1073741824.0, what);
    return finish_oom_reason(o, reason);
}

int finish_too_big(const struct opts *o, const char *what)
{
    char reason[512];
    snprintf(reason, sizeof reason, "out of memory: tensor %s elements is more than the 2^46 elements (256 TiB of f32) "
             "one tensor may hold", what);
    return finish_oom_reason(o, reason);
}

void add_ignored(char *buf, size_t n, const char *what)
{
    if (*buf)
        strncat(buf, ",", n - strlen(buf) - 1);
    strncat(buf, what, n - strlen(buf) - 1);
}

