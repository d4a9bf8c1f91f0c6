/* test_recipe.c - the recipe loader and the factor vocabulary.
 *
 * Valid recipes in tests/recipes/good are loaded and checked field by field;
 * every recipe in tests/recipes/bad must be refused with exactly the text of
 * its .err file (the same files that tests/e2e/recipe_errors.sh feeds to
 * `matrix expand`). Files are found under $top_srcdir (default "."). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../t.h"
#include "plan/recipe.h"
#include "plan/vocab.h"
#include "util.h"

static char *top; /* absolute $top_srcdir */

static void enter(const char *sub)
{
	if (!top) {
		const char *s = getenv("top_srcdir");
		top = realpath(s && *s ? s : ".", NULL);
		if (!top) {
			fprintf(stderr, "cannot resolve top_srcdir: %s\n", strerror(errno));
			exit(1);
		}
	}
	char *dir = xasprintf("%s/tests/recipes/%s", top, sub);
	if (chdir(dir) != 0) {
		fprintf(stderr, "cannot enter '%s': %s\n", dir, strerror(errno));
		exit(1);
	}
	free(dir);
}

/* Load a good recipe; on failure print why and count a failed check. */
static int load(const char *path, struct recipe *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&buf, &len);
	int rc = recipe_load(path, r, err);
	fclose(err);
	if (rc != 0)
		fprintf(stderr, "%s did not load:\n%s", path, buf);
	CHECK_INT(rc, 0);
	CHECK_INT(len, 0);
	free(buf);
	return rc;
}

static long F(const struct recipe *r, const char *name)
{
	return recipe_factor_index(r, name);
}

static void check_levels(const struct recipe *r, const char *name, const char *const *levels, size_t n)
{
	long fi = F(r, name);
	CHECK(fi >= 0);
	if (fi < 0)
		return;
	CHECK_INT(r->factors[fi].nlevels, n);
	for (size_t j = 0; j < n && j < r->factors[fi].nlevels; j++)
		CHECK_STR(r->factors[fi].levels[j], levels[j]);
}

static void check_match(const struct exclude_term *t, size_t factor, const char *bits)
{
	CHECK_INT(t->factor, factor);
	for (size_t i = 0; bits[i]; i++)
		CHECK_INT(t->match[i], bits[i] == '1');
}

