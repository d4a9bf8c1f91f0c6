/* test_plancache.c - engine/plancache.c, the persistent plan cache: where
 * it lives, a round trip, a rejected hit, a corrupt file (truncated, a
 * flipped byte, garbage, empty), a stale one (another format, another
 * context), an unwritable directory (warn, go on in memory), and writers in
 * several processes at once with readers beside them (every read sees a
 * valid file, and no writer's entries are lost). */
#include "config.h"
#include "t.h"
#include "../../engine/plancache.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CTX "engine 0.1.0; gpu Test GPU sm_90 132 SMs; driver 13000; cudnn 91400"
#define CTX2 "engine 0.1.0; gpu Test GPU sm_90 132 SMs; driver 13010; cudnn 91400"

static char root[256];

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char p[512];
    while (d && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            chmod(p, 0700);
            rm_tree(p);
        } else
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b = NULL;
    *n = 0;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) == (size_t)len) {
        b[len] = 0;
        *n = (size_t)len;
    }
    fclose(f);
    return b;
}

static void spit(const char *path, const char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        CHECK(fwrite(b, 1, n, f) == n);
        fclose(f);
    }
}

static int load_of(const char *dir, const char *ctx, int *loaded)
{
    plancache *pc = plancache_open(dir, "Test GPU", ctx);
    plancache_stats st;
    plancache_get_stats(pc, &st);
    if (loaded)
        *loaded = st.loaded;
    plancache_close(pc);
    return st.load;
}

static void test_dir(void)
{
    char out[256];
    CHECK_INT(plancache_dir("off", out, sizeof out), 0);
    CHECK_STR(out, "off");
    CHECK_INT(plancache_dir("/some/where", out, sizeof out), 1);
    CHECK_STR(out, "/some/where");
    setenv("MATRIX_PLAN_CACHE", "/from/env", 1);
    CHECK_INT(plancache_dir(NULL, out, sizeof out), 1);
    CHECK_STR(out, "/from/env");
    CHECK_INT(plancache_dir("/flag/wins", out, sizeof out), 1);
    CHECK_STR(out, "/flag/wins");
    setenv("MATRIX_PLAN_CACHE", "off", 1);
    CHECK_INT(plancache_dir(NULL, out, sizeof out), 0);
    unsetenv("MATRIX_PLAN_CACHE");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    setenv("HOME", "/home/u", 1);
    CHECK_INT(plancache_dir(NULL, out, sizeof out), 1);
    CHECK_STR(out, "/xdg/matrix");
    setenv("XDG_CACHE_HOME", "relative", 1); /* invalid: ignored */
    CHECK_INT(plancache_dir(NULL, out, sizeof out), 1);
    CHECK_STR(out, "/home/u/.cache/matrix");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    CHECK_INT(plancache_dir(NULL, out, sizeof out), -1);
    CHECK_INT(plancache_dir("/a/much/longer/name/than/fits", out, 8), -1);
}

