/* flags.c - matrix-engine's options as one table (flags.h). */
#include "config.h"
#include "flags.h"
#include "check.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const lv_task[] = {"infer", "train", NULL};
const char *const lv_prec[] = {"fp32", "tf32", "fp16", "bf16", "int8", NULL};
const char *const lv_runtime[] = {"eager", "inductor", "onnxruntime", "tensorrt", NULL};
const char *const lv_quant[] = {"dynamic", "static", NULL};
const char *const lv_onoff[] = {"off", "on", NULL};
const char *const lv_compile[] = {"none", "default", "reduce-overhead", "max-autotune", NULL};
const char *const lv_device[] = {"auto", "cpu", "cuda", NULL};

enum flag_kind { F_INT, F_LEVEL, F_STR, F_SECONDS, F_WARMUP, F_DOUBLE, F_BOOL };

struct flag {
    const char *name;
    int kind;
    size_t off;
    const char *const *levels;
    const char *arg, *help;
};

#define O(f) offsetof(struct opts, f)
static const struct flag flags[] = {
    {"model", F_STR, O(pt.model), NULL, "NAME", "model (--list-models); default mnist_cnn"},
    {"task", F_LEVEL, O(pt.train), lv_task, "infer|train", "forward only, or forward + backward + optimizer step; default infer"},
    {"batch", F_INT, O(pt.batch), NULL, "N", "samples per step; default 64"},
    {"seq-len", F_INT, O(pt.seq_len), NULL, "N", "tokens per sample (BERT; other models list it in ignored); default 128"},
    {"image-size", F_INT, O(pt.image_size), NULL, "N", "image side in pixels (ResNet; other models list it in ignored); default 224"},
    {"precision", F_LEVEL, O(pt.precision), lv_prec, "fp32|tf32|fp16|bf16|int8", "arithmetic; default fp32 (tf32 is fp32 on cpu, listed in ignored; int8: unsupported)"},
    {"runtime", F_LEVEL, O(pt.runtime), lv_runtime, "eager|inductor|onnxruntime|tensorrt", "the PyTorch engine's runtimes; here eager only, the others are unsupported"},
    {"quant", F_LEVEL, O(pt.quant), lv_quant, "dynamic|static", "int8 quantization (PyTorch engine); listed in ignored"},
    {"channels-last", F_LEVEL, O(pt.channels_last), lv_onoff, "off|on", "NHWC activations for convolutional models; default off"},
    {"cudnn-benchmark", F_LEVEL, O(pt.cudnn_benchmark), lv_onoff, "off|on", "timed algorithm search (CUDA only); default off"},
    {"eval", F_LEVEL, O(pt.eval), lv_onoff, "off|on", "BatchNorm running statistics, dropout off; default off"},
    {"inference-mode", F_LEVEL, O(pt.inference_mode), lv_onoff, "off|on", "infer: on: every buffer reused once dead; off: what a backward would read kept (autograd on); default off"},
    {"compile", F_LEVEL, O(pt.compile), lv_compile, "none|default|reduce-overhead|max-autotune", "graph passes: BN folding, epilogue fusion; default none"},
    {"syncbn", F_LEVEL, O(pt.syncbn), lv_onoff, "off|on", "BatchNorm statistics across GPUs; default off"},
    {"ema", F_LEVEL, O(pt.ema), lv_onoff, "off|on", "exponential moving average of the weights (train); default off"},
    {"gpus", F_INT, O(pt.gpus), NULL, "N", "data-parallel GPUs; default 1"},
    {"threads", F_INT, O(pt.threads), NULL, "N", "CPU threads, 1 to 256 on the cpu; default: the online CPUs"},
    {"device", F_LEVEL, O(pt.device), lv_device, "auto|cpu|cuda", "backend; default auto (cuda when built with it and a GPU is present)"},
    {"plan-cache", F_STR, O(pt.plan_cache), NULL, "DIR|off", "where the CUDA backend keeps the choices it searched for (cuDNN / cuBLASLt algorithms) for later runs, one file per GPU and library versions; default $MATRIX_PLAN_CACHE, else $XDG_CACHE_HOME/matrix, else ~/.cache/matrix; off: search every time (cpu: nothing to search, listed in ignored)"},
    {"data", F_STR, O(data), NULL, "synthetic|DIR", "inputs: synthetic (generated once, the default) or DIR with MNIST's train-images-idx3-ubyte and train-labels-idx1-ubyte (or .gz): read at set-up; shuffled, converted, normalised, batched and copied to the device inside every timed step (mnist_cnn)"},
    {"profile", F_STR, O(profile), NULL, "FILE", "after the timed steps (not perturbed), 20 more steps op by op with each op timed (cpu: host clock after a sync; cuda: CUDA events): FILE gets op,kind,calls,total_ms,mean_ms,pct_step,mem_bytes per op"},
    {"seed", F_INT, O(seed), NULL, "N", "seed of weights, inputs and dropout; default 1"},
    {"warmup", F_WARMUP, O(m), NULL, "DUR|N", "warm-up: a duration (0.2s, 150ms) or a number of steps; default 0.2s"},
    {"min-time", F_SECONDS, O(m.min_time), NULL, "DUR", "time steps at least this long; default 0.5s (or --max-time when that is shorter)"},
    {"max-time", F_SECONDS, O(m.max_time), NULL, "DUR", "stop timing after this long; default 5s (or --min-time when that is longer); below --min-time: an error"},
    {"rel-ci", F_DOUBLE, O(m.rel_ci), NULL, "X", "stop when the 95% CI half-width of the median is within X of it; default 0.02"},
    {"lr", F_DOUBLE, O(lr), NULL, "X", "learning rate of the optimizer, > 0 (train; infer lists it in ignored); default the model's (SGD 0.01, AdamW 1e-4)"},
    {"steps", F_INT, O(steps), NULL, "N", "exactly N timed steps, no CI rule (--min-time, --max-time and --rel-ci then change nothing, said on stderr)"},
    {"result", F_STR, O(result), NULL, "FILE", "write the result record (key=value lines) to FILE"},
    {"weights", F_STR, O(weights), NULL, "FILE", "load parameters from a weights file (engine/weights.h)"},
    {"save-weights", F_STR, O(save_weights), NULL, "FILE", "save parameters and buffers after the run"},
    {"dump", F_STR, O(dump), NULL, "FILE", "reference checks: run --steps steps (default 1), dump input, output, gradients, losses, masks (nothing measured: not with --result, --profile, --save-weights)"},
    {"list-models", F_BOOL, O(list_models), NULL, NULL, "print the models and exit"},
    {"help", F_BOOL, O(help), NULL, NULL, "print this help and exit"},
    {"version", F_BOOL, O(version), NULL, NULL, "print the version and the build configuration (CUDA, cuDNN, NCCL, BLAS, MPI) and exit"},
};
#define NFLAGS ((int)(sizeof flags / sizeof flags[0]))
_Static_assert(sizeof flags / sizeof flags[0] <= 64, "opts.given holds a bit per flag");