static void test_full(void)
{
	struct recipe r;
	if (load("full.yaml", &r))
		return;
	CHECK_STR(r.path, "full.yaml");
	CHECK_STR(r.name, "inference_cube");
	CHECK_STR(r.description, "every combination of the inference settings, over several models");
	CHECK_INT(r.engine, ENGINE_NATIVE);
	CHECK_STR(r.device, "auto");
	CHECK(r.python == NULL);
	CHECK_INT(r.ncommand, 0);
	CHECK(r.measure.warmup_s == 0.2);
	CHECK_INT(r.measure.warmup_iters, 0);
	CHECK(r.measure.min_time_s == 0.5);
	CHECK(r.measure.max_time_s == 5);
	CHECK(r.measure.rel_ci == 0.02);
	CHECK(r.measure.timeout_s == 300);
	CHECK(r.measure.grace_s == 5);

	size_t len;
	char *bytes = read_file("full.yaml", &len);
	CHECK(bytes != NULL);
	CHECK_INT(r.text_len, len);
	CHECK(bytes && memcmp(r.text, bytes, len) == 0);
	CHECK(bytes && r.text_hash == hash64(bytes, len, HASH64_INIT));
	free(bytes);

	static const char *const names[] = {"model", "batch", "precision", "channels_last",
					    "cudnn_benchmark", "compile", "eval", "inference_mode"};
	CHECK_INT(r.nfactors, 8);
	for (size_t i = 0; i < 8 && i < r.nfactors; i++) {
		CHECK_STR(r.factors[i].name, names[i]);
		CHECK(r.factors[i].vocab == vocab_find(names[i]));
	}
	static const char *const models[] = {"resnet50", "resnet18", "bert_base", "bert_large", "mnist_cnn"};
	static const char *const batches[] = {"1", "64"};
	static const char *const precisions[] = {"fp32", "fp16"};
	static const char *const offon[] = {"off", "on"};
	static const char *const compiles[] = {"none", "default"};
	check_levels(&r, "model", models, 5);
	check_levels(&r, "batch", batches, 2);
	check_levels(&r, "precision", precisions, 2);
	check_levels(&r, "channels_last", offon, 2);
	check_levels(&r, "compile", compiles, 2);
	check_levels(&r, "inference_mode", offon, 2);
	/* "  model: [resnet50, resnet18, ..." on line 7 */
	CHECK_INT(r.factors[0].mark.line, 7);
	CHECK_INT(r.factors[0].mark.col, 3);
	CHECK_INT(r.factors[0].level_marks[0].line, 7);
	CHECK_INT(r.factors[0].level_marks[0].col, 11);
	CHECK_INT(r.factors[0].level_marks[1].col, 21);

	CHECK_INT(r.nexcludes, 1);
	if (r.nexcludes == 1) {
		CHECK_INT(r.excludes[0].nterms, 2);
		CHECK_INT(r.excludes[0].mark.line, 16);
		CHECK_INT(r.excludes[0].mark.col, 5);
		check_match(&r.excludes[0].terms[0], 0, "00110");
		check_match(&r.excludes[0].terms[1], 3, "01");
	}
	CHECK_INT(r.order, ORDER_SHUFFLED);
	CHECK_INT(r.seed, 42);
	CHECK_INT(r.repeat, 3);

	CHECK(r.has_baseline);
	static const long base[] = {-1, -1, 0, 0, 0, 0, 0, 0};
	for (size_t i = 0; i < 8; i++)
		CHECK_INT(r.baseline.level[i], base[i]);
	CHECK_INT(r.baseline.mark.line, 20);
	CHECK_INT(r.baseline.mark.col, 11);

	CHECK_STR(r.report.metric, "throughput");
	CHECK_INT(r.report.nscatter, 2);
	CHECK_INT(r.report.scatter[0].x, 0);
	CHECK_INT(r.report.scatter[0].color, 2);
	CHECK_INT(r.report.scatter[1].x, 0);
	CHECK_INT(r.report.scatter[1].color, 3);
	CHECK_INT(r.report.nbars, 2);
	CHECK_INT(r.report.bars[0].x, 1);
	CHECK_INT(r.report.bars[0].group, 2);
	CHECK_INT(r.report.bars[1].x, 5);
	CHECK_INT(r.report.bars[1].group, -1);
	CHECK_INT(r.report.nimprovements, 1);
	const struct report_improvement *ri = &r.report.improvements[0];
	CHECK_INT(ri->factor, 5);
	CHECK_INT(ri->from, 0);
	CHECK_INT(ri->to, 1);
	CHECK_INT(ri->nby, 2);
	CHECK_INT(ri->by[0], 0);
	CHECK_INT(ri->by[1], 1);
	CHECK_INT(r.ncontainers, 0);
	CHECK(r.container_cache == NULL);

	CHECK_INT(recipe_level_index(&r, 3, "on"), 1);
	CHECK_INT(recipe_level_index(&r, 3, "true"), 1);
	CHECK_INT(recipe_level_index(&r, 3, "No"), 0);
	CHECK_INT(recipe_level_index(&r, 0, "resnet101"), -1);
	CHECK_INT(F(&r, "presicion"), -1);
	recipe_free(&r);
	CHECK(r.factors == NULL && r.nfactors == 0 && r.text == NULL);
	recipe_free(&r); /* twice is harmless */
}

