/* fuzz_plancache.c - libFuzzer harness for the plan cache's file reader
 * (engine/plancache.c, included here to reach its static parser): every
 * input is the bytes of a cache file, read for a fixed context. Any input
 * must end in loaded, stale or corrupt, never a crash, a hang or a leak;
 * a loaded one, written back as a save writes it, must read back to the
 * same entries in the same order. */
#include "../../engine/plancache.c"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CTX "engine 0.1.0; gpu Fuzz GPU; cc 9.0; sms 132; driver 13000"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *b = malloc(size + 1);
    if (!b)
        return 0;
    memcpy(b, data, size);
    b[size] = 0;
    pc_entry *e = NULL, *e2 = NULL;
    int n = 0, n2 = 0;
    const char *why;
    int st = pc_parse(b, size, FUZZ_CTX, &e, &n, &why);
    if (st != PLANCACHE_LOADED && st != PLANCACHE_STALE && st != PLANCACHE_CORRUPT)
        abort();
    if (st == PLANCACHE_LOADED) {
        plancache pc;
        size_t len;
        memset(&pc, 0, sizeof pc);
        pc.context = (char *)FUZZ_CTX;
        pc.e = e;
        pc.n = n;
        char *out = pc_format(&pc, &len);
        if (!out || pc_parse(out, len, FUZZ_CTX, &e2, &n2, &why) != PLANCACHE_LOADED || n2 != n)
            abort();
        for (int i = 0; i < n; i++)
            if (strcmp(e[i].key, e2[i].key) != 0 || strcmp(e[i].value, e2[i].value) != 0)
                abort();
        free(out);
        pc_free_entries(e2, n2);
    }
    pc_free_entries(e, n);
    free(b);
    return 0;
}