static void test_round_trip(const char *dir)
{
    plancache *pc = plancache_open(dir, "Test GPU", CTX);
    plancache_stats st;
    CHECK(pc != NULL);
    plancache_get_stats(pc, &st);
    CHECK_INT(st.load, PLANCACHE_NEW);
    CHECK(plancache_get(pc, "conv fwd n64") == NULL);
    CHECK_INT(plancache_put(pc, "conv fwd n64", "algo=1 math=1 ws=1024"), 0);
    CHECK_INT(plancache_put(pc, "conv bwd_data n64", "algo=0 math=1 ws=0"), 0);
    CHECK_INT(plancache_put(pc, "gemm y 768x128", "algo=00ff ws=4096"), 0);
    CHECK_INT(plancache_put(pc, "gemm y 768x128", "algo=0100 ws=4096"), 0); /* replaced */
    CHECK_INT(plancache_put(pc, "a\tkey", "v"), -1);
    CHECK_INT(plancache_put(pc, "key", "two\nlines"), -1);
    CHECK_INT(plancache_put(pc, "", "v"), -1);
    CHECK_INT(plancache_save(pc), 0);
    plancache_get_stats(pc, &st);
    CHECK_INT(st.misses, 1);
    CHECK_INT(st.stored, 4);
    CHECK_INT(st.saved, 1);
    CHECK(strstr(plancache_path(pc), "/plans-Test_GPU-") != NULL);
    plancache_close(pc);

    pc = plancache_open(dir, "Test GPU", CTX);
    plancache_get_stats(pc, &st);
    CHECK_INT(st.load, PLANCACHE_LOADED);
    CHECK_INT(st.loaded, 3);
    CHECK_STR(plancache_get(pc, "conv fwd n64"), "algo=1 math=1 ws=1024");
    CHECK_STR(plancache_get(pc, "gemm y 768x128"), "algo=0100 ws=4096");
    CHECK(plancache_get(pc, "conv fwd n128") == NULL);
    /* a hit the caller finds invalid: dropped, counted, gone from the file */
    CHECK_STR(plancache_get(pc, "conv bwd_data n64"), "algo=0 math=1 ws=0");
    plancache_reject(pc, "conv bwd_data n64", "test");
    plancache_get_stats(pc, &st);
    CHECK_INT(st.hits, 2);
    CHECK_INT(st.misses, 2);
    CHECK(plancache_get(pc, "conv bwd_data n64") == NULL);
    CHECK_INT(st.rejected, 1);
    char info[512];
    plancache_info(pc, info, sizeof info);
    CHECK(strstr(info, "plan_cache=on\nplan_cache_hits=2\nplan_cache_misses=3\n"
                       "plan_cache_rejected=1\nplan_cache_stored=0\nplan_cache_load=loaded\n") == info);
    CHECK_INT(plancache_save(pc), 0);
    plancache_close(pc);
    int n;
    CHECK_INT(load_of(dir, CTX, &n), PLANCACHE_LOADED);
    CHECK_INT(n, 2);
    plancache_info(NULL, info, sizeof info);
    CHECK_STR(info, "plan_cache=off\n");
    CHECK(plancache_get(NULL, "k") == NULL);
    CHECK_INT(plancache_put(NULL, "k", "v"), 0);
    CHECK_INT(plancache_save(NULL), 0);
}

/* path holds a valid file for CTX; each damaged copy must load as corrupt,
 * and a save must replace it with a valid one. */
static void test_corrupt(const char *dir)
{
    plancache *pc = plancache_open(dir, "Test GPU", CTX);
    char path[512];
    snprintf(path, sizeof path, "%s", plancache_path(pc));
    plancache_close(pc);
    size_t n;
    char *good = slurp(path, &n);
    CHECK(good && n > 40);
    if (!good)
        return;
    char *bad = malloc(n + 16);
    for (int k = 0; k < 5; k++) {
        size_t m = n;
        memcpy(bad, good, n);
        if (k == 0)
            m = n / 2; /* torn: cut in the middle */
        else if (k == 1)
            m = n - 1; /* no final newline */
        else if (k == 2)
            bad[strstr(good, "algo=1") - good + 5] = '7'; /* a flipped byte: checksum */
        else if (k == 3)
            m = (size_t)snprintf(bad, n + 16, "\x01\x02garbage");
        else
            m = 0;
        spit(path, bad, m);
        CHECK_INT(load_of(dir, CTX, NULL), PLANCACHE_CORRUPT);
    }
    free(bad);
    pc = plancache_open(dir, "Test GPU", CTX);
    CHECK(plancache_get(pc, "conv fwd n64") == NULL); /* nothing trusted */
    CHECK_INT(plancache_put(pc, "conv fwd n64", "algo=2 math=1 ws=0"), 0);
    CHECK_INT(plancache_save(pc), 0);
    plancache_close(pc);
    int loaded;
    CHECK_INT(load_of(dir, CTX, &loaded), PLANCACHE_LOADED);
    CHECK_INT(loaded, 1);
    /* corrupt with nothing put: still rewritten (valid, empty) */
    spit(path, "junk\n", 5);
    pc = plancache_open(dir, "Test GPU", CTX);
    CHECK_INT(plancache_save(pc), 0);
    plancache_close(pc);
    CHECK_INT(load_of(dir, CTX, &loaded), PLANCACHE_LOADED);
    CHECK_INT(loaded, 0);
    free(good);
}

