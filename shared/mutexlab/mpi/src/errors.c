/* Error handlers and error strings of mutexlab's MPI (docs/mpi.md#subset).
 *
 * An error MPI's default handler (MPI_ERRORS_ARE_FATAL) makes fatal ends the rank with the error's
 * code: the `crashed` finding, its last words naming the error. A program that asked for
 * MPI_ERRORS_RETURN on a communicator expects such a call to return the code, and may handle it
 * and go on: mutexlab's MPI does not return errors, so there the run is stopped instead, saying so
 * (exit 2, not judged) — never a crash the program, under another MPI, might not have had. A handler
 * the program made (MPI_Comm_create_errhandler) is called, as MPI calls it; one that returns would
 * have the call return the code: not judged either. The handler is the one of the communicator the
 * failing call was on (a wait's: its request's; a group call's: MPI_COMM_WORLD's); a new
 * communicator inherits its parent's, a freed one's is forgotten. Every
 * call that succeeds returns MPI_SUCCESS, as under any handler, so a program that checks each code
 * (`if (rc != MPI_SUCCESS) { MPI_Error_string(rc, …); MPI_Abort(…); }`) runs as it would. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define HANDLED 72 /* communicators at once: the world, MPI_COMM_SELF and 64 more (comm.c), with room */
#define MADE 16    /* handlers made by MPI_Comm_create_errhandler */
static struct {
    int id, handler; /* a communicator's context id and its handler; unlisted: MPI_ERRORS_ARE_FATAL */
} set_on[HANDLED];
static int n_set;
static MPI_Comm_errhandler_function *made_fns[MADE]; /* handle FIRST_MADE + i */
static unsigned char made_freed[MADE]; /* MPI_Errhandler_free called: its slot is made again once unused */
#define FIRST_MADE 4
static __thread int err_ctx; /* the communicator of this thread's last call (its context): its errors' */

void ml_error_on(int ctx) { err_ctx = ctx; }

static int known(MPI_Errhandler h) { /* under the lock */
    if (h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT) return 1;
    return h >= FIRST_MADE && h < FIRST_MADE + MADE && made_fns[h - FIRST_MADE] && !made_freed[h - FIRST_MADE];
}

static int find(int id) { /* under the lock: its index in set_on, or -1 */
    for (int i = 0; i < n_set; i++)
        if (set_on[i].id == id) return i;
    return -1;
}

static void set_held(int id, int handler) { /* under the lock */
    int i = find(id);
    if (handler == MPI_ERRORS_ARE_FATAL) { /* the default: not listed */
        if (i >= 0) set_on[i] = set_on[--n_set];
        return;
    }
    if (i < 0) {
        if (n_set == HANDLED) {
            ml_unlock();
            ml_fatal("error handlers on more than %d communicators at once", HANDLED);
        }
        i = n_set++;
        set_on[i].id = id;
    }
    set_on[i].handler = handler;
}

int ml_handler_held(void) { /* under the lock: the handler of the communicator of this thread's error */
    int i = find(err_ctx / 4);
    return i < 0 ? MPI_ERRORS_ARE_FATAL : set_on[i].handler;
}

/* A new communicator inherits its parent's handler, as MPI says; a freed one's is forgotten, so a
 * handle used again starts with MPI_ERRORS_ARE_FATAL. */
void ml_errhandler_inherit(int parent_ctx, int ctx) {
    ml_lock();
    int i = find(parent_ctx / 4);
    set_held(ctx / 4, i < 0 ? MPI_ERRORS_ARE_FATAL : set_on[i].handler);
    ml_unlock();
}

void ml_errhandler_forget(int ctx) {
    ml_lock();
    set_held(ctx / 4, MPI_ERRORS_ARE_FATAL);
    ml_unlock();
}

