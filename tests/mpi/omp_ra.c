/* Ricart-Agrawala with OpenMP sections, one thread listening, one asking: runs under mpirun and
 * under mutexlab (libgomp's waits are stopped as polls): tests/test_mpi_outsiders.py. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <unistd.h>
enum { REQ = 1, REP = 2, DONE = 3 };
int me, n, clk = 0, want = 0, my_ts = 0, replies = 0, deferred[64], done_count = 0, inside = 0;
omp_lock_t lk;
int main(int argc, char **argv) {
    int prov;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    omp_init_lock(&lk);
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
        { /* listener */
            while (done_count < n) {
                int m[2]; MPI_Status st;
                MPI_Recv(m, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                omp_set_lock(&lk);
                clk = (m[0] > clk ? m[0] : clk) + 1;
                if (st.MPI_TAG == REQ) {
                    int mine = want && (my_ts < m[0] || (my_ts == m[0] && me < st.MPI_SOURCE));
                    if (inside || mine) deferred[st.MPI_SOURCE] = 1;
                    else { int r[2] = {clk, 0}; MPI_Send(r, 2, MPI_INT, st.MPI_SOURCE, REP, MPI_COMM_WORLD); }
                } else if (st.MPI_TAG == REP) replies++;
                else done_count++;
                omp_unset_lock(&lk);
            }
        }
#pragma omp section
        { /* worker */
            omp_set_lock(&lk);
            want = 1; my_ts = ++clk; replies = 0;
            for (int p = 0; p < n; p++) if (p != me) { int r[2] = {my_ts, 0}; MPI_Send(r, 2, MPI_INT, p, REQ, MPI_COMM_WORLD); }
            omp_unset_lock(&lk);
            for (;;) { omp_set_lock(&lk); int ok = replies == n - 1; omp_unset_lock(&lk); if (ok) break; usleep(100); }
            omp_set_lock(&lk); inside = 1; omp_unset_lock(&lk);
            printf("rank %d enters\n", me);
            usleep(1000);
            printf("rank %d leaves\n", me);
            omp_set_lock(&lk);
            inside = 0; want = 0;
            for (int p = 0; p < n; p++) if (deferred[p]) { deferred[p] = 0; int r[2] = {clk, 0}; MPI_Send(r, 2, MPI_INT, p, REP, MPI_COMM_WORLD); }
            omp_unset_lock(&lk);
            for (int p = 0; p < n; p++) { int r[2] = {clk, 0}; MPI_Send(r, 2, MPI_INT, p, DONE, MPI_COMM_WORLD); }
        }
    }
    MPI_Finalize();
    return 0;
}
