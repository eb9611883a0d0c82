/* Error handlers per communicator: the error is a send to a rank that is not there, on WORLD or on
 * a copy. -DFREED: a copy set to MPI_ERRORS_RETURN is freed, the next copy (its handle again) errs.
 * -DOTHER: a copy set to MPI_ERRORS_RETURN, the error on MPI_COMM_WORLD. -DINHERIT: the world set
 * to MPI_ERRORS_RETURN, copied, set back; the error on the copy. -DMADE: a handler of the program's
 * that prints and aborts; -DMADE_RETURNS: one that prints and returns. -DGROUP: the world set to
 * MPI_ERRORS_RETURN, a copy to MPI_ERRORS_ARE_FATAL and used; the error in MPI_Group_translate_ranks,
 * which no communicator is of (MPI_COMM_WORLD's handler). -DMANY: 20 handlers made and freed, one
 * at a time, then one set on the world, as -DMADE. */
#include <mpi.h>
#include <stdio.h>
static void handler(MPI_Comm *comm, int *code, ...) {
    char why[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(*code, why, &len);
    printf("handler: %s\n", why);
#ifndef MADE_RETURNS
    MPI_Abort(*comm, 3);
#endif
}
int main(int argc, char **argv) {
    int me, n, x = 1;
    MPI_Comm a, b, on = MPI_COMM_WORLD;
    MPI_Errhandler h;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    printf("rank %d enters\nrank %d leaves\n", me, me);
#if defined(FREED)
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
    MPI_Comm_free(&a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Comm_get_errhandler(b, &h);
    if (h != MPI_ERRORS_ARE_FATAL) return 4;
    on = b;
#elif defined(OTHER)
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
#elif defined(INHERIT)
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_get_errhandler(a, &h);
    if (h != MPI_ERRORS_RETURN) return 5;
    on = a;
#elif defined(GROUP)
    MPI_Group world;
    int bad = n, out;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_errhandler(a, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_group(a, &world);
    MPI_Barrier(a); /* this thread's last communicator: the copy, whose errors are fatal */
    if (me == 1) MPI_Group_translate_ranks(world, 1, &bad, world, &out); /* MPI_ERR_RANK */
    MPI_Finalize();
    return 0;
#elif defined(MANY)
    for (int i = 0; i < 20; i++) {
        MPI_Comm_create_errhandler(handler, &h);
        MPI_Errhandler_free(&h);
    }
    MPI_Comm_create_errhandler(handler, &h);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, h);
    MPI_Errhandler_free(&h);
#elif defined(MADE) || defined(MADE_RETURNS)
    MPI_Comm_create_errhandler(handler, &h);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, h);
    MPI_Errhandler_free(&h);
#endif
    (void)a; (void)b; (void)h; (void)handler;
    if (me == 1) MPI_Send(&x, 1, MPI_INT, n, 0, on);
    MPI_Finalize();
    return 0;
}
