/* plancache.h - a persistent cache of what a backend searches for at
 * start-up (cuDNN convolution algorithms, cuBLASLt algorithms), so that a
 * study of many points pays each search once per shape, not once per point.
 *
 * Backend-independent: keys and values are one-line strings that the
 * backend writes and parses itself; this module only keeps them, and a file
 * of them, correct. One file per context (the device and the versions of
 * everything that could change a choice: GPU name, compute capability, SM
 * count, driver, runtime and library versions, the engine's version):
 * DIR/plans-LABEL-HASH.txt, HASH from the context.
 *
 * The file: a header line "matrix-plan-cache FORMAT", a line "context\tC",
 * one "key\tvalue" line per entry, and "end\tN\tCHECKSUM" (N entries, FNV-1a
 * 64 of every byte before that line, hex). A file that does not end so, or
 * whose checksum, count or lines are wrong, is corrupt; one of another
 * format or context is stale: either is ignored (with a line on stderr) and
 * replaced at the next save.
 *
 * Two processes may save at once: a save takes an exclusive flock on
 * DIR/plans-LABEL-HASH.lock, merges what the file holds by then (entries of
 * the other writers are kept, its own win on equal keys), writes a
 * temporary file in DIR and renames it over the file, so a reader sees the
 * old file or the new one, never a torn one. A directory that cannot be
 * made or written, or a lock that cannot be had, is said once on stderr and
 * the point goes on without saving (lookups still come from what could be
 * read).
 *
 * The cache is never trusted blindly: a hit is a candidate that the caller
 * must check against the current descriptor (plancache_reject when it does
 * not hold: counted, dropped, searched again and replaced). */
#ifndef MATRIX_ENGINE_PLANCACHE_H
#define MATRIX_ENGINE_PLANCACHE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PLANCACHE_FORMAT 1
#define PLANCACHE_MAX_LINE 1024        /* bytes of a key or a value, at most */
#define PLANCACHE_MAX_FILE (16 << 20)  /* a larger file is not read (corrupt) */
#define PLANCACHE_MAX_ENTRIES 100000   /* a save keeps at most this many */

typedef struct plancache plancache;

/* What happened to the file when it was opened. */
enum plancache_load {
    PLANCACHE_NEW,     /* no file yet */
    PLANCACHE_LOADED,  /* read, valid */
    PLANCACHE_STALE,   /* another format or context: ignored, replaced at the save */
    PLANCACHE_CORRUPT, /* torn, truncated, checksum or line wrong: ignored, replaced */
    PLANCACHE_UNREADABLE, /* exists but cannot be read: ignored */
};

typedef struct plancache_stats {
    int hits;      /* lookups found (rejected ones not counted) */
    int misses;    /* lookups not found, and rejected hits */
    int rejected;  /* hits the caller found invalid for its descriptor */
    int stored;    /* entries put (new or replaced) */
    int loaded;    /* entries read from the file at open */
    int load;      /* enum plancache_load */
    int saved;     /* 1: the last plancache_save wrote the file */
    int save_failed; /* 1: a save was needed and failed (said on stderr) */
} plancache_stats;

/* The directory from a --plan-cache value or NULL (not given): the value,
 * else $MATRIX_PLAN_CACHE, else $XDG_CACHE_HOME/matrix (absolute only),
 * else $HOME/.cache/matrix. "off" (either) disables the cache. Returns 1
 * with the directory in out, 0 when disabled (out = "off"), -1 when no
 * directory can be named (no HOME) or it does not fit in n (out: why). */
int plancache_dir(const char *flag, char *out, size_t n);

/* Open the cache of context (one line) in dir for label (a short name of
 * the device for the file name; any byte outside [A-Za-z0-9._-] becomes
 * '_'): reads the file when there is one (a line on stderr when it is
 * stale, corrupt or unreadable). Never fails but for host memory (NULL). */
plancache *plancache_open(const char *dir, const char *label, const char *context);

/* The value of key, or NULL; counted as a hit or a miss. The pointer is
 * valid until the next put, reject or save. */
const char *plancache_get(plancache *pc, const char *key);
/* The hit of key was not valid here (why: for the log): counted as a
 * rejected hit and a miss, the entry dropped. */
void plancache_reject(plancache *pc, const char *key, const char *why);
/* Set key to value (kept in memory until plancache_save). 0, or -1 when
 * the key or value is empty, too long or holds a tab or a control byte. */
int plancache_put(plancache *pc, const char *key, const char *value);
/* Write the file when anything was put or the file was stale / corrupt:
 * lock, merge, temporary file, rename (see the header). 0 when written or
 * nothing to write, -1 when it could not be written (said on stderr once;
 * the cache keeps working in memory). */
int plancache_save(plancache *pc);
/* Counts and states so far. */
void plancache_get_stats(const plancache *pc, plancache_stats *st);
/* The file's path. */
const char *plancache_path(const plancache *pc);
/* "key=value" lines for the result record: plan_cache (on, or read-only
 * when a save failed), plan_cache_hits, _misses, _rejected, _stored,
 * plan_cache_file (its path) and plan_cache_load (new, loaded, stale,
 * corrupt, unreadable), into out. */
void plancache_info(const plancache *pc, char *out, size_t n);
/* Free (does not save). NULL is fine. */
void plancache_close(plancache *pc);

#ifdef __cplusplus
}
#endif

#endif