static int held_by_any(int handler) { /* under the lock */
    for (int i = 0; i < n_set; i++)
        if (set_on[i].handler == handler) return 1;
    return 0;
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler) {
    ml_lock();
    int i = 0; /* a slot never used, or freed and held by no communicator (MPI frees it then) */
    while (i < MADE && made_fns[i] && !(made_freed[i] && !held_by_any(FIRST_MADE + i))) i++;
    if (i < MADE) {
        made_fns[i] = fn;
        made_freed[i] = 0;
    }
    ml_unlock();
    if (i == MADE) ml_fatal("MPI_Comm_create_errhandler: more than %d error handlers at once", MADE);
    *errhandler = FIRST_MADE + i;
    return MPI_SUCCESS;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
    int ctx = ml_comm(comm, "MPI_Comm_set_errhandler");
    ml_lock();
    int ok = known(errhandler);
    ml_unlock();
    if (!ok)
        ml_fatal("MPI_Comm_set_errhandler with error handler %d: not MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, "
                 "MPI_ERRORS_ABORT or one MPI_Comm_create_errhandler made (and not freed)", errhandler);
    ml_lock();
    set_held(ctx / 4, errhandler);
    ml_unlock();
    return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler) {
    int ctx = ml_comm(comm, "MPI_Comm_get_errhandler");
    ml_lock();
    int i = find(ctx / 4);
    *errhandler = i < 0 ? MPI_ERRORS_ARE_FATAL : set_on[i].handler;
    if (*errhandler >= FIRST_MADE && *errhandler < FIRST_MADE + MADE) /* a new reference: the program's */
        made_freed[*errhandler - FIRST_MADE] = 0;
    ml_unlock();
    return MPI_SUCCESS;
}

/* A handler made by MPI_Comm_create_errhandler stays for the communicators set to it, and its slot
 * is made again once none is (as MPI frees it); the handle is MPI_ERRHANDLER_NULL. */
int MPI_Errhandler_free(MPI_Errhandler *errhandler) {
    MPI_Errhandler h = *errhandler;
    if (h >= FIRST_MADE && h < FIRST_MADE + MADE) {
        ml_lock();
        made_freed[h - FIRST_MADE] = 1;
        ml_unlock();
    }
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

/* The program's own handler for an error of ``code`` on the communicator of context ``ctx``, called
 * without the library's lock (it may print, call MPI_Error_string, MPI_Abort). */
static __thread int in_handler;
int ml_call_made_handler(int handler, int ctx, int code) {
    if (in_handler || handler < FIRST_MADE || handler >= FIRST_MADE + MADE) return 0;
    MPI_Comm_errhandler_function *fn = made_fns[handler - FIRST_MADE];
    MPI_Comm comm = ml_comm_handle(ctx);
    if (!fn) return 0;
    in_handler = 1;
    fn(&comm, &code);
    in_handler = 0;
    return 1;
}

int ml_error_ctx(void) { return err_ctx; }

/* MPI_Comm_call_errhandler: the communicator's handler called on ``errorcode`` as MPI says: fatal
 * ends the rank (the crashed finding), MPI_ERRORS_RETURN returns, the program's own is called. */
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
    int ctx = ml_comm(comm, "MPI_Comm_call_errhandler");
    ml_lock();
    int i = find(ctx / 4), handler = i < 0 ? MPI_ERRORS_ARE_FATAL : set_on[i].handler;
    ml_unlock();
    if (handler == MPI_ERRORS_RETURN) return MPI_SUCCESS;
    if (handler >= FIRST_MADE) {
        ml_call_made_handler(handler, ctx, errorcode);
        return MPI_SUCCESS;
    }
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(errorcode, text, &len);
    ml_error(errorcode, "MPI_Comm_call_errhandler with %s", text);
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
    case MPI_ERR_TOPOLOGY: return "MPI_ERR_TOPOLOGY: invalid topology";
    case MPI_ERR_DIMS: return "MPI_ERR_DIMS: invalid dimension argument";
    case MPI_ERR_ARG: return "MPI_ERR_ARG: invalid argument of some other kind";
    case MPI_ERR_WIN: return "MPI_ERR_WIN: invalid window";
    case MPI_ERR_LOCKTYPE: return "MPI_ERR_LOCKTYPE: invalid lock type";
    case MPI_ERR_RMA_SYNC: return "MPI_ERR_RMA_SYNC: an RMA call outside or against its synchronization";
    case MPI_ERR_RMA_RANGE: return "MPI_ERR_RMA_RANGE: target memory is not part of the window";
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
