/* test_flags.c - matrix-engine's command line (engine/flags.c): every flag
 * of --help read alike as --NAME VALUE and --NAME=VALUE, the same message
 * for a bad value in either form, a flag without a value refusing one, and
 * an unknown flag named with a suggestion (issue 21). */
#include "config.h"
#include "t.h"

#include "../../engine/flags.h"

#include <stdlib.h>
#include <unistd.h>

/* stderr of the last parse */
static char err_text[4096];

/* flags_parse on argv[0..argc) with stderr captured in err_text. */
static int parse(int argc, char **argv, struct opts *o)
{
	fflush(stderr);
	FILE *tmp = tmpfile();
	int saved = dup(2);
	if (!tmp || saved < 0)
		abort();
	dup2(fileno(tmp), 2);
	flags_defaults(o);
	int rc = flags_parse(argc, argv, o);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	size_t n = fread(err_text, 1, sizeof err_text - 1, tmp);
	err_text[n] = 0;
	fclose(tmp);
	return rc;
}

/* The strings that o points into argv compared, then cleared, so that two
 * parses of the same flags compare equal with memcmp. */
static int same_opts(struct opts *a, struct opts *b)
{
	const char **sa[] = {&a->pt.model, &a->pt.plan_cache, &a->result, &a->weights,
			     &a->save_weights, &a->dump, &a->data, &a->profile};
	const char **sb[] = {&b->pt.model, &b->pt.plan_cache, &b->result, &b->weights,
			     &b->save_weights, &b->dump, &b->data, &b->profile};
	for (size_t i = 0; i < sizeof sa / sizeof sa[0]; i++) {
		if (!*sa[i] != !*sb[i] || (*sa[i] && strcmp(*sa[i], *sb[i])))
			return 0;
		*sa[i] = *sb[i] = NULL;
	}
	return memcmp(a, b, sizeof *a) == 0;
}

/* A valid value for a flag whose --help argument is arg; NULL when the
 * test does not know that kind of argument (a new kind: teach it here). */
static const char *sample_value(const char *arg)
{
	static const char *const known[][2] = {
		{"N", "7"}, {"DUR", "150ms"}, {"DUR|N", "3"}, {"X", "0.25"}, {"FILE", "some/file"},
		{"NAME", "resnet18"}, {"DIR|off", "off"}, {"synthetic|DIR", "some/dir"},
	};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(arg, known[i][0]) == 0)
			return known[i][1];
	const char *bar = strrchr(arg, '|'); /* levels: the last one */
	return bar && bar[1] >= 'a' && bar[1] <= 'z' ? bar + 1 : NULL;
}

