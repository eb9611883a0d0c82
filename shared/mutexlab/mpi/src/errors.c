/* Error handlers and error strings of mutexlab's MPI (docs/mpi.md#subset).
 *
 * An error MPI's default handler (MPI_ERRORS_ARE_FATAL) makes fatal ends the rank with the error's
 * code: the `crashed` finding, its last words naming the error. A program that asked for
 * MPI_ERRORS_RETURN on a communicator expects such a call to return the code, and may handle it
 * and go on: mutexlab's MPI does not return errors, so there the run is stopped instead, saying so
 * (exit 2, not judged) — never a crash the program, under another MPI, might not have had. Every
 * call that succeeds returns MPI_SUCCESS, as under any handler, so a program that checks each code
 * (`if (rc != MPI_SUCCESS) { MPI_Error_string(rc, …); MPI_Abort(…); }`) runs as it would. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

int ml_errors_return; /* communicators set to MPI_ERRORS_RETURN (mpi.c: an error stops the run) */
#define HANDLED 128
static unsigned char returning[HANDLED]; /* by communicator handle: 1 if MPI_ERRORS_RETURN */

static int known(MPI_Errhandler h) {
    return h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
    ml_comm(comm, "MPI_Comm_set_errhandler");
    if (!known(errhandler))
        ml_fatal("MPI_Comm_set_errhandler with error handler %d: mutexlab's MPI has MPI_ERRORS_ARE_FATAL, "
                 "MPI_ERRORS_RETURN and MPI_ERRORS_ABORT, not handlers made by MPI_Comm_create_errhandler",
                 errhandler);
    if (comm < 0 || comm >= HANDLED)
        ml_fatal("MPI_Comm_set_errhandler on communicator %d: mutexlab's MPI keeps handlers for %d", comm, HANDLED);
    ml_lock();
    int now = errhandler == MPI_ERRORS_RETURN;
    ml_errors_return += now - returning[comm];
    returning[comm] = (unsigned char)now;
    ml_unlock();
    return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler) {
    ml_comm(comm, "MPI_Comm_get_errhandler");
    *errhandler = comm >= 0 && comm < HANDLED && returning[comm] ? MPI_ERRORS_RETURN : MPI_ERRORS_ARE_FATAL;
    return MPI_SUCCESS;
}

int MPI_Errhandler_free(MPI_Errhandler *errhandler) { /* the predefined ones: nothing to free */
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

static const char *text_of(int code) {
    switch (code) {
    case MPI_SUCCESS: return "MPI_SUCCESS: no errors";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER: invalid buffer pointer";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT: invalid count argument";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE: invalid datatype";
    case MPI_ERR_TAG: return "MPI_ERR_TAG: invalid tag";
    case MPI_ERR_COMM: return "MPI_ERR_COMM: invalid communicator";
    case MPI_ERR_RANK: return "MPI_ERR_RANK: invalid rank";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT: invalid root";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP: invalid group";
    case MPI_ERR_OP: return "MPI_ERR_OP: invalid reduce operation";
    case MPI_ERR_ARG: return "MPI_ERR_ARG: invalid argument of some other kind";
    case MPI_ERR_UNKNOWN: return "MPI_ERR_UNKNOWN: unknown error";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE: message truncated";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER: known error not in this list";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN: internal error";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS: error code is in status";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING: pending request";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST: invalid request";
    default: return NULL;
    }
}

int MPI_Error_string(int errorcode, char *string, int *resultlen) {
    const char *text = text_of(errorcode);
    char other[64];
    if (!text) {
        snprintf(other, sizeof other, "unknown error code %d", errorcode);
        text = other;
    }
    int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", text);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}

int MPI_Error_class(int errorcode, int *errorclass) {
    *errorclass = text_of(errorcode) ? errorcode : MPI_ERR_UNKNOWN;
    return MPI_SUCCESS;
}
