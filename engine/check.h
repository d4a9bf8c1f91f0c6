/* check.h - one-line checks that name the file and line, as llm.c does. */
#ifndef MATRIX_ENGINE_CHECK_H
#define MATRIX_ENGINE_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define mallocCheck(p) do { if (!(p)) { \
    fprintf(stderr, "matrix-engine: %s:%d: out of host memory\n", __FILE__, __LINE__); \
    exit(1); } } while (0)

#define fopenCheck(f, path) do { if (!(f)) { \
    fprintf(stderr, "matrix-engine: %s:%d: unable to open '%s'\n", __FILE__, __LINE__, (path)); \
    exit(1); } } while (0)

/* Something that cannot happen: a bug in the engine. */
#define BUG(...) do { fprintf(stderr, "matrix-engine: BUG at %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)

#endif
