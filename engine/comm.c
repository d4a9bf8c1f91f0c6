/* comm.c - starting ranks and joining them (comm.h). */
#include "config.h"
#include "comm.h"
#include "knobs.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#ifndef MATRIX_PKGLIBDIR
#define MATRIX_PKGLIBDIR "/usr/local/lib/matrix"
#endif

comm *engine_comm;
static comm the_comm;
static void *mpi_module;

int comm_is_rank(void)
{
    const char *s = getenv("MATRIX_ENGINE_RANK_OF");
    return s && *s && (getenv("MATRIX_ENGINE_SHM_FD") || getenv("OMPI_COMM_WORLD_SIZE"));
}

const char *comm_launcher(void) { return getenv("MATRIX_ENGINE_SHM_FD") ? "local" : "mpirun"; }

static int own_path(char *self, size_t size, char *err, size_t n)
{
    ssize_t k = readlink("/proc/self/exe", self, size - 1);
    if (k <= 0) {
        snprintf(err, n, "unable to find the engine's own path: %s", strerror(errno));
        return -1;
    }
    self[k] = 0;
    return 0;
}

/* mpirun: $MATRIX_MPIRUN, else the one on PATH. */
static int find_mpirun(char *out, size_t n)
{
    const char *env = getenv("MATRIX_MPIRUN");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return access(out, X_OK) == 0 ? 0 : -1;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(out, n, "%.*s/mpirun", (int)len, path);
        if (len && access(out, X_OK) == 0)
            return 0;
        path += len + (path[len] == ':');
    }
    return -1;
}

static int launch_mpirun(int argc, char **argv, int ranks, char *err, size_t n)
{
    char mpirun[4096], self[4096], np[16];
    if (own_path(self, sizeof self, err, n))
        return -1;
    if (find_mpirun(mpirun, sizeof mpirun)) {
        snprintf(err, n, "MATRIX_ENGINE_LAUNCH=mpirun needs MPI to start %d ranks: mpirun not found (install "
                 "openmpi-bin, set MATRIX_MPIRUN, or leave the ranks to the local launcher)", ranks);
        return -1;
    }
    snprintf(np, sizeof np, "%d", ranks);
    fprintf(stderr, "matrix-engine: ranks: launcher=mpirun (MATRIX_ENGINE_LAUNCH=mpirun, %s): %d ranks, "
            "host communicator mpi\n", mpirun, ranks);
    /* mpirun -np N [--allow-run-as-root] --bind-to none --oversubscribe
     *        --mca btl_vader_single_copy_mechanism none SELF ARGS... */
    char **av = calloc((size_t)argc + 16, sizeof *av);
    if (!av) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    int a = 0;
    av[a++] = mpirun;
    av[a++] = "-np";
    av[a++] = np;
    if (geteuid() == 0)
        av[a++] = "--allow-run-as-root";
    av[a++] = "--bind-to";
    av[a++] = "none";
    av[a++] = "--oversubscribe";
    av[a++] = "--mca";
    av[a++] = "btl_vader_single_copy_mechanism";
    av[a++] = "none";
    av[a++] = self;
    for (int i = 1; i < argc; i++)
        av[a++] = argv[i];
    av[a] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, n, "fork: %s", strerror(errno));
        free(av);
        return -1;
    }
    if (pid == 0) {
        char of[32];
        snprintf(of, sizeof of, "%d", (int)getppid());
        setenv("MATRIX_ENGINE_RANK_OF", of, 1);
        execv(mpirun, av);
        fprintf(stderr, "matrix-engine: unable to run '%s': %s\n", mpirun, strerror(errno));
        _exit(127);
    }
    free(av);
    /* SIGINT / SIGTERM reach mpirun through the process group; wait for it */
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(st)) { /* mpirun itself was killed: die the same way */
        signal(WTERMSIG(st), SIG_DFL);
        raise(WTERMSIG(st));
        return 128 + WTERMSIG(st);
    }
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    if (rc > 128 && rc <= 128 + 64) { /* a rank died of a signal: mpirun says 128 + it */
        fprintf(stderr, "matrix-engine: a rank died of signal %d; mpirun ended the others\n", rc - 128);
        signal(rc - 128, SIG_DFL);
        raise(rc - 128);
    }
    return rc;
}

/* ---- the local launcher: fork and exec the ranks, be their watchdog ---- */