static void test_stale(const char *dir)
{
    plancache *pa = plancache_open(dir, "Test GPU", CTX);
    plancache *pb = plancache_open(dir, "Test GPU", CTX2);
    char pathb[512];
    CHECK(strcmp(plancache_path(pa), plancache_path(pb)) != 0); /* a file per context */
    snprintf(pathb, sizeof pathb, "%s", plancache_path(pb));
    CHECK_INT(plancache_put(pa, "conv fwd n64", "algo=3 math=1 ws=0"), 0);
    CHECK_INT(plancache_save(pa), 0);
    plancache_close(pb);
    /* context A's bytes where context B's file is (a driver update under
     * the same name, a hash collision): stale */
    size_t n;
    char *a = slurp(plancache_path(pa), &n);
    spit(pathb, a, n);
    CHECK_INT(load_of(dir, CTX2, NULL), PLANCACHE_STALE);
    pb = plancache_open(dir, "Test GPU", CTX2);
    CHECK(plancache_get(pb, "conv fwd n64") == NULL);
    CHECK_INT(plancache_save(pb), 0); /* rebuilt for B */
    plancache_close(pb);
    CHECK_INT(load_of(dir, CTX2, NULL), PLANCACHE_LOADED);
    /* another format version: stale */
    char *v2 = malloc(n + 1);
    memcpy(v2, a, n);
    v2[strlen("matrix-plan-cache ")] = '9';
    spit(plancache_path(pa), v2, n);
    CHECK_INT(load_of(dir, CTX, NULL), PLANCACHE_STALE);
    plancache_close(pa);
    free(a);
    free(v2);
}

static void test_unwritable(const char *base)
{
    char file[512], dir[600];
    snprintf(file, sizeof file, "%s/a-file", base);
    spit(file, "x", 1);
    snprintf(dir, sizeof dir, "%s/sub", file); /* under a regular file: cannot be made */
    plancache *pc = plancache_open(dir, "Test GPU", CTX);
    plancache_stats st;
    CHECK(pc != NULL);
    CHECK(plancache_get(pc, "k") == NULL);
    CHECK_INT(plancache_put(pc, "k", "v"), 0);
    CHECK_INT(plancache_save(pc), -1);
    CHECK_STR(plancache_get(pc, "k"), "v"); /* goes on in memory */
    plancache_get_stats(pc, &st);
    CHECK_INT(st.save_failed, 1);
    char info[512];
    plancache_info(pc, info, sizeof info);
    CHECK(strncmp(info, "plan_cache=read-only\n", 21) == 0);
    plancache_close(pc);
    if (geteuid() == 0) {
        printf("test_plancache: a read-only directory not checked (root writes anyway)\n");
        return;
    }
    snprintf(dir, sizeof dir, "%s/ro", base);
    mkdir(dir, 0500);
    pc = plancache_open(dir, "Test GPU", CTX);
    CHECK_INT(plancache_put(pc, "k", "v"), 0);
    CHECK_INT(plancache_save(pc), -1);
    plancache_close(pc);
}

/* Not a regular file where the cache file goes: a FIFO (open had blocked
 * for ever: a CUDA point hung before its first step) or a directory is
 * unreadable, "not a regular file", and the point goes on in memory. */
static void test_not_a_file(const char *base)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/odd", base);
    mkdir(dir, 0777);
    plancache *pc = plancache_open(dir, "Test GPU", CTX);
    char *path = strdup(plancache_path(pc));
    plancache_close(pc);
    CHECK_INT(mkfifo(path, 0666), 0);
    alarm(20); /* a hang is a failure, not a stuck make check */
    CHECK_INT(load_of(dir, CTX, NULL), PLANCACHE_UNREADABLE);
    alarm(0);
    pc = plancache_open(dir, "Test GPU", CTX);
    CHECK_INT(plancache_put(pc, "k", "v"), 0);
    CHECK_STR(plancache_get(pc, "k"), "v");
    plancache_close(pc);
    unlink(path);
    CHECK_INT(mkdir(path, 0777), 0);
    CHECK_INT(load_of(dir, CTX, NULL), PLANCACHE_UNREADABLE);
    rmdir(path);
    free(path);
}