int flags_given(const struct opts *o, const char *name)
{
    for (int k = 0; k < NFLAGS; k++)
        if (strcmp(flags[k].name, name) == 0)
            return (o->given >> k) & 1;
    BUG("flags_given: no flag --%s", name);
}

void flags_usage(FILE *f)
{
    fprintf(f, "usage: matrix-engine [--model NAME] [--task infer|train] [--batch N] ... --result FILE\n\n"
               "Runs one benchmark point of the native engine and writes its result record.\n"
               "A flag takes its value as the next argument or joined to it: --batch 8 and\n"
               "--batch=8 are the same.\n\n");
    for (int i = 0; i < NFLAGS; i++) {
        char left[80];
        snprintf(left, sizeof left, "--%s%s%s", flags[i].name, flags[i].arg ? " " : "",
                 flags[i].arg ? flags[i].arg : "");
        fprintf(f, "  %-34s %s\n", left, flags[i].help);
    }
    fprintf(f, "\nExit status: 0 measured, 1 failed (status=oom when out of memory), 2 bad flag,\n"
               "3 unsupported combination (status=unsupported with a reason).\n");
}

/* Seconds in v ("0.5s", "150ms", "2", "1m"); -1 when malformed. */
static double parse_seconds(const char *v, int *bare)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || errno || !isfinite(x) || x < 0)
        return -1;
    *bare = *end == 0;
    if (*end == 0 || strcmp(end, "s") == 0)
        return x;
    if (strcmp(end, "ms") == 0)
        return x / 1e3;
    if (strcmp(end, "us") == 0)
        return x / 1e6;
    if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        return isfinite(x * 60) ? x * 60 : -1; /* 1e308m is no duration */
    return -1;
}