static void test_command(void)
{
	struct recipe r;
	if (load("command.yaml", &r))
		return;
	CHECK_STR(r.name, "cpu_command-1.0");
	CHECK_INT(r.engine, ENGINE_COMMAND);
	CHECK(r.device == NULL); /* device is a factor */
	CHECK(r.description == NULL);
	CHECK(r.measure.warmup_s < 0);
	CHECK_INT(r.measure.warmup_iters, 10);
	CHECK(r.measure.min_time_s == 0.25);
	CHECK(r.measure.max_time_s == 120);
	CHECK(r.measure.timeout_s == 3600);
	CHECK(r.measure.grace_s == 0);
	CHECK(r.measure.rel_ci == 0.02);

	static const char *const cmd[] = {"sh", "-c", "echo status=ok > \"$MATRIX_RESULT\"", "--size", "{size}",
					  "--out={result}", "{mode}", "{}", "{not a placeholder}"};
	CHECK_INT(r.ncommand, 9);
	for (size_t i = 0; i < 9 && i < r.ncommand; i++)
		CHECK_STR(r.command[i], cmd[i]);

	CHECK_INT(r.nfactors, 4);
	static const char *const sizes[] = {"small", "1", "2.5"};
	static const char *const modes[] = {"fast"};
	static const char *const ctrs[] = {"cuda13", "cpu"};
	static const char *const devs[] = {"cpu", "cuda"};
	check_levels(&r, "size", sizes, 3);
	check_levels(&r, "mode", modes, 1);
	check_levels(&r, "container", ctrs, 2);
	check_levels(&r, "device", devs, 2);
	/* command engines: free-form factors, only runner factors are known */
	CHECK(r.factors[0].vocab == NULL);
	CHECK(r.factors[1].vocab == NULL);
	CHECK(r.factors[2].vocab == vocab_find("container"));
	CHECK(r.factors[3].vocab == vocab_find("device"));

	CHECK_INT(r.ncontainers, 3);
	CHECK_STR(r.container_cache, "/scratch/matrix-cache"); /* a setting, not an entry */
	CHECK_STR(r.containers[0].name, "cuda13");
	CHECK_STR(r.containers[0].image, "matrix-engine:cuda13");
	CHECK_STR(r.containers[0].runtime, "docker");
	CHECK_STR(r.containers[1].name, "cpu");
	CHECK_STR(r.containers[1].image, "matrix-engine:cpu");
	CHECK(r.containers[1].runtime == NULL);
	CHECK(r.containers[1].context == NULL);
	CHECK_INT(r.containers[1].nargs, 0);
	if (r.ncontainers == 3) {
		CHECK(r.containers[2].image == NULL);
		CHECK_STR(r.containers[2].build, "containers/native");
		CHECK_STR(r.containers[2].context, ".");
		CHECK_INT(r.containers[2].nargs, 2);
		if (r.containers[2].nargs == 2) {
			CHECK_STR(r.containers[2].args[0], "BASE=localhost/debian:bookworm");
			CHECK_STR(r.containers[2].args[1], "JOBS=2");
		}
	}

	CHECK_INT(r.nexcludes, 2);
	if (r.nexcludes == 2) {
		CHECK_INT(r.excludes[0].nterms, 2);
		check_match(&r.excludes[0].terms[0], 2, "01");
		check_match(&r.excludes[0].terms[1], 3, "01");
		CHECK_INT(r.excludes[1].nterms, 3);
		check_match(&r.excludes[1].terms[0], 0, "101");
		check_match(&r.excludes[1].terms[1], 2, "10");
		check_match(&r.excludes[1].terms[2], 3, "10");
	}
	CHECK_INT(r.order, ORDER_GIVEN);
	CHECK_INT(r.seed, 1);
	CHECK_INT(r.repeat, 1);
	CHECK(!r.has_baseline);
	recipe_free(&r);
}

