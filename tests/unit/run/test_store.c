/* test_store.c - results.csv: header, append, quoting round trip, torn last
 * row, header mismatch, filtering; and the result-file parser. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../t.h"
#include "result.h"
#include "run/store.h"
#include "util.h"

static struct recipe one_factor(const char *name)
{
	static struct factor f;
	static char *levels[] = {"a", "b"};
	struct recipe r;
	memset(&r, 0, sizeof(r));
	memset(&f, 0, sizeof(f));
	f.name = (char *)name;
	f.nlevels = 2;
	f.levels = levels;
	r.nfactors = 1;
	r.factors = &f;
	r.repeat = 1;
	return r;
}

static void fill(char **cells, size_t n, const char *id, const char *status, const char *reason)
{
	for (size_t i = 0; i < n; i++)
		cells[i] = NULL;
	cells[0] = (char *)id;
	cells[1] = "1";
	cells[2] = "0";
	cells[3] = "a";
	cells[4] = (char *)status;
	cells[5] = (char *)reason;
}

static int keep_ok(const struct row *row, void *ctx)
{
	(void)ctx;
	return strcmp(row->cell[4], "ok") == 0;
}

static void test_store(const char *dir)
{
	struct recipe r = one_factor("k");
	struct store s;
	CHECK_INT(store_open(&s, dir, &r, stderr), 0);
	char *cells[64];
	CHECK(s.ncols < 64);
	fill(cells, s.ncols, "00000000000000a1", "ok", NULL);
	cells[s.ncols - 1] = "sh -c 'echo \"a, b\"'\nsecond line";
	CHECK_INT(store_append(&s, cells), 0);
	fill(cells, s.ncols, "00000000000000a2", "failed", "exit status 1: \"quoted\", comma");
	CHECK_INT(store_append(&s, cells), 0);
	store_close(&s);

	char *path = xasprintf("%s/results.csv", dir), *why = NULL;
	struct table t;
	long torn;
	CHECK_INT(table_read(path, &t, &torn, &why), 0);
	CHECK_INT(torn, -1);
	CHECK_INT(t.nrows, 2);
	CHECK_STR(t.header[3], "k");
	CHECK_STR(table_cell(&t, 1, "reason"), "exit status 1: \"quoted\", comma");
	CHECK_STR(table_cell(&t, 0, "command"), "sh -c 'echo \"a, b\"' second line"); /* one row = one line */
	CHECK_STR(table_cell(&t, 0, "throughput"), "");
	table_free(&t);

	/* a torn row: dropped on read, cut on open */
	FILE *f = fopen(path, "a");
	fputs("00000000000000a3,1,0,a,o", f);
	fclose(f);
	CHECK_INT(table_read(path, &t, &torn, &why), 0);
	CHECK(torn > 0);
	CHECK_INT(t.nrows, 2);
	table_free(&t);
	CHECK_INT(store_open(&s, dir, &r, stderr), 0);
	fill(cells, s.ncols, "00000000000000a4", "ok", NULL);
	CHECK_INT(store_append(&s, cells), 0);
	CHECK_INT(table_read(path, &t, &torn, &why), 0);
	CHECK_INT(torn, -1);
	CHECK_INT(t.nrows, 3);
	CHECK_STR(t.rows[2].cell[0], "00000000000000a4");
	table_free(&t);

	/* filtering keeps the ok rows, and appending still works */
	CHECK_INT(store_filter(&s, keep_ok, NULL), 0);
	fill(cells, s.ncols, "00000000000000a5", "ok", NULL);
	CHECK_INT(store_append(&s, cells), 0);
	store_close(&s);
	CHECK_INT(table_read(path, &t, &torn, &why), 0);
	CHECK_INT(t.nrows, 3);
	CHECK_STR(t.rows[1].cell[0], "00000000000000a4");
	table_free(&t);

	/* another recipe's columns are refused */
	struct recipe other = one_factor("other");
	FILE *devnull = fopen("/dev/null", "w");
	CHECK_INT(store_open(&s, dir, &other, devnull), -1);
	fclose(devnull);

	/* a row with the wrong number of cells in the middle is an error */
	f = fopen(path, "a");
	fputs("x,y\n00000000000000a6,1,0,a,ok,,,,,,,,,,,,,,,,,,,\n", f);
	fclose(f);
	CHECK_INT(table_read(path, &t, &torn, &why), -1);
	CHECK(why && strstr(why, "has 2 cells"));
	free(why);
	free(path);
}

