/* vocab.c - the factor vocabulary of DESIGN.md ("Factor vocabulary"): names,
 * level types, levels and the engine flag of every factor that the native and
 * PyTorch engines understand, plus the runner-level factors. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util.h"
#include "vocab.h"

static const char *const models[] = {
	"mnist_cnn", "resnet18", "resnet50", "bert_base", "bert_large", "resnet_tiny", "bert_tiny", NULL,
};
static const char *const tasks[] = {"train", "infer", NULL};
static const char *const precisions[] = {"fp32", "tf32", "fp16", "bf16", "int8", NULL};
static const char *const runtimes[] = {"eager", "inductor", "onnxruntime", "tensorrt", NULL};
static const char *const quants[] = {"dynamic", "static", NULL};
static const char *const compiles[] = {"none", "default", "reduce-overhead", "max-autotune", NULL};
static const char *const devices[] = {"auto", "cpu", "cuda", NULL};
static const char *const engines[] = {"native", "pytorch", "command", NULL};
static const char *const switches[] = {"off", "on", NULL};

#define SWITCH_EXPECTED "one of: off, on"
#define INT_EXPECTED "a positive integer"

const struct vocab_factor vocab_factors[] = {
	{"model", "--model", VOCAB_ENUM, models,
	 "one of: mnist_cnn, resnet18, resnet50, bert_base, bert_large, resnet_tiny, bert_tiny"},
	{"task", "--task", VOCAB_ENUM, tasks, "one of: train, infer"},
	{"batch", "--batch", VOCAB_INT, NULL, INT_EXPECTED},
	{"seq_len", "--seq-len", VOCAB_INT, NULL, INT_EXPECTED},
	{"precision", "--precision", VOCAB_ENUM, precisions, "one of: fp32, tf32, fp16, bf16, int8"},
	{"runtime", "--runtime", VOCAB_ENUM, runtimes, "one of: eager, inductor, onnxruntime, tensorrt"},
	{"quant", "--quant", VOCAB_ENUM, quants, "one of: dynamic, static"},
	{"channels_last", "--channels-last", VOCAB_SWITCH, switches, SWITCH_EXPECTED},
	{"cudnn_benchmark", "--cudnn-benchmark", VOCAB_SWITCH, switches, SWITCH_EXPECTED},
	{"eval", "--eval", VOCAB_SWITCH, switches, SWITCH_EXPECTED},
	{"inference_mode", "--inference-mode", VOCAB_SWITCH, switches, SWITCH_EXPECTED},
	{"compile", "--compile", VOCAB_ENUM, compiles, "one of: none, default, reduce-overhead, max-autotune"},
	{"syncbn", "--syncbn", VOCAB_SWITCH, switches, SWITCH_EXPECTED},
	{"ema", "--ema", VOCAB_SWITCH, switches, SWITCH_EXPECTED},
	{"gpus", "--gpus", VOCAB_INT, NULL, INT_EXPECTED},
	{"threads", "--threads", VOCAB_INT, NULL, "a positive integer, or all (this machine's cores)"},
	{"device", "--device", VOCAB_ENUM, devices, "one of: auto, cpu, cuda"},
	/* a directory level is made absolute and checked when the argv is built (argv.c) */
	{"data", "--data", VOCAB_NAME, NULL, "synthetic, or a directory with MNIST's IDX files"},
	{"container", NULL, VOCAB_NAME, NULL, "a name from 'containers'"},
	{"engine", NULL, VOCAB_NAME, engines, "one of: native, pytorch, command"},
	{NULL, NULL, 0, NULL, NULL},
};

