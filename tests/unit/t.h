/* t.h - minimal unit-test macros: CHECK(cond), CHECK_STR(a, b), CHECK_INT(a, b),
 * each naming file:line on failure; T_DONE() prints a verdict and returns the
 * exit status (0, or 1 when any check failed). */
#ifndef MATRIX_T_H
#define MATRIX_T_H

#include <stdio.h>
#include <string.h>

static int t_checks, t_failures;

#define CHECK(cond)                                                                  \
	do {                                                                         \
		t_checks++;                                                          \
		if (!(cond)) {                                                       \
			t_failures++;                                                \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                    \
	} while (0)

#define CHECK_STR(a, b)                                                              \
	do {                                                                         \
		const char *t_a = (a), *t_b = (b);                                   \
		t_checks++;                                                          \
		if (!t_a || !t_b || strcmp(t_a, t_b) != 0) {                         \
			t_failures++;                                                \
			fprintf(stderr, "%s:%d: %s is '%s', expected '%s'\n", __FILE__, __LINE__, \
				#a, t_a ? t_a : "(null)", t_b ? t_b : "(null)");      \
		}                                                                    \
	} while (0)

#define CHECK_INT(a, b)                                                              \
	do {                                                                         \
		long long t_a = (long long)(a), t_b = (long long)(b);                \
		t_checks++;                                                          \
		if (t_a != t_b) {                                                    \
			t_failures++;                                                \
			fprintf(stderr, "%s:%d: %s is %lld, expected %lld\n", __FILE__, __LINE__, #a, \
				t_a, t_b);                                           \
		}                                                                    \
	} while (0)

#define T_DONE()                                                                     \
	(printf("%s: %d checks, %d failed\n", __FILE__, t_checks, t_failures),        \
	 t_failures ? 1 : 0)

#endif