/* An integer flag's value v into dst (--seed: a long, 0 and up; the others
 * an int, 1 and up; at most 2^30). Returns 0, or -1 after saying what is
 * wrong: not an integer, or out of range. */
static int parse_int(const struct flag *f, const char *v, char *dst)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    long lo = strcmp(f->name, "seed") ? 1 : 0;
    if (*v == 0 || *end || (errno && errno != ERANGE)) {
        fprintf(stderr, "matrix-engine: --%s: '%s' is not %s integer\n", f->name, v,
                lo ? "a positive" : "a non-negative");
        return -1;
    }
    if (errno == ERANGE || x < lo || x > 1 << 30) {
        fprintf(stderr, "matrix-engine: --%s: %s is out of range (%ld to %d)\n", f->name, v, lo, 1 << 30);
        return -1;
    }
    if (lo == 0)
        *(long *)dst = x;
    else
        *(int *)dst = x;
    return 0;
}

/* The value v of flag f into dst (a field of o). Returns 0, or -1 after
 * saying what is wrong. */
static int parse_value(const struct flag *f, const char *v, struct opts *o, char *dst)
{
    char *end;
    int bare;
    switch (f->kind) {
    case F_INT:
        if (parse_int(f, v, dst))
            return -1;
        break;
    case F_LEVEL: {
        int k;
        for (k = 0; f->levels[k]; k++)
            if (strcmp(v, f->levels[k]) == 0)
                break;
        if (!f->levels[k]) {
            fprintf(stderr, "matrix-engine: --%s: unknown level '%s' (levels:", f->name, v);
            for (k = 0; f->levels[k]; k++)
                fprintf(stderr, " %s", f->levels[k]);
            fprintf(stderr, ")\n");
            return -1;
        }
        *(int *)dst = k;
        break;
    }
    case F_STR:
        *(const char **)dst = v;
        break;
    case F_SECONDS: {
        double s = parse_seconds(v, &bare);
        if (s < 0) {
            fprintf(stderr, "matrix-engine: --%s: '%s' is not a duration (e.g. 0.5s, 200ms)\n", f->name, v);
            return -1;
        }
        *(double *)dst = s;
        break;
    }
    case F_WARMUP: {
        double s = parse_seconds(v, &bare);
        if (s < 0) {
            fprintf(stderr, "matrix-engine: --warmup: '%s' is neither a duration (0.2s) nor a step count (10)\n", v);
            return -1;
        }
        if (bare) {
            if (s != floor(s) || s > 1 << 30) { /* (int)1e12 is undefined: it warmed up 0.2 s */
                fprintf(stderr, "matrix-engine: --warmup: '%s' is not a whole number of steps (0 to %d)\n", v, 1 << 30);
                return -1;
            }
            o->m.warmup_steps = (int)s;
        } else {
            o->m.warmup_steps = -1;
            o->m.warmup_s = s;
        }
        break;
    }
    case F_DOUBLE: {
        errno = 0;
        double x = strtod(v, &end);
        if (*v == 0 || *end || errno || !isfinite(x) || x < 0) {
            fprintf(stderr, "matrix-engine: --%s: '%s' is not a finite non-negative number\n", f->name, v);
            return -1;
        }
        if (x == 0 && strcmp(f->name, "lr") == 0) { /* 0 took the model's rate: a step that learns nothing is no rate */
            fprintf(stderr, "matrix-engine: --lr: '%s' is not a positive learning rate\n", v);
            return -1;
        }
        *(double *)dst = x;
        break;
    }
    }
    return 0;
}

/* The distance between a and b in single-character edits, at most 64
 * characters each (longer: SIZE_MAX), for the did-you-mean of an unknown flag
 * or model. */
size_t flags_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), prev[65], cur[65];
    if (la > 64 || lb > 64)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]), del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (lb + 1) * sizeof prev[0]);
    }
    return prev[lb];
}

/* The flag whose name is within two edits of name[0..len) (one for short
 * names), or that name begins; NULL when none is. */