static void test_result(const char *dir)
{
	char *p = xasprintf("%s/r.txt", dir), *why = NULL;
	struct result res;
	const char *text = "status=ok\n# comment\nthroughput=12.5\r\nreason=a=b\n";
	CHECK_INT(write_file_atomic(p, text, strlen(text)), 0);
	CHECK_INT(result_read(p, &res, &why), 0);
	CHECK_STR(result_get(&res, "status"), "ok");
	CHECK_STR(result_get(&res, "throughput"), "12.5");
	CHECK_STR(result_get(&res, "reason"), "a=b");
	CHECK(result_get(&res, "missing") == NULL);
	result_free(&res);
	CHECK_INT(write_file_atomic(p, "status=ok\nno equals\n", 20), 0);
	CHECK_INT(result_read(p, &res, &why), -2);
	CHECK_STR(why, "result file line 2 has no '='");
	free(why);
	CHECK_INT(write_file_atomic(p, "bad key=1\n", 10), 0);
	CHECK_INT(result_read(p, &res, &why), -2);
	free(why);
	/* a value's blanks are not part of it: the runner and the report read
	 * " 12 " as 12 alike (the report dropped the row, the runner kept it) */
	text = "status=ok\nthroughput= 12 \t\nunit=\t samples/s\n";
	CHECK_INT(write_file_atomic(p, text, strlen(text)), 0);
	CHECK_INT(result_read(p, &res, &why), 0);
	CHECK_STR(result_get(&res, "throughput"), "12");
	CHECK_STR(result_get(&res, "unit"), "samples/s");
	CHECK(result_check(&res) == NULL);
	result_free(&res);
	/* a key twice: which is the point's? garbled */
	text = "status=ok\nthroughput=5\nthroughput=7\n";
	CHECK_INT(write_file_atomic(p, text, strlen(text)), 0);
	CHECK_INT(result_read(p, &res, &why), -2);
	CHECK_STR(why, "result file line 3 repeats the key 'throughput'");
	free(why);
	/* hexadecimal, and a step time outside its own interval: failed */
	char *bad = result_bad_value("throughput", "0x10");
	CHECK_STR(bad, "throughput '0x10' is not a number");
	free(bad);
	bad = result_bad_value("throughput", "1e3");
	CHECK(bad == NULL);
	text = "status=ok\nstep_ms=1\nstep_ms_lo=2\nstep_ms_hi=3\n";
	CHECK_INT(write_file_atomic(p, text, strlen(text)), 0);
	CHECK_INT(result_read(p, &res, &why), 0);
	bad = result_check(&res);
	CHECK_STR(bad, "step_ms 1 is outside its own interval [step_ms_lo 2, step_ms_hi 3]");
	free(bad);
	result_free(&res);
	text = "status=ok\nstep_ms=2\nstep_ms_lo=2\nstep_ms_hi=3\n";
	CHECK_INT(write_file_atomic(p, text, strlen(text)), 0);
	CHECK_INT(result_read(p, &res, &why), 0);
	CHECK(result_check(&res) == NULL);
	result_free(&res);
	unlink(p);
	CHECK_INT(result_read(p, &res, &why), -1);
	free(p);
	/* the row files of DIR/rows/: ID.csv, 16 lower-case hex digits, and
	 * nothing else there (temporary names, dot files, an editor's copy) */
	char id[17] = "";
	CHECK_INT(result_row_file_id("0123456789abcdef.csv", id), 1);
	CHECK_STR(id, "0123456789abcdef");
	CHECK_INT(result_row_file_id(".123456789abcdef.csv", id), 0);
	CHECK_INT(result_row_file_id("0123456789ABCDEF.csv", id), 0);
	CHECK_INT(result_row_file_id("0123456789abcdef.csv~", id), 0);
	CHECK_INT(result_row_file_id("0123456789abcdefx.csv", id), 0);
	CHECK_INT(result_row_file_id("0123456789abcdef.tmp", id), 0);
	CHECK_INT(result_row_file_id("", id), 0);
	char *rp = result_row_path("d x", "0123456789abcdef");
	CHECK_STR(rp, "d x/rows/0123456789abcdef.csv");
	free(rp);
}

