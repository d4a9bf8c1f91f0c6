/* plancache.c - the persistent plan cache (plancache.h). */
#include "config.h"
#include "plancache.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "matrix-plan-cache "

typedef struct pc_entry {
    char *key, *value;
    int dropped; /* rejected here: not returned, not written, not merged back */
} pc_entry;

struct plancache {
    char *dir, *path, *lock, *context;
    pc_entry *e;
    int n, cap;
    int dirty; /* something to write: a put, or the file was stale / corrupt */
    int warned;
    plancache_stats st;
};

static const char *const load_names[] = {"new", "loaded", "stale", "corrupt", "unreadable"};

/* ---- helpers ----------------------------------------------------------------------- */

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    return h;
}

static void pc_say(plancache *pc, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "matrix-engine: plan cache: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    (void)pc;
}

/* A failed save, said once per cache. */
static int pc_save_failed(plancache *pc, const char *what, const char *path, int err)
{
    pc->st.save_failed = 1;
    if (!pc->warned++)
        pc_say(pc, "unable to %s '%s': %s; going on without saving the choices", what, path,
               strerror(err));
    return -1;
}

/* A key or value: 1..MAX_LINE-1 bytes, no tab, no control byte. */
static int pc_valid(const char *s, size_t n)
{
    if (n == 0 || n >= PLANCACHE_MAX_LINE)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 0;
    return 1;
}