#define WRITERS 8
#define ROUNDS 5
#define KEYS 20

/* A writer: ROUNDS times open, put KEYS keys of its own and one shared
 * key, save, close. */
static int writer(const char *dir, int w)
{
    char key[64], val[64];
    for (int r = 0; r < ROUNDS; r++) {
        plancache *pc = plancache_open(dir, "Test GPU", CTX);
        if (!pc)
            return 1;
        plancache_stats st;
        plancache_get_stats(pc, &st);
        if (st.load != PLANCACHE_LOADED && st.load != PLANCACHE_NEW)
            return 2;
        for (int k = 0; k < KEYS; k++) {
            snprintf(key, sizeof key, "w%d r%d k%d", w, r, k);
            snprintf(val, sizeof val, "value of w%d r%d k%d", w, r, k);
            plancache_put(pc, key, val);
        }
        snprintf(val, sizeof val, "writer %d", w);
        plancache_put(pc, "shared", val);
        if (plancache_save(pc))
            return 3;
        plancache_close(pc);
    }
    return 0;
}

/* A reader: opens the file over and over; any load other than new or
 * loaded is a torn or corrupt file seen. */
static int reader(const char *dir)
{
    for (int i = 0; i < 300; i++) {
        int l = load_of(dir, CTX, NULL);
        if (l != PLANCACHE_LOADED && l != PLANCACHE_NEW)
            return 4;
    }
    return 0;
}

static void test_concurrent(const char *dir)
{
    pid_t pid[WRITERS + 2];
    for (int i = 0; i < WRITERS + 2; i++) {
        pid[i] = fork();
        CHECK(pid[i] >= 0);
        if (pid[i] == 0)
            _exit(i < WRITERS ? writer(dir, i) : reader(dir));
    }
    for (int i = 0; i < WRITERS + 2; i++) {
        int status = 0;
        CHECK(pid[i] > 0 && waitpid(pid[i], &status, 0) == pid[i]);
        CHECK(WIFEXITED(status));
        CHECK_INT(WEXITSTATUS(status), 0);
    }
    plancache *pc = plancache_open(dir, "Test GPU", CTX);
    plancache_stats st;
    plancache_get_stats(pc, &st);
    CHECK_INT(st.load, PLANCACHE_LOADED);
    CHECK_INT(st.loaded, WRITERS * ROUNDS * KEYS + 1);
    char key[64], val[64];
    int wrong = 0;
    for (int w = 0; w < WRITERS; w++)
        for (int r = 0; r < ROUNDS; r++)
            for (int k = 0; k < KEYS; k++) {
                snprintf(key, sizeof key, "w%d r%d k%d", w, r, k);
                snprintf(val, sizeof val, "value of w%d r%d k%d", w, r, k);
                const char *v = plancache_get(pc, key);
                wrong += !v || strcmp(v, val) != 0;
            }
    CHECK_INT(wrong, 0);
    const char *sh = plancache_get(pc, "shared");
    CHECK(sh && strncmp(sh, "writer ", 7) == 0);
    plancache_close(pc);
    /* no temporary file left behind */
    DIR *d = opendir(dir);
    struct dirent *de;
    int tmp = 0;
    while (d && (de = readdir(d)))
        tmp += strstr(de->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    CHECK_INT(tmp, 0);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    char sub[300];
    snprintf(root, sizeof root, "%s/test_plancache.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    test_dir();
    snprintf(sub, sizeof sub, "%s/a/b/matrix", root); /* made at the first save */
    test_round_trip(sub);
    test_corrupt(sub);
    test_stale(sub);
    test_unwritable(root);
    test_not_a_file(root);
    snprintf(sub, sizeof sub, "%s/concurrent", root);
    test_concurrent(sub);
    rm_tree(root);
    return T_DONE();
}
