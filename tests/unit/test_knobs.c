/* test_knobs.c - the engine's MATRIX_ENGINE_* knobs (engine/knobs.c, issue
 * 11: every knob honest): each knob's values and default, the exact message
 * of a refused value (the knob, the value, the values it takes), the
 * CUDA backend's knobs read by the plain C that the CPU build checks, the
 * refused pair, MATRIX_ENGINE_DIE_RANK's form, and the record's list, which
 * never carries raw text. */
#include "config.h"
#include "t.h"

#include "../../engine/knobs.h"

#include <stdlib.h>

static const char *const names[] = {
    "MATRIX_ENGINE_CONV", "MATRIX_ENGINE_BNSTATS", "MATRIX_ENGINE_OPTIM", "MATRIX_ENGINE_SDPA", "MATRIX_ENGINE_GEMM",
    "MATRIX_ENGINE_POISON", "MATRIX_ENGINE_BN_BWD", "MATRIX_ENGINE_DATA_UPLOAD", "MATRIX_ENGINE_LAUNCH",
    "MATRIX_ENGINE_DP", "MATRIX_ENGINE_PROFILE", "MATRIX_ENGINE_DIE_RANK", "MATRIX_ENGINE_BUCKET_KB",
};

static void clear(void)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unsetenv(names[i]);
}

/* knobs_check's message for NAME=VALUE alone ("" when accepted) */
static const char *check_one(const char *name, const char *value)
{
    static char err[512];
    clear();
    setenv(name, value, 1);
    err[0] = 0;
    if (!knobs_check(err, sizeof err))
        err[0] = 0;
    return err;
}