static char *pc_strndup(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

static char *pc_join(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *d = malloc(n);
    if (d)
        snprintf(d, n, "%s%s%s", a, b, c);
    return d;
}

static pc_entry *pc_find(const plancache *pc, const char *key)
{
    for (int i = 0; i < pc->n; i++)
        if (strcmp(pc->e[i].key, key) == 0)
            return &pc->e[i];
    return NULL;
}

/* Append an entry (key and value copied); -1 out of host memory. */
static int pc_append(plancache *pc, const char *key, size_t kn, const char *value, size_t vn)
{
    if (pc->n == pc->cap) {
        int cap = pc->cap ? 2 * pc->cap : 64;
        pc_entry *e = realloc(pc->e, cap * sizeof *e);
        if (!e)
            return -1;
        pc->e = e;
        pc->cap = cap;
    }
    pc_entry *e = &pc->e[pc->n];
    e->key = pc_strndup(key, kn);
    e->value = pc_strndup(value, vn);
    e->dropped = 0;
    if (!e->key || !e->value) {
        free(e->key);
        free(e->value);
        return -1;
    }
    pc->n++;
    return 0;
}

static void pc_free_entries(pc_entry *e, int n)
{
    for (int i = 0; i < n; i++) {
        free(e[i].key);
        free(e[i].value);
    }
    free(e);
}

/* mkdir -p dir; 0, or -1 with errno. */
static int pc_mkdirs(const char *dir)
{
    char *d = strdup(dir);
    if (!d)
        return -1;
    for (char *p = d + 1;; p++) {
        if (*p != '/' && *p)
            continue;
        char c = *p;
        *p = 0;
        if (mkdir(d, 0777) != 0 && errno != EEXIST) {
            int e = errno;
            free(d);
            errno = e;
            return -1;
        }
        if (!c)
            break;
        *p = c;
    }
    struct stat sb;
    int ok = stat(d, &sb) == 0 && S_ISDIR(sb.st_mode);
    free(d);
    if (!ok)
        errno = ENOTDIR;
    return ok ? 0 : -1;
}

/* ---- the file ------------------------------------------------------------------------ */

/* The whole file at path into *buf (NUL-terminated), *len; 0, 1 when there
 * is none, -1 unreadable (errno), -2 larger than PLANCACHE_MAX_FILE, -3 not
 * a regular file (a FIFO there is refused, not waited on: O_NONBLOCK). */
static int pc_read_file(const char *path, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? 1 : -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return -3;
    }
    size_t cap = 0, n = 0;
    char *b = NULL;
    for (;;) { /* to the end, whatever its size was at fstat */
        if (n + 1 >= cap) {
            if (cap > (size_t)PLANCACHE_MAX_FILE) {
                free(b);
                close(fd);
                return -2;
            }
            cap = cap ? 2 * cap : 65536;
            char *nb = realloc(b, cap);
            if (!nb) {
                free(b);
                close(fd);
                errno = ENOMEM;
                return -1;
            }
            b = nb;
        }
        ssize_t r = read(fd, b + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(b);
            close(fd);
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (n > (size_t)PLANCACHE_MAX_FILE) {
        free(b);
        return -2;
    }
    b[n] = 0;
    *buf = b;
    *len = n;
    return 0;
}

/* Parse a file's bytes for context: the entries into *e / *n (allocated),
 * PLANCACHE_LOADED, STALE or CORRUPT; *why says what was wrong. */
static int pc_parse(const char *b, size_t len, const char *context, pc_entry **e, int *n,
                    const char **why)
{
    plancache tmp;
    memset(&tmp, 0, sizeof tmp);
    *e = NULL;
    *n = 0;
    *why = "";
    if (len == 0 || b[len - 1] != '\n' || memchr(b, 0, len)) {
        *why = "empty, unterminated or binary";
        return PLANCACHE_CORRUPT;
    }
    /* header */
    const char *nl = memchr(b, '\n', len);
    size_t ml = strlen(MAGIC);
    if ((size_t)(nl - b) <= ml || strncmp(b, MAGIC, ml) != 0) {
        *why = "not a plan cache (header)";
        return PLANCACHE_CORRUPT;
    }
    char *end;
    long fmt = strtol(b + ml, &end, 10);
    if (end != nl) {
        *why = "header";
        return PLANCACHE_CORRUPT;
    }
    if (fmt != PLANCACHE_FORMAT) {
        *why = "another format";
        return PLANCACHE_STALE;
    }
    /* the end line: count and checksum of everything before it */
    const char *last = b + len - 1;
    while (last > b && last[-1] != '\n')
        last--;
    uint64_t sum = 0;
    unsigned long long cnt = 0;
    int used = 0;
    if (last == b || sscanf(last, "end\t%llu\t%16" SCNx64 "%n", &cnt, &sum, &used) != 2 ||
        last + used != b + len - 1) {
        *why = "no end line (torn or truncated)";
        return PLANCACHE_CORRUPT;
    }
    if (fnv1a(b, (size_t)(last - b)) != sum) {
        *why = "checksum";
        return PLANCACHE_CORRUPT;
    }
    /* context */
    const char *p = nl + 1;
    nl = memchr(p, '\n', (size_t)(last - p));
    if (!nl || strncmp(p, "context\t", 8) != 0) {
        *why = "no context line";
        return PLANCACHE_CORRUPT;
    }
    if ((size_t)(nl - p - 8) != strlen(context) || strncmp(p + 8, context, nl - p - 8) != 0) {
        *why = "another device, driver or library version";
        return PLANCACHE_STALE;
    }
    /* entries */
    for (p = nl + 1; p < last; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(last - p));
        const char *tab = memchr(p, '\t', (size_t)(nl - p));
        if (!tab || !pc_valid(p, (size_t)(tab - p)) || !pc_valid(tab + 1, (size_t)(nl - tab - 1))) {
            *why = "a malformed entry";
            goto corrupt;
        }
        if (pc_append(&tmp, p, (size_t)(tab - p), tab + 1, (size_t)(nl - tab - 1))) {
            *why = "out of host memory";
            goto corrupt;
        }
    }
    if ((unsigned long long)tmp.n != cnt) {
        *why = "entry count";
        goto corrupt;
    }
    *e = tmp.e;
    *n = tmp.n;
    return PLANCACHE_LOADED;
corrupt:
    pc_free_entries(tmp.e, tmp.n);
    return PLANCACHE_CORRUPT;
}

/* Read the file into *e / *n: enum plancache_load; *why for the log. */
static int pc_load(const plancache *pc, pc_entry **e, int *n, const char **why)
{
    char *b;
    size_t len;
    *e = NULL;
    *n = 0;
    int r = pc_read_file(pc->path, &b, &len);
    if (r == 1)
        return PLANCACHE_NEW;
    if (r == -1) {
        *why = strerror(errno);
        return PLANCACHE_UNREADABLE;
    }
    if (r == -2) {
        *why = "larger than the limit";
        return PLANCACHE_CORRUPT;
    }
    if (r == -3) {
        *why = "not a regular file";
        return PLANCACHE_UNREADABLE;
    }
    int st = pc_parse(b, len, pc->context, e, n, why);
    free(b);
    return st;
}

/* ---- the interface --------------------------------------------------------------------- */

int plancache_dir(const char *flag, char *out, size_t n)
{
    const char *v = flag ? flag : getenv("MATRIX_PLAN_CACHE");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int len;
    if (v && *v) {
        if (strcmp(v, "off") == 0) {
            snprintf(out, n, "off");
            return 0;
        }
        len = snprintf(out, n, "%s", v);
    } else if (xdg && xdg[0] == '/') /* a relative one is invalid (XDG base directories) */
        len = snprintf(out, n, "%s/matrix", xdg);
    else if (home && *home)
        len = snprintf(out, n, "%s/.cache/matrix", home);
    else {
        snprintf(out, n, "neither XDG_CACHE_HOME nor HOME names a directory");
        return -1;
    }
    if (len < 0 || (size_t)len >= n) {
        snprintf(out, n, "the directory's name is too long");
        return -1;
    }
    return 1;
}

plancache *plancache_open(const char *dir, const char *label, const char *context)
{
    plancache *pc = calloc(1, sizeof *pc);
    char name[128], lab[65];
    size_t k = 0;
    if (!pc)
        return NULL;
    for (const char *s = label; s && *s && k < sizeof lab - 1; s++)
        lab[k++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                           *s == '.' || *s == '-' || *s == '_'
                       ? *s
                       : '_';
    lab[k] = 0;
    snprintf(name, sizeof name, "/plans-%s-%016" PRIx64, k ? lab : "device",
             fnv1a(context, strlen(context)));
    pc->dir = strdup(dir);
    pc->context = strdup(context);
    pc->path = pc_join(dir, name, ".txt");
    pc->lock = pc_join(dir, name, ".lock");
    if (!pc->dir || !pc->context || !pc->path || !pc->lock) {
        plancache_close(pc);
        return NULL;
    }
    for (char *c = pc->context; *c; c++) /* one line */
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = ' ';
    const char *why = "";
    pc->st.load = pc_load(pc, &pc->e, &pc->n, &why);
    pc->cap = pc->n;
    pc->st.loaded = pc->n;
    if (pc->st.load == PLANCACHE_STALE || pc->st.load == PLANCACHE_CORRUPT) {
        pc->dirty = 1; /* replaced at the save */
        pc_say(pc, "'%s' is %s (%s): ignored, rebuilt", pc->path, load_names[pc->st.load], why);
    } else if (pc->st.load == PLANCACHE_UNREADABLE)
        pc_say(pc, "unable to read '%s': %s: ignored", pc->path, why);
    return pc;
}

const char *plancache_get(plancache *pc, const char *key)
{
    if (!pc)
        return NULL;
    pc_entry *e = pc_find(pc, key);
    if (!e || e->dropped) {
        pc->st.misses++;
        return NULL;
    }
    pc->st.hits++;
    return e->value;
}

void plancache_reject(plancache *pc, const char *key, const char *why)
{
    if (!pc)
        return;
    pc_entry *e = pc_find(pc, key);
    if (!e || e->dropped)
        return;
    e->dropped = 1;
    pc->st.hits--;
    pc->st.misses++;
    pc->st.rejected++;
    pc->dirty = 1;
    pc_say(pc, "cached choice rejected (%s): %s", why, key);
}

int plancache_put(plancache *pc, const char *key, const char *value)
{
    if (!pc)
        return 0;
    size_t kn = strlen(key), vn = strlen(value);
    if (!pc_valid(key, kn) || !pc_valid(value, vn))
        return -1;
    pc_entry *e = pc_find(pc, key);
    if (e) {
        char *v = strdup(value);
        if (!v)
            return -1;
        free(e->value);
        e->value = v;
        e->dropped = 0;
    } else if (pc_append(pc, key, kn, value, vn))
        return -1;
    pc->st.stored++;
    pc->dirty = 1;
    return 0;
}

/* Merge the file's current entries (another writer's) into pc: keys pc
 * holds (dropped ones too) keep pc's value. */
static void pc_merge(plancache *pc)
{
    pc_entry *fe;
    int fn;
    const char *why;
    if (pc_load(pc, &fe, &fn, &why) != PLANCACHE_LOADED)
        return;
    for (int i = 0; i < fn && pc->n < PLANCACHE_MAX_ENTRIES; i++)
        if (!pc_find(pc, fe[i].key))
            (void)pc_append(pc, fe[i].key, strlen(fe[i].key), fe[i].value, strlen(fe[i].value));
    pc_free_entries(fe, fn);
}

/* The file's bytes for pc's live entries (at most PLANCACHE_MAX_ENTRIES):
 * malloc'ed, *len; NULL out of host memory. */
static char *pc_format(const plancache *pc, size_t *len)
{
    size_t cap = strlen(MAGIC) + 16 + strlen(pc->context) + 16 + 64, n = 0;
    int live = 0;
    for (int i = 0; i < pc->n; i++)
        cap += strlen(pc->e[i].key) + strlen(pc->e[i].value) + 2;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    n += (size_t)snprintf(b + n, cap - n, "%s%d\ncontext\t%s\n", MAGIC, PLANCACHE_FORMAT, pc->context);
    for (int i = 0; i < pc->n && live < PLANCACHE_MAX_ENTRIES; i++) {
        if (pc->e[i].dropped)
            continue;
        n += (size_t)snprintf(b + n, cap - n, "%s\t%s\n", pc->e[i].key, pc->e[i].value);
        live++;
    }
    uint64_t sum = fnv1a(b, n);
    n += (size_t)snprintf(b + n, cap - n, "end\t%d\t%016" PRIx64 "\n", live, sum);
    *len = n;
    return b;
}

/* Write bytes to a new temporary file in the directory and rename it over
 * the file: 0, or -1 (said). */
static int pc_replace(plancache *pc, const char *b, size_t len)
{
    static unsigned seq;
    char suffix[64];
    snprintf(suffix, sizeof suffix, ".tmp.%ld.%u", (long)getpid(), seq++);
    char *tmp = pc_join(pc->path, suffix, "");
    if (!tmp)
        return pc_save_failed(pc, "write", pc->path, ENOMEM);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return pc_save_failed(pc, "write into", pc->dir, e);
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, b + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    int e = off == len ? 0 : errno ? errno : EIO;
    if (!e && fsync(fd) != 0)
        e = errno;
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, pc->path) != 0)
        e = errno;
    if (e)
        unlink(tmp);
    free(tmp);
    return e ? pc_save_failed(pc, "write", pc->path, e) : 0;
}

