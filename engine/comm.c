/* comm.c - starting ranks and joining them (comm.h). */
#include "config.h"
#include "comm.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MATRIX_PKGLIBDIR
#define MATRIX_PKGLIBDIR "/usr/local/lib/matrix"
#endif

comm *engine_comm;
static comm the_comm;
static void *mpi_module;

int comm_is_rank(void)
{
    const char *s = getenv("MATRIX_ENGINE_RANK_OF");
    return s && *s && getenv("OMPI_COMM_WORLD_SIZE");
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

int comm_launch(int argc, char **argv, int ranks, char *err, size_t n)
{
    char mpirun[4096], self[4096], np[16];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0) {
        snprintf(err, n, "unable to find the engine's own path: %s", strerror(errno));
        return -1;
    }
    self[k] = 0;
    if (find_mpirun(mpirun, sizeof mpirun)) {
        snprintf(err, n, "--gpus %d needs MPI to start %d ranks: mpirun not found (install openmpi-bin, or set MATRIX_MPIRUN)",
                 ranks, ranks);
        return -1;
    }
    snprintf(np, sizeof np, "%d", ranks);
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

int comm_join(char *err, size_t n)
{
    char self[4096], path[4200];
    const char *env = getenv("MATRIX_ENGINE_MPI");
    path[0] = 0;
    if (env && *env)
        snprintf(path, sizeof path, "%s", env);
    else {
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