static const struct flag *flag_near(const char *name, size_t len)
{
    char w[65];
    size_t best_d = (size_t)-1;
    const struct flag *best = NULL, *prefix = NULL;
    if (len == 0 || len >= sizeof w)
        return NULL;
    memcpy(w, name, len);
    w[len] = 0;
    for (int k = 0; k < NFLAGS; k++) {
        size_t d = flags_edit_distance(w, flags[k].name);
        if ((d == 1 || (d == 2 && len >= 6)) && d < best_d)
            best_d = d, best = &flags[k];
        if (!prefix && len >= 2 && strncmp(flags[k].name, w, len) == 0)
            prefix = &flags[k];
    }
    return best ? best : prefix;
}

/* argv into o. A flag's value is the next argument (--batch 8) or joined
 * to it by '=' (--batch=8), the two read alike; a flag without a value
 * (--help) refuses one. */
static int parse_flags(int argc, char **argv, struct opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *eq = NULL;
        const struct flag *f = NULL;
        size_t len = 0;
        if (strncmp(a, "--", 2) == 0) {
            eq = strchr(a + 2, '=');
            len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            for (int k = 0; k < NFLAGS; k++)
                if (strlen(flags[k].name) == len && strncmp(a + 2, flags[k].name, len) == 0)
                    f = &flags[k];
        }
        if (!f) {
            const struct flag *near = len ? flag_near(a + 2, len) : NULL;
            if (near)
                fprintf(stderr, "matrix-engine: unknown flag '%s' (did you mean '--%s'?)\n", a, near->name);
            else
                fprintf(stderr, "matrix-engine: unknown flag '%s'\n", a);
            return -1;
        }
        char *dst = (char *)o + f->off;
        o->given |= 1ULL << (f - flags);
        if (f->kind == F_BOOL) {
            if (eq) {
                fprintf(stderr, "matrix-engine: flag '--%s' takes no value (got '%s')\n", f->name, a);
                return -1;
            }
            *(int *)dst = 1;
            continue;
        }
        if (!eq && i + 1 >= argc) {
            fprintf(stderr, "matrix-engine: flag '--%s' needs a value\n", f->name);
            return -1;
        }
        if (parse_value(f, eq ? eq + 1 : argv[++i], o, dst) < 0)
            return -1;
    }
    return 0;
}

void flags_defaults(struct opts *o)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    memset(o, 0, sizeof *o);
    o->pt.model = "mnist_cnn";
    o->pt.quant = -1; /* not given */
    o->pt.batch = 64;
    o->pt.seq_len = 128;
    o->pt.gpus = 1;
    o->pt.threads = online > 0 ? (int)online : 1;
    o->seed = 1;
    o->m = (measure_cfg){.warmup_s = 0.2, .warmup_steps = -1, .min_time = 0.5,
                         .max_time = 5.0, .rel_ci = 0.02, .min_samples = 10};
}

int flags_parse(int argc, char **argv, struct opts *o)
{
    if (parse_flags(argc, argv, o))
        return -1;
    if (o->m.max_time < o->m.min_time) { /* a default yields to the flag given; both given: refused, as in a recipe */
        int gmin = flags_given(o, "min-time"), gmax = flags_given(o, "max-time");
        if (gmin && gmax) {
            fprintf(stderr, "matrix-engine: --max-time: %gs is below --min-time %gs\n", o->m.max_time, o->m.min_time);
            return -1;
        }
        if (gmax)
            o->m.min_time = o->m.max_time;
        else
            o->m.max_time = o->m.min_time;
    }
    /* --dump runs the reference steps and writes the dump alone: the others
     * were accepted, and nothing was written (exit 0) */
    static const char *const no_dump[] = {"result", "profile", "save-weights"};
    for (size_t i = 0; o->dump && i < sizeof no_dump / sizeof no_dump[0]; i++)
        if (flags_given(o, no_dump[i])) {
            fprintf(stderr, "matrix-engine: --%s: nothing is measured with --dump (it runs the reference steps and "
                    "writes the dump only): run one without the other\n", no_dump[i]);
            return -1;
        }
    o->m.steps = o->steps;
    if (o->pt.plan_cache && !*o->pt.plan_cache) {
        fprintf(stderr, "matrix-engine: --plan-cache: an empty name (expected a directory or off)\n");
        return -1;
    }
    if (o->data && strcmp(o->data, "synthetic") == 0)
        o->data = NULL;
    else if (o->data && !*o->data) {
        fprintf(stderr, "matrix-engine: --data: an empty name (expected synthetic or a directory)\n");
        return -1;
    }
    o->pt.seed = o->seed;
    return 0;
}
