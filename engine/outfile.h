/* outfile.h - the files matrix-engine writes (--result, --save-weights,
 * --dump, --profile), all one way:
 *
 *   - a regular file, or a name that does not exist yet, is written to a
 *     temporary file beside it (NAME.tmp.PID, created exclusively) and
 *     renamed over it at the end, so that a reader never sees a part and a
 *     failed write leaves the old file; through a symbolic link, the file
 *     it points at is replaced and the link kept;
 *   - a character device or a FIFO (/dev/null, /dev/stdout, a pipe a
 *     script reads) is written in place: it is never replaced by a regular
 *     file (renaming over /dev/null, as root, had made it one);
 *   - a directory, a block device or a socket is refused.
 *
 * out_check says before anything runs whether a path can be written that
 * way, so that a point does not run for minutes to fail at its last step. */
#ifndef MATRIX_ENGINE_OUTFILE_H
#define MATRIX_ENGINE_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct outfile {
    FILE *f;      /* where to write */
    char *path;   /* the file that gets the contents (a link's target) */
    char *tmp;    /* the temporary file renamed over path; NULL: in place */
} outfile;

/* 0 when path can be written as above; else -1 with the reason in err
 * ("'x' is a directory", "the directory 'd' does not exist"). With
 * parent_made, a missing parent directory is fine when its own parent
 * exists (the writer makes that one level). */
int out_check(const char *path, int parent_made, char *err, size_t n);
/* Start writing path; 0, or -1 with the reason in err (nothing opened). */
int out_open(outfile *o, const char *path, char *err, size_t n);
/* Finish: flush, close and rename into place. 0 when every byte was
 * written; else -1 with the reason in err, the temporary file removed and
 * the old file (if any) left as it was. o is cleared either way. */
int out_close(outfile *o, char *err, size_t n);
/* Give up: close, remove the temporary file (the old file stays as it
 * was), clear o. */
void out_abandon(outfile *o);
/* Remove path when it is a regular file (an earlier run's result), so
 * that a run that fails leaves none; a link, a device, a FIFO, a directory
 * are left alone. */
void out_forget(const char *path);
/* 1 when a and b name one file (the same name, one file by two names, or
 * the same new name in one directory); devices and FIFOs are never the same
 * regular output. */
int out_same(const char *a, const char *b);

#endif