static pid_t kids[COMM_SHM_MAX_RANKS]; /* live ranks' pids (0: reaped) */
static int nkids;
static volatile sig_atomic_t got_signal;

/* SIGINT / SIGTERM / SIGHUP to the launcher: to every live rank too (a
 * signal sent to the process group reaches them already; one sent to the
 * launcher's pid, e.g. by a runner's timeout, would not) */
static void forward_signal(int sig)
{
    got_signal = sig;
    for (int i = 0; i < nkids; i++)
        if (kids[i] > 0)
            kill(kids[i], sig);
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};

/* The environment of rank r: this one without the rank variables, then
 * them (made before fork: the child only calls async-signal-safe
 * functions before exec). NULL when out of memory. */
static char **rank_env(int r, int ranks, int fd, char vars[5][64])
{
    static const char *names[] = {"MATRIX_ENGINE_RANK_OF=", "MATRIX_ENGINE_RANK=", "MATRIX_ENGINE_RANKS=",
                                  "MATRIX_ENGINE_LOCAL_RANK=", "MATRIX_ENGINE_SHM_FD="};
    size_t ne = 0;
    while (environ[ne])
        ne++;
    char **env = calloc(ne + 6, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < ne; i++) {
        int ours = 0;
        for (int j = 0; j < 5; j++)
            ours |= strncmp(environ[i], names[j], strlen(names[j])) == 0;
        if (!ours)
            env[k++] = environ[i];
    }
    snprintf(vars[0], 64, "%s%d", names[0], (int)getpid());
    snprintf(vars[1], 64, "%s%d", names[1], r);
    snprintf(vars[2], 64, "%s%d", names[2], ranks);
    snprintf(vars[3], 64, "%s%d", names[3], r); /* one host: the local rank is the rank */
    snprintf(vars[4], 64, "%s%d", names[4], fd);
    for (int j = 0; j < 5; j++)
        env[k++] = vars[j];
    env[k] = NULL;
    return env;
}