int plancache_save(plancache *pc)
{
    if (!pc || !pc->dirty)
        return 0;
    if (pc_mkdirs(pc->dir) != 0)
        return pc_save_failed(pc, "make the directory", pc->dir, errno);
    int lfd = open(pc->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lfd < 0)
        return pc_save_failed(pc, "open the lock", pc->lock, errno);
    int locked;
    while ((locked = flock(lfd, LOCK_EX) == 0) == 0 && errno == EINTR)
        ;
    if (!locked && !pc->warned)
        pc_say(pc, "unable to lock '%s': %s; writing without the lock (a concurrent writer's "
                   "new choices may be lost, never the file)", pc->lock, strerror(errno));
    pc_merge(pc);
    size_t len;
    char *b = pc_format(pc, &len);
    int rc = b ? pc_replace(pc, b, len) : pc_save_failed(pc, "write", pc->path, ENOMEM);
    free(b);
    if (locked)
        flock(lfd, LOCK_UN);
    close(lfd);
    if (rc == 0) {
        pc->dirty = 0;
        pc->st.saved = 1;
    }
    return rc;
}

void plancache_get_stats(const plancache *pc, plancache_stats *st)
{
    if (pc)
        *st = pc->st;
    else
        memset(st, 0, sizeof *st);
}

const char *plancache_path(const plancache *pc) { return pc ? pc->path : ""; }

void plancache_info(const plancache *pc, char *out, size_t n)
{
    if (!pc) {
        snprintf(out, n, "plan_cache=off\n");
        return;
    }
    const plancache_stats *s = &pc->st;
    snprintf(out, n,
             "plan_cache=%s\nplan_cache_hits=%d\nplan_cache_misses=%d\nplan_cache_rejected=%d\n"
             "plan_cache_stored=%d\nplan_cache_load=%s\nplan_cache_file=%s\n",
             s->save_failed ? "read-only" : "on", s->hits, s->misses, s->rejected, s->stored,
             load_names[s->load], pc->path);
}

void plancache_close(plancache *pc)
{
    if (!pc)
        return;
    pc_free_entries(pc->e, pc->n);
    free(pc->dir);
    free(pc->path);
    free(pc->lock);
    free(pc->context);
    free(pc);
}