const struct vocab_factor *vocab_find(const char *name)
{
	for (const struct vocab_factor *f = vocab_factors; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

int vocab_is_workload(const char *name)
{
	static const char *const workload[] = {"model", "task", "batch", "seq_len"};
	for (size_t i = 0; i < ARRAY_SIZE(workload); i++)
		if (!strcmp(name, workload[i]))
			return 1;
	return 0;
}

/* Whether a and b differ by one swap of adjacent characters ("fp61", "fp16"). */
static int transposed(const char *a, const char *b)
{
	size_t n = strlen(a), i = 0;
	if (n != strlen(b))
		return 0;
	while (i < n && a[i] == b[i])
		i++;
	return i + 1 < n && a[i] == b[i + 1] && a[i + 1] == b[i] && !strcmp(a + i + 2, b + i + 2);
}

const char *vocab_misspelt(const char *word, const char *const *cands, size_t n)
{
	size_t wl = strlen(word), best_d = (size_t)-1;
	const char *best = NULL;
	for (size_t i = 0; i < n; i++) {
		size_t d = transposed(word, cands[i]) ? 1 : edit_distance(word, cands[i]);
		int close = d == 1 ? wl >= 2 : d == 2 && 3 * d <= wl;
		if (close && d < best_d) {
			best_d = d;
			best = cands[i];
		}
	}
	return best;
}

/* Words people write for a level spelt otherwise here, and the level they
 * mean: 'gpu' is one letter from 'cpu', which a hint by spelling names. */
static const char *const synonyms[][2] = {
	{"gpu", "cuda"},       {"half", "fp16"},       {"float16", "fp16"}, {"float32", "fp32"},
	{"float", "fp32"},     {"bfloat16", "bf16"},   {"training", "train"}, {"inference", "infer"},
	{"eager", "none"},
};

const char *vocab_closest(const char *word, const char *const *cands, size_t n)
{
	for (size_t s = 0; s < ARRAY_SIZE(synonyms); s++)
		if (!strcasecmp(word, synonyms[s][0]))
			for (size_t i = 0; i < n; i++)
				if (!strcmp(cands[i], synonyms[s][1]))
					return cands[i];
	const char *best = vocab_misspelt(word, cands, n);
	for (size_t i = 0; !best && i < n; i++)
		if (strlen(word) >= 2 && strncmp(cands[i], word, strlen(word)) == 0)
			best = cands[i];
	return best;
}

const char *vocab_closest_metric(const char *word, const char *const *cands, size_t n)
{
	const char *near = vocab_closest(word, cands, n);
	for (size_t i = 0, best = (size_t)-1; !near && i < n; i++) {
		size_t d = edit_distance(word, cands[i]);
		if (d < best && 3 * d <= strlen(cands[i]) && 3 * d <= strlen(word) + 3)
			best = d, near = cands[i];
	}
	return near;
}

const char *vocab_suggest(const char *name)
{
	const char *names[64];
	size_t n = 0;
	for (const struct vocab_factor *f = vocab_factors; f->name && n < ARRAY_SIZE(names); f++)
		names[n++] = f->name;
	return vocab_closest(name, names, n);
}

/* A positive decimal integer without sign or leading zeros, at most 2^30
 * (the engines' bound: a larger batch or sequence is refused by every point,
 * so it is said here, before anything runs). Else 0, and *why names the
 * leading zeros or the bound where that is the trouble (else it is left). */
static int is_int_level(const char *s, const char **why)
{
	size_t n = strlen(s);
	if (!n || strspn(s, "0123456789") != n || strspn(s, "0") == n)
		return 0;
	if (s[0] == '0') {
		*why = "a positive integer without leading zeros";
		return 0;
	}
	if (n > 10 || strtoll(s, NULL, 10) > (1LL << 30)) {
		*why = "a positive integer up to 1073741824";
		return 0;
	}
	return 1;
}

const char *vocab_check_level(const struct vocab_factor *f, const char *level, const char **why)
{
	static const char *const on[] = {"on", "true", "yes"};
	static const char *const off[] = {"off", "false", "no"};

	*why = f->expected;
	switch (f->type) {
	case VOCAB_SWITCH:
		for (size_t i = 0; i < ARRAY_SIZE(on); i++) {
			if (strcasecmp(level, on[i]) == 0)
				return "on";
			if (strcasecmp(level, off[i]) == 0)
				return "off";
		}
		return NULL;
	case VOCAB_INT:
		if (!strcmp(f->name, "threads") && !strcasecmp(level, "all")) {
			/* the cores of the machine that expands the recipe, as a number */
			static char cores[24];
			long n = sysconf(_SC_NPROCESSORS_ONLN);
			snprintf(cores, sizeof(cores), "%ld", n > 0 ? n : 1L);
			return cores;
		}
		return is_int_level(level, why) ? level : NULL;
	case VOCAB_ENUM:
	case VOCAB_NAME:
		if (!f->levels)
			return *level ? level : NULL;
		for (const char *const *l = f->levels; *l; l++)
			if (strcmp(*l, level) == 0)
				return *l;
		return NULL;
	}
	BUG("vocab type %d", (int)f->type);
}
