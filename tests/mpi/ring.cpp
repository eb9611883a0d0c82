/* C++ through mutexlab mpicxx (tests/test_mpi.py): a receiving pthread, a vector sent, entry by mutexlab.h. */
#include <mpi.h>
#include <mutexlab.h>
#include <pthread.h>
#include <vector>
static int rank_, size_;
static void *recv_one(void *) {
    int x;
    MPI_Status st;
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    return nullptr;
}
int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    pthread_t t;
    pthread_create(&t, nullptr, recv_one, nullptr);
    std::vector<int> v{rank_};
    MPI_Send(v.data(), 1, MPI_INT, (rank_ + 1) % size_, 0, MPI_COMM_WORLD);
    pthread_join(t, nullptr);
    mutexlab_enter("cs");
    mutexlab_exit("cs");
    MPI_Finalize();
}