int main(void)
{
    char err[512], list[512];
    int rank, by_exit;
    clear();

    /* unset or empty: the default, index 0 */
    for (int k = 0; k < KNOB_COUNT; k++) {
        CHECK_STR(knob_name((enum knob)k), names[k]);
        CHECK_INT(knob_parse((enum knob)k, NULL, err, sizeof err), 0);
        CHECK_INT(knob_parse((enum knob)k, "", err, sizeof err), 0);
        CHECK_INT(knob_get((enum knob)k, err, sizeof err), 0);
        CHECK_INT(knob_is_set((enum knob)k), 0);
    }
    CHECK_INT(knobs_check(err, sizeof err), 0);
    knobs_list(list, sizeof list);
    CHECK_STR(list, "none");

    /* the values, in the order the backends' enums use */
    CHECK_INT(knob_parse(KNOB_CONV, "graph", err, sizeof err), 1);
    CHECK_INT(knob_parse(KNOB_CONV, "legacy", err, sizeof err), 2);
    CHECK_INT(knob_parse(KNOB_BNSTATS, "conv", err, sizeof err), 1);
    CHECK_INT(knob_parse(KNOB_OPTIM, "per-tensor", err, sizeof err), 1);
    CHECK_INT(knob_parse(KNOB_SDPA, "auto", err, sizeof err), 0);
    CHECK_INT(knob_parse(KNOB_SDPA, "kernel", err, sizeof err), 1);
    CHECK_INT(knob_parse(KNOB_BN_BWD, "separate", err, sizeof err), 1);
    CHECK_INT(knob_parse(KNOB_DATA_UPLOAD, "pageable", err, sizeof err), 1);
    CHECK_INT(knob_parse(KNOB_LAUNCH, "mpirun", err, sizeof err), 2);
    CHECK_INT(knob_parse(KNOB_PROFILE, "1", err, sizeof err), 1);
    CHECK_INT(knob_parse(KNOB_PROFILE, "0", err, sizeof err), 0);
    CHECK_STR(knob_value(KNOB_SDPA, 1), "kernel");
    CHECK_INT(knob_parse(KNOB_GEMM, "kernel", err, sizeof err), 1);
    CHECK_INT(knob_parse(KNOB_GEMM, "cublaslt", err, sizeof err), -1);
    CHECK_STR(err, "MATRIX_ENGINE_GEMM='cublaslt' is not one of auto, kernel (default auto)");
    CHECK_STR(knob_value(KNOB_DATA_UPLOAD, 0), "pinned");

    /* every value but those is refused, with the knob, the value and the values */
    CHECK_INT(knob_parse(KNOB_SDPA, "cudnn", err, sizeof err), -1);
    CHECK_STR(err, "MATRIX_ENGINE_SDPA='cudnn' is not one of auto, kernel (default auto)");
    CHECK_INT(knob_parse(KNOB_SDPA, "Kernel", err, sizeof err), -1);
    CHECK_INT(knob_parse(KNOB_SDPA, "kernel ", err, sizeof err), -1);
    CHECK_INT(knob_parse(KNOB_BNSTATS, "on", err, sizeof err), -1);
    CHECK_STR(err, "MATRIX_ENGINE_BNSTATS='on' is not one of separate, conv (default separate)");
    /* MATRIX_ENGINE_PROFILE=0 turned the profile on, as any value did */
    CHECK_STR(check_one("MATRIX_ENGINE_PROFILE", "yes"),
              "MATRIX_ENGINE_PROFILE='yes' is not one of 0, 1 (default 0)");
    CHECK_STR(check_one("MATRIX_ENGINE_POISON", "true"),
              "MATRIX_ENGINE_POISON='true' is not one of 0, 1 (default 0)");
    CHECK_STR(check_one("MATRIX_ENGINE_DP", "2"), "MATRIX_ENGINE_DP='2' is not one of 0, 1 (default 0)");
    CHECK_STR(check_one("MATRIX_ENGINE_CONV", "bogus"),
              "MATRIX_ENGINE_CONV='bogus' is not one of auto, graph, legacy, kernel (default auto)");
    CHECK_STR(check_one("MATRIX_ENGINE_OPTIM", "multi"),
              "MATRIX_ENGINE_OPTIM='multi' is not one of fused, per-tensor (default fused)");
    CHECK_STR(check_one("MATRIX_ENGINE_BN_BWD", "yes"),
              "MATRIX_ENGINE_BN_BWD='yes' is not one of fused, separate (default fused)");
    CHECK_STR(check_one("MATRIX_ENGINE_DATA_UPLOAD", "Pinned"),
              "MATRIX_ENGINE_DATA_UPLOAD='Pinned' is not one of pinned, pageable (default pinned)");
    CHECK_STR(check_one("MATRIX_ENGINE_LAUNCH", "slurm"),
              "MATRIX_ENGINE_LAUNCH='slurm' is not one of auto, local, mpirun (default auto)");
    CHECK_STR(check_one("MATRIX_ENGINE_SDPA", "kernel"), "");

    /* the pair refused */
    clear();
    setenv("MATRIX_ENGINE_BNSTATS", "conv", 1);
    setenv("MATRIX_ENGINE_CONV", "legacy", 1);
    CHECK_INT(knobs_check(err, sizeof err), -1);
    CHECK_STR(err, "MATRIX_ENGINE_BNSTATS=conv needs the cuDNN graph API, which MATRIX_ENGINE_CONV=legacy turns off");
    setenv("MATRIX_ENGINE_CONV", "kernel", 1);
    CHECK_INT(knobs_check(err, sizeof err), -1);
    CHECK_STR(err, "MATRIX_ENGINE_BNSTATS=conv needs the cuDNN graph API, which MATRIX_ENGINE_CONV=kernel turns off");
    setenv("MATRIX_ENGINE_CONV", "graph", 1);
    CHECK_INT(knobs_check(err, sizeof err), 0);

    /* MATRIX_ENGINE_DIE_RANK=K[:exit]: atoi read 'x' as rank 0 */
    clear();
    CHECK_INT(knob_die_rank(&rank, &by_exit, err, sizeof err), 0);
    CHECK_INT(rank, -1);
    setenv("MATRIX_ENGINE_DIE_RANK", "1:exit", 1);
    CHECK_INT(knob_die_rank(&rank, &by_exit, err, sizeof err), 0);
    CHECK_INT(rank, 1);
    CHECK_INT(by_exit, 1);
    setenv("MATRIX_ENGINE_DIE_RANK", "0", 1);
    CHECK_INT(knob_die_rank(&rank, &by_exit, err, sizeof err), 0);
    CHECK_INT(rank, 0);
    CHECK_INT(by_exit, 0);
    setenv("MATRIX_ENGINE_DIE_RANK", "2:skew", 1);
    CHECK_INT(knob_die_rank(&rank, &by_exit, err, sizeof err), 0);
    CHECK_INT(rank, 2);
    CHECK_INT(by_exit, 2);
    const char *bad[] = {"x", "-1", "1:exitx", "1:kill", " 1", "1 ", "0x1", "1:skewx"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("MATRIX_ENGINE_DIE_RANK", bad[i], 1);
        CHECK_INT(knob_die_rank(&rank, &by_exit, err, sizeof err), -1);
    }
    CHECK_STR(check_one("MATRIX_ENGINE_DIE_RANK", "x"),
              "MATRIX_ENGINE_DIE_RANK='x' is not K, K:exit or K:skew (a test knob: rank K, a number from 0, is "
              "killed at its third step, ends it with exit status 7, or changes one of its weights there)");

    /* MATRIX_ENGINE_BUCKET_KB=K: KiB from 1 to 4 GiB, 25 MiB unset */
    size_t bucket = 0;
    clear();
    CHECK_INT(knob_bucket_bytes(&bucket, err, sizeof err), 0);
    CHECK_INT(bucket == (size_t)25 << 20, 1);
    CHECK_INT(knob_bucket_is_set(), 0);
    setenv("MATRIX_ENGINE_BUCKET_KB", "64", 1);
    CHECK_INT(knob_bucket_bytes(&bucket, err, sizeof err), 0);
    CHECK_INT(bucket == 65536, 1);
    CHECK_INT(knob_bucket_is_set(), 1);
    setenv("MATRIX_ENGINE_BUCKET_KB", "4194304", 1);
    CHECK_INT(knob_bucket_bytes(&bucket, err, sizeof err), 0);
    const char *badkb[] = {"0", "-1", "4194305", "64k", " 64", "1e3", "99999999999999999999"};
    for (size_t i = 0; i < sizeof badkb / sizeof badkb[0]; i++) {
        setenv("MATRIX_ENGINE_BUCKET_KB", badkb[i], 1);
        CHECK_INT(knob_bucket_bytes(&bucket, err, sizeof err), -1);
    }
    CHECK_STR(check_one("MATRIX_ENGINE_BUCKET_KB", "0"),
              "MATRIX_ENGINE_BUCKET_KB='0' is not a number of KiB from 1 to 4194304 (the data-parallel gradient "
              "buckets' size; default 25600, PyTorch DDP's 25 MiB)");

    /* the record's list: the table's order, the values as the table spells them, never raw text */
    clear();
    setenv("MATRIX_ENGINE_SDPA", "kernel", 1);
    setenv("MATRIX_ENGINE_BN_BWD", "separate", 1);
    setenv("MATRIX_ENGINE_DIE_RANK", "1:exit", 1);
    setenv("MATRIX_ENGINE_PROFILE", "", 1);
    setenv("MATRIX_ENGINE_BUCKET_KB", "64", 1);
    knobs_list(list, sizeof list);
    CHECK_STR(list, "MATRIX_ENGINE_SDPA=kernel MATRIX_ENGINE_BN_BWD=separate MATRIX_ENGINE_BUCKET_KB=64 "
                    "MATRIX_ENGINE_DIE_RANK=1:exit");
    setenv("MATRIX_ENGINE_BUCKET_KB", "6 4", 1);
    knobs_list(list, sizeof list);
    CHECK_STR(list, "MATRIX_ENGINE_SDPA=kernel MATRIX_ENGINE_BN_BWD=separate MATRIX_ENGINE_BUCKET_KB=? "
                    "MATRIX_ENGINE_DIE_RANK=1:exit");
    unsetenv("MATRIX_ENGINE_BUCKET_KB");
    setenv("MATRIX_ENGINE_SDPA", "kernel\nstatus=ok", 1);
    setenv("MATRIX_ENGINE_DIE_RANK", "1\n", 1);
    knobs_list(list, sizeof list);
    CHECK_STR(list, "MATRIX_ENGINE_SDPA=? MATRIX_ENGINE_BN_BWD=separate MATRIX_ENGINE_DIE_RANK=?");
    clear();
    T_DONE();
}
