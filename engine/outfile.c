/* outfile.c - the files matrix-engine writes (outfile.h). */
#include "config.h"
#include "outfile.h"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What path is to a writer: OUT_NEW (absent: a dangling link too),
 * OUT_REGULAR, OUT_IN_PLACE (a character device or a FIFO), or -1 with the
 * reason in err (an empty name, a directory, a block device, a socket, a
 * stat error such as ENOTDIR). */
enum { OUT_NEW, OUT_REGULAR, OUT_IN_PLACE };
static int out_kind(const char *path, char *err, size_t n)
{
    struct stat st;
    if (!*path) {
        snprintf(err, n, "an empty name (expected a file to write)");
        return -1;
    }
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return OUT_NEW;
        snprintf(err, n, "'%s': %s", path, strerror(errno));
        return -1;
    }
    if (S_ISREG(st.st_mode))
        return OUT_REGULAR;
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
        return OUT_IN_PLACE;
    snprintf(err, n, "'%s' is %s (expected a file to write)", path,
             S_ISDIR(st.st_mode) ? "a directory" : S_ISBLK(st.st_mode) ? "a block device"
             : S_ISSOCK(st.st_mode) ? "a socket" : "not a regular file");
    return -1;
}

/* The directory part of path ("." when none), malloc'd. */
static char *out_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *d = slash == path ? strdup("/") : slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    mallocCheck(d);
    return d;
}

/* The directory dir can take a new file: 0, or -1 with the reason. */
static int out_dir_ok(const char *dir, int parent_made, char *err, size_t n)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        int e = errno;
        if (e == ENOENT && parent_made) { /* the writer makes dir: its parent must take it */
            char *up = out_dirname(dir);
            int rc = out_dir_ok(up, 0, err, n);
            free(up);
            return rc;
        }
        snprintf(err, n, e == ENOENT ? "the directory '%s' does not exist" : "the directory '%s': %s", dir,
                 strerror(e));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, n, "'%s' is not a directory", dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, n, "unable to write in the directory '%s': %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

int out_check(const char *path, int parent_made, char *err, size_t n)
{
    int kind = out_kind(path, err, n);
    if (kind < 0)
        return -1;
    if (kind == OUT_IN_PLACE)
        return access(path, W_OK) == 0 ? 0 : (snprintf(err, n, "'%s': %s", path, strerror(errno)), -1);
    char *real = realpath(path, NULL), *dir = out_dirname(real ? real : path);
    int rc = out_dir_ok(dir, parent_made, err, n);
    free(dir);
    free(real);
    return rc;
}

/* A character device or a FIFO, opened to write in place. A FIFO that no
 * process reads is refused (ENXIO) rather than waited for. */
static int out_open_in_place(outfile *o, const char *path, char *err, size_t n)
{
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), fl;
    if (fd < 0) {
        snprintf(err, n, errno == ENXIO ? "'%s': a FIFO that no process reads" : "'%s': %s", path,
                 strerror(errno));
        return -1;
    }
    if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 || !(o->f = fdopen(fd, "w"))) {
        snprintf(err, n, "'%s': %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    o->path = strdup(path);
    mallocCheck(o->path);
    return 0;
}

int out_open(outfile *o, const char *path, char *err, size_t n)
{
    memset(o, 0, sizeof *o);
    int kind = out_kind(path, err, n);
    if (kind < 0)
        return -1;
    if (kind == OUT_IN_PLACE)
        return out_open_in_place(o, path, err, n);
    /* a regular file or a new one; through a link, its target */
    char *real = realpath(path, NULL);
    o->path = real && kind == OUT_REGULAR ? real : strdup(path);
    if (o->path != real)
        free(real);
    mallocCheck(o->path);
    size_t len = strlen(o->path) + 32;
    o->tmp = malloc(len);
    mallocCheck(o->tmp);
    snprintf(o->tmp, len, "%s.tmp.%d", o->path, (int)getpid());
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        snprintf(err, n, "'%s': %s", o->tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        free(o->path);
        free(o->tmp);
        memset(o, 0, sizeof *o);
        return -1;
    }
    return 0;
}

int out_close(outfile *o, char *err, size_t n)
{
    int rc = 0;
    if (!o->f) {
        snprintf(err, n, "'%s' was not opened", o->path ? o->path : "(none)");
        rc = -1;
    } else {
        int bad = ferror(o->f), e = bad ? errno : 0;
        if (fclose(o->f) != 0 && !bad)
            bad = 1, e = errno;
        if (!bad && o->tmp && rename(o->tmp, o->path) != 0)
            bad = 1, e = errno;
        if (bad) {
            snprintf(err, n, "'%s': %s", o->path, strerror(e ? e : EIO));
            if (o->tmp)
                unlink(o->tmp);
            rc = -1;
        }
    }
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return rc;
}

void out_abandon(outfile *o)
{
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}

void out_forget(const char *path)
{
    struct stat st;
    if (*path && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
        unlink(path);
}

int out_same(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) /* both there: one file by two names (a link, ./x) */
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && S_ISREG(sa.st_mode);
    if (strcmp(a, b) == 0)
        return 1;
    char *ra = realpath(a, NULL), *rb = realpath(b, NULL); /* not there yet: the same name in one directory */
    char *da = out_dirname(a), *db = out_dirname(b), *pa = realpath(da, NULL), *pb = realpath(db, NULL);
    const char *ba = strrchr(a, '/') ? strrchr(a, '/') + 1 : a, *bb = strrchr(b, '/') ? strrchr(b, '/') + 1 : b;
    int same = (ra && rb && strcmp(ra, rb) == 0) || (pa && pb && strcmp(pa, pb) == 0 && strcmp(ba, bb) == 0);
    free(ra);
    free(rb);
    free(da);
    free(db);
    free(pa);
    free(pb);
    return same;
}
