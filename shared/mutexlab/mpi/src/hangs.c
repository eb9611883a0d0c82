/* What a rank's main thread waits in, said with its done line: {"type":"done","blocked":"..."}.
 * The director reads it of the rank's last done: when the run comes to rest (nothing to deliver,
 * no step left) and a rank's main thread still waits, that rank never ends under any MPI, and
 * the run is a hang finding (docs/mpi.md). A main thread that returned, called exit or reached
 * MPI_Finalize has ended, whatever its other threads wait in. */
#include <stdio.h>

#include "internal.h"

static void who(char *out, size_t size, const char *what, int rank) {
    if (rank == MPI_ANY_SOURCE)
        snprintf(out, size, "any %s", what);
    else
        snprintf(out, size, "%s %d", what, rank);
}

void ml_wait_what(char *what, size_t size, int kind, const char *call, int peer, int tag, int ctx) {
    char from[32], tagged[32] = "any tag", comm[48] = "";
    if (tag != MPI_ANY_TAG) snprintf(tagged, sizeof tagged, "tag %d", tag);
    if (ctx / 4 != 0) snprintf(comm, sizeof comm, ", communicator #%d", ctx / 4);
    if (ctx % 4 != CTX_P2P && kind != ML_WAIT_OTHER) { /* a collective's own message: its tag is internal */
        who(from, sizeof from, "rank", peer);
        snprintf(what, size, "%s (for %s%s)", call, from, comm);
    } else if (kind == ML_WAIT_RECV || kind == ML_WAIT_PROBE) {
        who(from, sizeof from, "source", peer);
        snprintf(what, size, "%s (%s, %s%s)", call, from, tagged, comm);
    } else if (kind == ML_WAIT_SEND || kind == ML_WAIT_STD_SEND) {
        snprintf(what, size, "%s (a %s send to rank %d, %s%s, %snever received)", call,
                 kind == ML_WAIT_STD_SEND ? "standard" : "synchronous", peer, tagged, comm,
                 kind != ML_WAIT_STD_SEND ? ""
                 : ml_sync_sends()        ? "synchronous under --sync-sends, "
                                          : "synchronous past 4040 bytes, as under Open MPI, ");
    } else if (call) {
        snprintf(what, size, "%s", call);
    } else {
        snprintf(what, size, "a loop of MPI_Test or MPI_Iprobe with nothing new");
    }
}

int ml_waits_in(char *line, size_t size, int kind, const char *call, int peer, int tag, int ctx) {
    char what[200];
    ml_wait_what(what, sizeof what, kind, call, peer, tag, ctx);
    /* under --sync-sends a hang may be one only where standard sends wait for their receive */
    int k = snprintf(line, size, "{\"type\":\"done\",\"blocked\":\"%s\"%s}\n", what,
                     ml_sync_sends() || ml_sized_sync() ? ",\"sync_sends\":true" : "");
    return k > 0 && (size_t)k < size ? k : 0;
}