int main(void)
{
	char *help = NULL;
	size_t help_len = 0;
	FILE *f = open_memstream(&help, &help_len);
	flags_usage(f);
	fclose(f);

	int nvalued = 0, nbool = 0;
	struct opts a, b;
	for (char *line = help; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char name[64], arg[128];
		int fields = strncmp(line, "  --", 4) == 0 ? sscanf(line + 2, "%63s %127s", name, arg) : 0;
		if (fields >= 1) {
			/* a flag with a value when its second word is the value's name, not help text */
			int valued = fields == 2 && (arg[0] < 'a' || arg[0] > 'z' || strchr(arg, '|'));
			if (valued) {
				const char *v = sample_value(arg);
				CHECK(v != NULL);
				if (!v)
					fprintf(stderr, "no sample value for %s %s\n", name, arg);
				char joined[256];
				snprintf(joined, sizeof joined, "%s=%s", name, v ? v : "");
				char *apart[] = {"matrix-engine", name, (char *)v, NULL};
				char *together[] = {"matrix-engine", joined, NULL};
				CHECK_INT(parse(3, apart, &a), 0);
				CHECK_INT(parse(2, together, &b), 0);
				CHECK(same_opts(&a, &b));
				/* a bad value: the same verdict and message in both forms */
				char bad_joined[256], bad_apart_err[4096];
				snprintf(bad_joined, sizeof bad_joined, "%s=-x-", name);
				char *bad_apart[] = {"matrix-engine", name, "-x-", NULL};
				char *bad_together[] = {"matrix-engine", bad_joined, NULL};
				int rc_apart = parse(3, bad_apart, &a);
				memcpy(bad_apart_err, err_text, sizeof err_text);
				CHECK_INT(parse(2, bad_together, &b), rc_apart);
				CHECK_STR(err_text, bad_apart_err);
				nvalued++;
			} else {
				char joined[128];
				snprintf(joined, sizeof joined, "%s=on", name);
				char *alone[] = {"matrix-engine", name, NULL};
				char *with_value[] = {"matrix-engine", joined, NULL};
				CHECK_INT(parse(2, alone, &a), 0);
				CHECK_INT(parse(2, with_value, &b), -1);
				char want[256];
				snprintf(want, sizeof want, "matrix-engine: flag '%s' takes no value (got '%s')\n", name, joined);
				CHECK_STR(err_text, want);
				nbool++;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	CHECK(nvalued >= 30);
	CHECK_INT(nbool, 3);

	/* the value goes where the apart form puts it */
	char *batch[] = {"matrix-engine", "--batch=32", "--warmup=5", "--min-time=150ms", "--precision=bf16", NULL};
	CHECK_INT(parse(5, batch, &a), 0);
	CHECK_INT(a.pt.batch, 32);
	CHECK_INT(a.m.warmup_steps, 5);
	CHECK(a.m.min_time == 0.15);
	CHECK_STR(lv_prec[a.pt.precision], "bf16");
	/* only the first '=' splits; an empty value is a value */
	char *model[] = {"matrix-engine", "--result=a=b", "--batch=", NULL};
	CHECK_INT(parse(2, model, &a), 0);
	CHECK_STR(a.result, "a=b");
	CHECK_INT(parse(3, model, &a), -1);
	CHECK_STR(err_text, "matrix-engine: --batch: '' is not a positive integer\n");
	/* a number out of range says so (it said "not a positive integer") */
	char *huge[] = {"matrix-engine", "--batch=99999999999", "--seed=-1", NULL};
	CHECK_INT(parse(2, huge, &a), -1);
	CHECK_STR(err_text, "matrix-engine: --batch: 99999999999 is out of range (1 to 1073741824)\n");
	huge[1] = "--seed=-1";
	CHECK_INT(parse(2, huge, &a), -1);
	CHECK_STR(err_text, "matrix-engine: --seed: -1 is out of range (0 to 1073741824)\n");
	char *missing[] = {"matrix-engine", "--batch", NULL};
	CHECK_INT(parse(2, missing, &a), -1);
	CHECK_STR(err_text, "matrix-engine: flag '--batch' needs a value\n");
	/* unknown flags, with a suggestion when one is close */
	char *typo[] = {"matrix-engine", "--bach=3", NULL};
	CHECK_INT(parse(2, typo, &a), -1);
	CHECK_STR(err_text, "matrix-engine: unknown flag '--bach=3' (did you mean '--batch'?)\n");
	char *typo2[] = {"matrix-engine", "--min-tme", "1s", NULL};
	CHECK_INT(parse(3, typo2, &a), -1);
	CHECK_STR(err_text, "matrix-engine: unknown flag '--min-tme' (did you mean '--min-time'?)\n");
	char *far[] = {"matrix-engine", "--bogus=1", NULL};
	CHECK_INT(parse(2, far, &a), -1);
	CHECK_STR(err_text, "matrix-engine: unknown flag '--bogus=1'\n");
	char *empty[] = {"matrix-engine", "--=3", NULL};
	CHECK_INT(parse(2, empty, &a), -1);
	CHECK_STR(err_text, "matrix-engine: unknown flag '--=3'\n");
	char *bare[] = {"matrix-engine", "batch=3", NULL};
	CHECK_INT(parse(2, bare, &a), -1);
	CHECK_STR(err_text, "matrix-engine: unknown flag 'batch=3'\n");
	/* which flags were given (issue 11: a flag that changes nothing is said) */
	char *given[] = {"matrix-engine", "--lr=0.5", "--seq-len", "64", NULL};
	CHECK_INT(parse(4, given, &a), 0);
	CHECK_INT(flags_given(&a, "lr"), 1);
	CHECK_INT(flags_given(&a, "seq-len"), 1);
	CHECK_INT(flags_given(&a, "batch"), 0);
	CHECK_INT(a.pt.seq_len, 64);
	/* --lr 0 took the model's rate */
	char *lr0[] = {"matrix-engine", "--lr", "0", NULL};
	CHECK_INT(parse(3, lr0, &a), -1);
	CHECK_STR(err_text, "matrix-engine: --lr: '0' is not a positive learning rate\n");
	/* --min-time and --max-time: a default yields to the one given (--max-time alone
	 * was raised to the default --min-time, 0.5 s); both given, the max below: refused */
	char *maxonly[] = {"matrix-engine", "--max-time", "0.1s", NULL};
	CHECK_INT(parse(3, maxonly, &a), 0);
	CHECK(a.m.max_time == 0.1 && a.m.min_time == 0.1);
	char *minonly[] = {"matrix-engine", "--min-time", "9s", NULL};
	CHECK_INT(parse(3, minonly, &a), 0);
	CHECK(a.m.max_time == 9 && a.m.min_time == 9);
	char *both[] = {"matrix-engine", "--max-time", "0.1s", "--min-time=0.5s", NULL};
	CHECK_INT(parse(4, both, &a), -1);
	CHECK_STR(err_text, "matrix-engine: --max-time: 0.1s is below --min-time 0.5s\n");
	/* a warm-up step count or a duration beyond what the engine holds: refused
	 * ((int)1e12 is undefined behaviour: it had warmed up 0.2 s and said nothing) */
	char *warm_big[] = {"matrix-engine", "--warmup", "1e12", NULL};
	CHECK_INT(parse(3, warm_big, &a), -1);
	CHECK_STR(err_text, "matrix-engine: --warmup: '1e12' is not a whole number of steps (0 to 1073741824)\n");
	char *warm_max[] = {"matrix-engine", "--warmup", "1073741824", NULL};
	CHECK_INT(parse(3, warm_max, &a), 0);
	CHECK_INT(a.m.warmup_steps, 1073741824);
	char *warm_s[] = {"matrix-engine", "--warmup", "1e12s", NULL};
	CHECK_INT(parse(3, warm_s, &a), 0);
	CHECK(a.m.warmup_steps == -1 && a.m.warmup_s == 1e12);
	char *inf_min[] = {"matrix-engine", "--max-time", "1e308m", NULL};
	CHECK_INT(parse(3, inf_min, &a), -1);
	CHECK_STR(err_text, "matrix-engine: --max-time: '1e308m' is not a duration (e.g. 0.5s, 200ms)\n");
	/* --dump writes the dump alone: a result, a profile or weights asked for
	 * with it were accepted and never written (exit 0) */
	char *dump_result[] = {"matrix-engine", "--dump", "d", "--result", "r", NULL};
	CHECK_INT(parse(5, dump_result, &a), -1);
	CHECK_STR(err_text, "matrix-engine: --result: nothing is measured with --dump (it runs the reference steps and "
		  "writes the dump only): run one without the other\n");
	char *dump_save[] = {"matrix-engine", "--save-weights=w", "--dump=d", NULL};
	CHECK_INT(parse(3, dump_save, &a), -1);
	CHECK_STR(err_text, "matrix-engine: --save-weights: nothing is measured with --dump (it runs the reference steps "
		  "and writes the dump only): run one without the other\n");
	char *dump_prof[] = {"matrix-engine", "--dump=d", "--profile=p", NULL};
	CHECK_INT(parse(3, dump_prof, &a), -1);
	char *dump_weights[] = {"matrix-engine", "--dump=d", "--weights=w", NULL};
	CHECK_INT(parse(3, dump_weights, &a), 0);
	free(help);
	return T_DONE();
}