static void test_switches(void)
{
	struct recipe r;
	if (load("switches.yaml", &r))
		return;
	CHECK_INT(r.engine, ENGINE_NATIVE);
	CHECK_STR(r.device, "cpu");
	CHECK_STR(r.python, "/usr/bin/python3");
	CHECK(r.description == NULL); /* `description:` left empty */
	CHECK(r.measure.rel_ci == 0.5);
	CHECK(r.measure.warmup_s == 0);
	CHECK_INT(r.measure.warmup_iters, 0);
	static const char *const models[] = {"resnet18"};
	static const char *const onoff[] = {"on", "off"};
	static const char *const offon[] = {"off", "on"};
	static const char *const on[] = {"on"};
	static const char *const eight[] = {"8"};
	check_levels(&r, "model", models, 1);
	check_levels(&r, "eval", onoff, 2);          /* [true, "false"] */
	check_levels(&r, "channels_last", offon, 2); /* [No, YES] */
	check_levels(&r, "cudnn_benchmark", on, 1);  /* a single scalar: one level */
	check_levels(&r, "batch", eight, 1);
	CHECK(r.has_baseline);
	CHECK_INT(r.baseline.level[F(&r, "eval")], 1);          /* no */
	CHECK_INT(r.baseline.level[F(&r, "channels_last")], 1); /* on */
	CHECK_INT(r.baseline.level[F(&r, "model")], -1);
	CHECK_INT(recipe_level_index(&r, (size_t)F(&r, "eval"), "YES"), 0);

	/* recipe_error_at: tabs before the column are kept, so the caret lines
	 * up under the level on "  model:<TAB>[resnet18]" */
	const struct factor *f = &r.factors[F(&r, "model")];
	CHECK_INT(f->level_marks[0].line, 7);
	CHECK_INT(f->level_marks[0].col, 11);
	char *buf = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&buf, &len);
	recipe_error_at(&r, f->level_marks[0], err, "level '%s' is %d", f->levels[0], 18);
	fclose(err);
	CHECK_STR(buf, "switches.yaml:7:11: level 'resnet18' is 18\n"
		       "    model:\t[resnet18]\n"
		       "          \t ^\n");
	free(buf);
	recipe_free(&r);
}

static void test_engine_factor(void)
{
	struct recipe r;
	if (load("engine_factor.yaml", &r))
		return;
	CHECK_INT(r.engine, ENGINE_FACTOR);
	CHECK_STR(r.device, "auto");
	static const char *const engines[] = {"native", "command", "pytorch"};
	static const char *const models[] = {"resnet18", "bert_tiny"};
	check_levels(&r, "engine", engines, 3);
	check_levels(&r, "model", models, 2);
	CHECK(r.factors[0].vocab == vocab_find("engine"));
	CHECK(r.factors[0].vocab && r.factors[0].vocab->flag == NULL);
	CHECK(r.factors[3].vocab == vocab_find("gpus"));
	CHECK_INT(r.ncommand, 10);
	CHECK_STR(r.report.metric, "step_ms");
	CHECK_INT(r.report.nimprovements, 2);
	if (r.report.nimprovements == 2) {
		CHECK_INT(r.report.improvements[0].factor, 0);
		CHECK_INT(r.report.improvements[0].from, 2);
		CHECK_INT(r.report.improvements[0].to, 0);
		CHECK_INT(r.report.improvements[0].nby, 1);
		CHECK_INT(r.report.improvements[0].by[0], 1);
		CHECK_INT(r.report.improvements[1].factor, 2);
		CHECK_INT(r.report.improvements[1].from, 0);
		CHECK_INT(r.report.improvements[1].to, 1);
		CHECK_INT(r.report.improvements[1].nby, 0);
	}
	recipe_free(&r);
}

