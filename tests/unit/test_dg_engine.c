/* test_dg_engine.c - the text form of a cuDNN engine config that the plan
 * cache stores for the CUDA backend's graph-API convolutions
 * (engine/cuda/dg_engine.h): written and read back exactly, and every
 * malformed or out-of-range form refused (a refused entry is searched
 * again, never half-used). Runs on the host, no GPU. */
#include "../../engine/cuda/dg_engine.h"
#include "t.h"

static int roundtrip(const dg_engine *e)
{
    char s[2048];
    dg_engine b;
    dg_engine_str(e, s, sizeof s);
    if (dg_engine_parse(s, &b) != 0 || b.id != e->id || b.nknobs != e->nknobs)
        return 0;
    for (int i = 0; i < e->nknobs; i++)
        if (b.knob_type[i] != e->knob_type[i] || b.knob_value[i] != e->knob_value[i])
            return 0;
    return b.numerical == 0 && b.behavior == 0;
}

int main(void)
{
    dg_engine e = {0};
    char s[2048];
    e.id = 42;
    dg_engine_str(&e, s, sizeof s);
    CHECK_STR(s, "42");
    CHECK(roundtrip(&e));
    e.nknobs = 3;
    e.knob_type[0] = 2; e.knob_value[0] = 1;
    e.knob_type[1] = 3; e.knob_value[1] = -1; /* knob values may be negative (e.g. "any") */
    e.knob_type[2] = 43; e.knob_value[2] = 9007199254740993LL;
    e.numerical = 5; /* notes are the engine's: not stored */
    dg_engine_str(&e, s, sizeof s);
    CHECK_STR(s, "42:2=1,3=-1,43=9007199254740993");
    CHECK(roundtrip(&e));
    e.nknobs = DG_MAX_KNOBS; /* every slot */
    for (int i = 0; i < DG_MAX_KNOBS; i++) {
        e.knob_type[i] = i;
        e.knob_value[i] = 1000 - 7 * i;
    }
    CHECK(roundtrip(&e));

    dg_engine b;
    static const char *const bad[] = {
        "", ":", "-1", "x", "42:", "42:1", "42:1=", "42:=1", "42:-1=2", "42:1=2,", "42:1=2,,3=4",
        "42 ", " 42", "42:1=2 ", "42;1=2", "42:1=2=3", "4 2", "99999999999999999999",
        "42:1=99999999999999999999", "42:1=-", "+42",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = dg_engine_parse(bad[i], &b);
        if (rc != -1)
            fprintf(stderr, "accepted '%s'\n", bad[i]);
        CHECK_INT(rc, -1);
    }
    /* one knob more than the struct holds */
    char big[4096];
    size_t len = (size_t)snprintf(big, sizeof big, "7");
    for (int i = 0; i <= DG_MAX_KNOBS; i++)
        len += (size_t)snprintf(big + len, sizeof big - len, "%s%d=1", i ? "," : ":", i);
    CHECK_INT(dg_engine_parse(big, &b), -1);
    /* a buffer too small: no text at all, which the parse refuses (cut
     * short, "42:12=345" would read back as "42:12=3", another config) */
    e.nknobs = 1;
    e.knob_type[0] = 12;
    e.knob_value[0] = 345;
    for (size_t n = 1; n <= 9; n++) {
        dg_engine_str(&e, s, n);
        CHECK_STR(s, "");
        CHECK_INT(dg_engine_parse(s, &b), -1);
    }
    dg_engine_str(&e, s, 10); /* just fits */
    CHECK_STR(s, "42:12=345");
    CHECK(roundtrip(&e));
    e.nknobs = 0;
    dg_engine_str(&e, s, 2); /* the id alone cut short */
    CHECK_STR(s, "");
    T_DONE();
}