static void kill_ranks(int ranks)
{
    for (int i = 0; i < ranks; i++)
        if (kids[i] > 0)
            kill(kids[i], SIGKILL);
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* After a rank's non-zero exit, how long the others may take to end on
 * their own before they are killed, seconds: a rank waiting for it in a
 * host collective fails at once (it is marked gone), and the others may
 * finish what they were doing, e.g. rank 0 writing the `unsupported`
 * result that every rank reached (only rank 0 writes it); one blocked in
 * NCCL, which cannot know, is killed. */
#define EXIT_GRACE_S 2.0

/* Wait for every rank. At the first that dies of a signal, SIGKILL the
 * others; at the first that exits non-zero, SIGKILL those still running
 * EXIT_GRACE_S later. Every rank that exits is marked gone in the shared
 * memory, so peers waiting on it in a collective give up. Returns the first
 * failure's wait status (0 when all exited 0), *who its rank (-1). */
static int watch_ranks(void *map, int ranks, int *who)
{
    int first = 0, live = ranks;
    double deadline = 0; /* > 0: when the others are killed */
    *who = -1;
    while (live > 0) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        /* WNOWAIT: mark the rank reaped before its pid can be reused */
        if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT | (deadline > 0 ? WNOHANG : 0)) < 0) {
            if (errno == EINTR)
                continue;
            break; /* ECHILD: none left */
        }
        if (si.si_pid == 0) { /* WNOHANG: none ended yet */
            if (mono_s() >= deadline) {
                kill_ranks(ranks);
                deadline = 0;
            } else {
                struct timespec ts = {0, 10 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
            continue;
        }
        int r = 0, st = 0;
        while (r < ranks && kids[r] != si.si_pid)
            r++;
        if (r < ranks)
            kids[r] = 0;
        while (waitpid(si.si_pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (r == ranks)
            continue; /* not a rank */
        live--;
        comm_shm_gone(map, r);
        if ((WIFEXITED(st) && WEXITSTATUS(st) == 0) || *who >= 0)
            continue; /* well, or after the first failure (killed by us) */
        *who = r;
        first = st;
        if (WIFSIGNALED(st))
            kill_ranks(ranks);
        else
            deadline = mono_s() + EXIT_GRACE_S;
    }
    return first;
}

/* The environments of the ranks, in envs[]; 0, or -1 (out of memory) */
static int rank_envs(char **envs[], char vars[][5][64], int ranks, int fd)
{
    for (int r = 0; r < ranks; r++)
        if (!(envs[r] = rank_env(r, ranks, fd, vars[r]))) {
            for (int i = 0; i < r; i++)
                free(envs[i]);
            return -1;
        }
    return 0;
}

/* Fork and exec the ranks (the forwarded signals blocked meanwhile, their
 * handlers installed); how many started, *fork_errno when not all. */
static int start_ranks(const char *self, char **argv, char **envs[], int ranks, struct sigaction prev[3],
                       int *fork_errno)
{
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t j = 0; j < 3; j++)
        sigaddset(&block, forwarded[j]);
    sigprocmask(SIG_BLOCK, &block, &old);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal; /* no SA_RESTART: waitid returns EINTR */
    sigemptyset(&sa.sa_mask);
    for (size_t j = 0; j < 3; j++) { /* one ignored here (a background job's SIGINT) stays ignored */
        sigaction(forwarded[j], NULL, &prev[j]);
        if (prev[j].sa_handler != SIG_IGN)
            sigaction(forwarded[j], &sa, NULL);
    }
    pid_t me = getpid();
    int started = 0;
    for (int r = 0; r < ranks; r++) {
        pid_t pid = fork();
        if (pid < 0) {
            *fork_errno = errno;
            break;
        }
        if (pid == 0) { /* the child: only async-signal-safe calls before exec */
            for (size_t j = 0; j < 3; j++)
                sigaction(forwarded[j], &prev[j], NULL);
            sigprocmask(SIG_SETMASK, &old, NULL);
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* the launcher killed: the ranks die too */
            if (getppid() != me)
                _exit(137);
            execve(self, argv, envs[r]);
            static const char msg[] = "matrix-engine: unable to exec a rank\n";
            ssize_t w = write(2, msg, sizeof msg - 1);
            (void)w;
            _exit(127);
        }
        kids[r] = pid;
        nkids = r + 1;
        started++;
    }
    if (started < ranks) /* none of them may run alone */
        kill_ranks(started);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return started;
}

/* The launcher's own end: a rank's fatal signal raised here (the runner's
 * `crashed`), else its exit status; a forwarded signal when all ended well. */
static int launcher_end(int who, int st)
{
    int sig = 0;
    if (who >= 0 && WIFSIGNALED(st)) {
        sig = WTERMSIG(st);
        fprintf(stderr, "matrix-engine: rank %d died of signal %d (%s); the launcher killed the others\n", who,
                sig, strsignal(sig));
    } else if (who >= 0) {
        fprintf(stderr, "matrix-engine: rank %d exited %d; the launcher ended the others\n", who,
                WEXITSTATUS(st));
        return WEXITSTATUS(st);
    } else if (got_signal)
        sig = got_signal; /* every rank ended well, yet the launcher was told to stop */
    if (!sig)
        return 0;
    signal(sig, SIG_DFL);
    raise(sig);
    return 128 + sig;
}

static int launch_local(char **argv, int ranks, char *err, size_t n)
{
    char self[4096];
    if (own_path(self, sizeof self, err, n))
        return -1;
    void *map = NULL;
    int fd = comm_shm_create(ranks, COMM_SHM_SLOT, &map, err, n);
    if (fd < 0)
        return -1;
    char vars[COMM_SHM_MAX_RANKS][5][64];
    char **envs[COMM_SHM_MAX_RANKS] = {0};
    if (rank_envs(envs, vars, ranks, fd)) {
        snprintf(err, n, "out of memory");
        close(fd);
        comm_shm_unmap(map);
        return -1;
    }
    const char *mode = getenv("MATRIX_ENGINE_LAUNCH");
    fprintf(stderr, "matrix-engine: ranks: launcher=local (MATRIX_ENGINE_LAUNCH=%s): %d rank%s on this host, "
            "host communicator shm\n", mode && *mode ? mode : "auto", ranks, ranks == 1 ? "" : "s");
    fflush(NULL);
    struct sigaction prev[3];
    int fork_errno = 0, who;
    int started = start_ranks(self, argv, envs, ranks, prev, &fork_errno);
    for (int r = 0; r < ranks; r++)
        free(envs[r]);
    int st = watch_ranks(map, started, &who);
    for (size_t j = 0; j < 3; j++)
        sigaction(forwarded[j], &prev[j], NULL);
    nkids = 0;
    close(fd);
    comm_shm_unmap(map);
    if (started < ranks) {
        snprintf(err, n, "unable to start %d ranks: fork: %s", ranks, strerror(fork_errno));
        return -1;
    }
    return launcher_end(who, st);
}

int comm_launch(int argc, char **argv, int ranks, char *err, size_t n)
{
    int mode = knob_get(KNOB_LAUNCH, err, n); /* auto, local, mpirun */
    if (mode < 0)
        return -2;
    return mode == 2 ? launch_mpirun(argc, argv, ranks, err, n) : launch_local(argv, ranks, err, n);
}

/* The launcher's variable name of a rank: a number in [0, max) into *v; 0,
 * or -1 with what is wrong in err. */
static int rank_var(const char *name, int max, int *v, char *err, size_t n)
{
    const char *s = getenv(name);
    char *end;
    errno = 0;
    long x = s && *s >= '0' && *s <= '9' ? strtol(s, &end, 10) : -1;
    if (x < 0 || errno || *end || x >= max) {
        snprintf(err, n, "a rank of the local launcher with %s='%s' (the launcher sets it: a number from 0 to %d)",
                 name, s ? s : "(unset)", max - 1);
        return -1;
    }
    *v = (int)x;
    return 0;
}

/* A rank of the local launcher: its shared memory (the variables the
 * launcher set, each checked: -2 when one is not a number it sets). */
static int join_shm(char *err, size_t n)
{
    int fd, r, sz, lr;
    if (rank_var("MATRIX_ENGINE_SHM_FD", 1 << 20, &fd, err, n) ||
        rank_var("MATRIX_ENGINE_RANKS", COMM_SHM_MAX_RANKS + 1, &sz, err, n) ||
        rank_var("MATRIX_ENGINE_RANK", sz, &r, err, n) || rank_var("MATRIX_ENGINE_LOCAL_RANK", sz, &lr, err, n))
        return -2;
    memset(&the_comm, 0, sizeof the_comm);
    if (comm_shm_setup(&the_comm, fd, r, sz, lr, err, n))
        return -1;
    engine_comm = &the_comm;
    return 0;
}

int comm_join(char *err, size_t n)
{
    char self[4096], path[4200];
    if (getenv("MATRIX_ENGINE_SHM_FD"))
        return join_shm(err, n);
    const char *env = getenv("MATRIX_ENGINE_MPI");
    path[0] = 0;
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
        if (access(path, F_OK) != 0) {
            snprintf(err, n, "MATRIX_ENGINE_MPI='%s': %s (the MPI module, matrix-engine-mpi.so)", env, strerror(errno));
            return -1;
        }
    } else {
        ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
        char *slash;
        if (k > 0) {
            self[k] = 0;
            if ((slash = strrchr(self, '/'))) {
                *slash = 0;
                snprintf(path, sizeof path, "%s/matrix-engine-mpi.so", self);
            }
        }
        if (!path[0] || access(path, F_OK) != 0)
            snprintf(path, sizeof path, "%s/matrix-engine-mpi.so", MATRIX_PKGLIBDIR);
    }
    if (access(path, F_OK) != 0) {
        snprintf(err, n, "built without MPI: no matrix-engine-mpi.so next to the engine or in %s",
                 MATRIX_PKGLIBDIR);
        return -1;
    }
    /* RTLD_GLOBAL: Open MPI loads its own components, which need libmpi's symbols */
    if (!(mpi_module = dlopen(path, RTLD_NOW | RTLD_GLOBAL))) {
        snprintf(err, n, "unable to load the MPI module: %s", dlerror());
        return -1;
    }
    comm_mpi_setup_fn setup = (comm_mpi_setup_fn)dlsym(mpi_module, COMM_MPI_SETUP);
    if (!setup) {
        snprintf(err, n, "unable to load the MPI module: %s has no %s", path, COMM_MPI_SETUP);
        return -1;
    }
    memset(&the_comm, 0, sizeof the_comm);
    if (setup(&the_comm, err, n))
        return -1;
    engine_comm = &the_comm;
    return 0;
}

void comm_leave(void)
{
    if (engine_comm && engine_comm->fini)
        engine_comm->fini();
    engine_comm = NULL;
}