static void test_util(void)
{
	double s;
	CHECK(parse_duration("300s", &s) == 0 && s == 300);
	CHECK(parse_duration("250ms", &s) == 0 && s == 0.25);
	CHECK(parse_duration("5m", &s) == 0 && s == 300);
	CHECK(parse_duration("0.5s", &s) == 0 && s == 0.5);
	CHECK(parse_duration("5", &s) < 0);
	CHECK(parse_duration("s", &s) < 0);
	CHECK(parse_duration("-1s", &s) < 0);
	CHECK(parse_duration("fast", &s) < 0);
	CHECK_INT(edit_distance("presicion", "precision"), 2);
	CHECK_INT(edit_distance("", "abc"), 3);
	CHECK(hash64("a", 1, HASH64_INIT) != hash64("b", 1, HASH64_INIT));
	long v;
	CHECK(parse_long("12", &v) == 0 && v == 12);
	CHECK(parse_long("12x", &v) < 0);
	/* 3 significant digits for a person (issue 21, item 2) */
	char b[32];
	CHECK_STR(fmt_sig3(b, 0.000685487), "0.000685");
	CHECK_STR(fmt_sig3(b, 31951.9), "32000");
	CHECK_STR(fmt_sig3(b, 999.6), "1000");
	CHECK_STR(fmt_sig3(b, 1.23456), "1.23");
	CHECK_STR(fmt_sig3(b, -45.67), "-45.7");
	{
		char lo[32], hi[32];
		fmt_sig_range(lo, hi, 28012, 28047, NAN); /* not "28000 .. 28000" */
		CHECK_STR(lo, "28010");
		CHECK_STR(hi, "28050");
		fmt_sig_range(lo, hi, 1.0004, 1.0031, 1.0); /* excludes 1: must not read "1" */
		CHECK_STR(lo, "1.0004");
		CHECK_STR(hi, "1.0031");
		fmt_sig_range(lo, hi, 0.9981, 1.0024, 1.0); /* contains 1: "1" would be at it */
		CHECK_STR(lo, "0.9981");
		CHECK_STR(hi, "1.002");
		fmt_sig_range(lo, hi, 0.912, 1.13, 1.0);
		CHECK_STR(lo, "0.912");
		CHECK_STR(hi, "1.13");
		fmt_sig_range(lo, hi, 1.5, 1.5, 1.0); /* no spread: as it is */
		CHECK_STR(lo, "1.5");
		CHECK_STR(hi, "1.5");
		fmt_sig_range(lo, hi, 0.000685487, 0.000912, NAN);
		CHECK_STR(lo, "0.000685");
		CHECK_STR(hi, "0.000912");
	}
	CHECK_STR(fmt_sig3(b, 1.5e9), "1.5e+09");
	CHECK_STR(fmt_sig3(b, 4.567e-5), "4.57e-05");
	CHECK_STR(fmt_sig3(b, -0.0), "0");
	CHECK_STR(fmt_sig3(b, 0.0 / 0.0), "");
}

/* An older matrix's results.csv (the quality columns and those after them
 * missing, their keys in extra) read as this version's; a current one left
 * alone; a table with a column this version does not know refused. */
static void test_upgrade(const char *dir)
{
	char *p = xasprintf("%s/old.csv", dir), *why = NULL;
	const char *old = "id,index,repeat,k,status,reason,throughput,unit,wall_s,extra,command\n"
			  "00000000000000a1,1,0,a,ok,,5,samples/s,0.5,"
			  "setup_s=0.25; custom=x%3B y; node=n1; top1_agree=0.99,sh e.sh\n";
	CHECK_INT(write_file_atomic(p, old, strlen(old)), 0);
	struct table t;
	CHECK_INT(table_read(p, &t, NULL, &why), 0);
	CHECK_INT(result_table_upgrade(&t), 1);
	struct recipe r = one_factor("k");
	size_t n;
	char **h = store_header(&r, &n);
	CHECK_INT((long)t.ncols, (long)n);
	for (size_t i = 0; i < n && i < t.ncols; i++) {
		CHECK_STR(t.header[i], h[i]);
		free(h[i]);
	}
	free(h);
	CHECK_STR(table_cell(&t, 0, "throughput"), "5");
	CHECK_STR(table_cell(&t, 0, "setup_s"), "0.25");
	CHECK_STR(table_cell(&t, 0, "node"), "n1");
	CHECK_STR(table_cell(&t, 0, "top1_agree"), "0.99");
	CHECK_STR(table_cell(&t, 0, "ci_met"), "");
	CHECK_STR(table_cell(&t, 0, "extra"), "custom=x%3B y");
	CHECK_STR(table_cell(&t, 0, "command"), "sh e.sh");
	CHECK_INT(result_table_upgrade(&t), 0); /* now current */
	table_free(&t);
	const char *newer = "id,index,repeat,k,status,reason,throughput,joules,wall_s,extra,command\n"
			    "00000000000000a1,1,0,a,ok,,5,3,0.5,,sh\n";
	CHECK_INT(write_file_atomic(p, newer, strlen(newer)), 0);
	CHECK_INT(table_read(p, &t, NULL, &why), 0);
	CHECK_INT(result_table_upgrade(&t), -1);
	CHECK_INT((long)t.ncols, 11);
	table_free(&t);
	struct result res;
	CHECK_INT(result_extra_parse("a=1; b=x%3B y; c=", &res), 0);
	CHECK_INT((long)res.n, 3);
	CHECK_STR(result_get(&res, "b"), "x; y");
	CHECK_STR(result_get(&res, "c"), "");
	result_free(&res);
	CHECK_INT(result_extra_parse("a=1; no equals", &res), -1);
	free(p);
}

int main(void)
{
	char tmpl[] = "/tmp/matrix-store.XXXXXX";
	char *dir = mkdtemp(tmpl);
	CHECK(dir != NULL);
	test_store(dir);
	test_result(dir);
	test_upgrade(dir);
	test_util();
	char *cmd = xasprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	free(cmd);
	return T_DONE();
}
