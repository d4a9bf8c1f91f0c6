/* main.c - matrix-engine: one benchmark point per process.
 *
 * flags -> point -> backend -> model graph -> passes -> memory plan ->
 * measure -> result file (key=value lines, written atomically at the end).
 * Exit 0: measured; 2: bad flag or level; 3: unsupported combination
 * (status=unsupported); 1: failure (status=oom for out of memory).
 *
 * flags.c holds the options, record.c the result record, session.c the
 * steps below. */
#include "config.h"
#include "session.h"

#include <string.h>

int main(int argc, char **argv)
{
    static struct session s; /* large: off the stack */
    int rc;
    memset(&s, 0, sizeof s);
    s.t_start = measure_now();
    if ((rc = session_flags(&s, argc, argv)) != SESSION_GO ||
        (rc = session_ranks(&s, argc, argv)) != SESSION_GO ||
        (rc = session_device(&s)) != SESSION_GO || (rc = session_check(&s)) != SESSION_GO ||
        (rc = session_build(&s)) != SESSION_GO || (rc = session_passes(&s)) != SESSION_GO ||
        (rc = session_place(&s)) != SESSION_GO)
        return rc;
    if (s.o.dump)
        return session_dump(&s);
    if ((rc = session_measure(&s)) != SESSION_GO)
        return rc;
    rc = session_result(&s);
    session_free(&s);
    return rc;
}