static void test_minimal(void)
{
	struct recipe r;
	if (load("minimal.yaml", &r))
		return;
	CHECK_STR(r.name, "minimal");
	CHECK_INT(r.engine, ENGINE_PYTORCH);
	CHECK_STR(r.device, "auto");
	CHECK(r.description == NULL && r.python == NULL);
	CHECK(r.measure.warmup_s == 0.2);
	CHECK_INT(r.measure.warmup_iters, 0);
	CHECK(r.measure.min_time_s == 0.5);
	CHECK(r.measure.max_time_s == 5);
	CHECK(r.measure.rel_ci == 0.02);
	CHECK(r.measure.timeout_s == 300);
	CHECK(r.measure.grace_s == 5);
	CHECK_INT(r.nfactors, 1);
	static const char *const models[] = {"mnist_cnn"};
	check_levels(&r, "model", models, 1);
	CHECK_INT(r.nexcludes, 0);
	CHECK_INT(r.order, ORDER_GIVEN);
	CHECK_INT(r.seed, 1);
	CHECK_INT(r.repeat, 1);
	CHECK(!r.has_baseline);
	CHECK_STR(r.report.metric, "throughput");
	CHECK_INT(r.report.nscatter + r.report.nbars + r.report.nimprovements, 0);
	CHECK_INT(r.ncontainers, 0);
	recipe_free(&r);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A run directory's recipe is read without the checks of settings that
 * would make a new run fail: a measure.timeout no longer than the warm-up
 * and max_time (bad/measure_timeout) made a directory run with it before
 * that check unreadable to report, export and status. */
static void test_run_dir_checks(void)
{
	struct recipe r;
	FILE *err = fopen("/dev/null", "w");
	CHECK_INT(recipe_load("measure_timeout.yaml", &r, err), 0);
	CHECK(r.measure.timeout_s == 2 && r.measure.max_time_s == 2);
	recipe_free(&r);
	CHECK_INT(recipe_load_overrides("measure_timeout.yaml", NULL, 0, &r, err), -1);
	fclose(err);
}

/* Every bad recipe: the load that plans a run (recipe_load_overrides, as
 * expand and run load) fails and prints exactly its .err file. */
static void test_bad(void)
{
	DIR *d = opendir(".");
	CHECK(d != NULL);
	if (!d)
		return;
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 5 && !strcmp(e->d_name + l - 5, ".yaml")) {
			names = xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = xstrdup(e->d_name);
		}
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	CHECK(n >= 30);
	for (size_t i = 0; i < n; i++) {
		char *errname = xasprintf("%.*s.err", (int)(strlen(names[i]) - 5), names[i]);
		char *expected = read_file(errname, NULL);
		if (!expected)
			fprintf(stderr, "%s: missing %s\n", names[i], errname);
		CHECK(expected != NULL);
		char *buf = NULL;
		size_t len = 0;
		FILE *err = open_memstream(&buf, &len);
		struct recipe r;
		int rc = recipe_load_overrides(names[i], NULL, 0, &r, err);
		fclose(err);
		CHECK_INT(rc, -1);
		CHECK(r.text == NULL && r.factors == NULL && r.name == NULL);
		if (expected && strcmp(buf, expected) != 0) {
			fprintf(stderr, "%s: got\n%s--- expected\n%s---\n", names[i], buf, expected);
			CHECK(!"error text differs");
		}
		free(buf);
		free(expected);
		free(errname);
		free(names[i]);
	}
	free(names);

	char *buf = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&buf, &len);
	struct recipe r;
	CHECK_INT(recipe_load("no-such-recipe.yaml", &r, err), -1);
	fclose(err);
	CHECK_STR(buf, "matrix: unable to read 'no-such-recipe.yaml': No such file or directory\n");
	free(buf);
}

static void test_vocab(void)
{
	const char *why;
	const struct vocab_factor *p = vocab_find("precision");
	CHECK(p && p->type == VOCAB_ENUM);
	CHECK_STR(p ? p->flag : NULL, "--precision");
	CHECK(vocab_find("presicion") == NULL);
	CHECK_STR(vocab_suggest("presicion"), "precision");
	CHECK_STR(vocab_suggest("channel_last"), "channels_last");
	CHECK_STR(vocab_suggest("infer"), "inference_mode"); /* a prefix */
	CHECK(vocab_suggest("foo") == NULL);

	CHECK_STR(vocab_check_level(p, "bf16", &why), "bf16");
	CHECK(vocab_check_level(p, "fp64", &why) == NULL);
	CHECK_STR(why, "one of: fp32, tf32, fp16, bf16, int8");

	const struct vocab_factor *cl = vocab_find("channels_last");
	CHECK(cl && cl->type == VOCAB_SWITCH);
	CHECK_STR(cl ? cl->flag : NULL, "--channels-last");
	static const char *const on[] = {"on", "ON", "true", "True", "yes", "YES"};
	static const char *const off[] = {"off", "Off", "false", "FALSE", "no", "No"};
	for (size_t i = 0; i < ARRAY_SIZE(on); i++) {
		CHECK_STR(vocab_check_level(cl, on[i], &why), "on");
		CHECK_STR(vocab_check_level(cl, off[i], &why), "off");
	}
	CHECK(vocab_check_level(cl, "1", &why) == NULL);
	CHECK_STR(why, "one of: off, on");

	const struct vocab_factor *b = vocab_find("batch");
	CHECK(b && b->type == VOCAB_INT);
	CHECK_STR(vocab_check_level(b, "64", &why), "64");
	CHECK(vocab_check_level(b, "0", &why) == NULL);
	CHECK(vocab_check_level(b, "-1", &why) == NULL);
	CHECK(vocab_check_level(b, "064", &why) == NULL);
	CHECK(vocab_check_level(b, "1.5", &why) == NULL);
	CHECK(vocab_check_level(b, "", &why) == NULL);
	CHECK_STR(why, "a positive integer");
	CHECK_STR(vocab_find("seq_len")->flag, "--seq-len");
	CHECK_STR(vocab_find("cudnn_benchmark")->flag, "--cudnn-benchmark");
	CHECK_STR(vocab_find("inference_mode")->flag, "--inference-mode");
	CHECK(vocab_find("container")->flag == NULL);
	CHECK(vocab_find("engine")->flag == NULL);
	CHECK_STR(vocab_check_level(vocab_find("engine"), "pytorch", &why), "pytorch");
	CHECK(vocab_check_level(vocab_find("engine"), "torch", &why) == NULL);
	CHECK_STR(vocab_check_level(vocab_find("compile"), "max-autotune", &why), "max-autotune");
	CHECK_STR(vocab_check_level(vocab_find("model"), "bert_tiny", &why), "bert_tiny");

	size_t n = 0;
	for (const struct vocab_factor *f = vocab_factors; f->name; f++)
		n++;
	CHECK_INT(n, 20);
	CHECK_STR(vocab_find("data")->flag, "--data");
	CHECK_STR(vocab_check_level(vocab_find("data"), "/data/mnist", &why), "/data/mnist");
	CHECK(vocab_check_level(vocab_find("data"), "", &why) == NULL);

	static const char *const cands[] = {"given", "shuffled"};
	CHECK_STR(vocab_closest("shuffle", cands, 2), "shuffled");
	CHECK_STR(vocab_closest("gvien", cands, 2), "given"); /* a swap counts 1 */
	CHECK(vocab_closest("random", cands, 2) == NULL);
	static const char *const fp[] = {"fp32", "tf32", "fp16", "bf16"};
	CHECK(vocab_closest("fp64", fp, 4) == NULL); /* 2 edits in 4 letters: not close */
	CHECK_STR(vocab_closest("fp61", fp, 4), "fp16");
}

static void test_placeholder(void)
{
	size_t len;
	const char *s = "--x={model}-{batch}", *p = recipe_placeholder(s, &len);
	CHECK(p == s + 4);
	CHECK_INT(len, 7);
	p = recipe_placeholder(p + len, &len);
	CHECK(p == s + 12);
	CHECK_INT(len, 7);
	CHECK(recipe_placeholder(p + len, &len) == NULL);
	CHECK(recipe_placeholder("{} {\"a\": 1} {a b}", &len) == NULL);
	p = recipe_placeholder("{{seq_len}}", &len);
	CHECK(p && !strncmp(p, "{seq_len}", len) && len == 9);
}

int main(void)
{
	test_vocab();
	test_placeholder();
	enter("good");
	test_full();
	test_command();
	test_switches();
	test_engine_factor();
	test_minimal();
	enter("bad");
	test_bad();
	test_run_dir_checks();
	free(top);
	return T_DONE();
}
