/* A token ring in one thread that polls, as written from a lab sheet on nonblocking probes.
 *
 * Style: the ring is its own communicator, MPI_Comm_split of the world with the keys reversed
 * (ring rank 0 is the last world rank, and the token goes round in falling world rank); the token
 * is a struct of three ints sent as an MPI_Type_contiguous; a rank waits for it in a loop of
 * MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) and usleep(1000), printing a dot line every 50 polls,
 * and reads the tag (TOKEN or STOP) from the status; the number of rounds comes by MPI_Bcast and
 * the ranks meet at MPI_Barrier on the world before MPI_Finalize.
 *
 * -DBROKEN_PASS_EARLY: the token is sent on before the rank prints that it leaves (the print is
 * after the send, so the next rank may enter before this one has left).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { TOKEN = 1, STOP = 2 };

typedef struct {
    int total;  /* entries made so far, all ranks together */
    int laps;   /* times round the ring */
    int last;   /* ring rank of the last holder */
} token_t;

static void wait_for_token(MPI_Comm ring, MPI_Datatype type, token_t *tok, int *tag) {
    int flag = 0, polls = 0;
    MPI_Status st;
    for (;;) {
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ring, &flag, &st);
        if (flag) break;
        if (++polls % 50 == 0) printf("  ... still waiting (%d polls)\n", polls);
        usleep(1000);
    }
    MPI_Recv(tok, 1, type, st.MPI_SOURCE, st.MPI_TAG, ring, MPI_STATUS_IGNORE);
    *tag = st.MPI_TAG;
}

int main(int argc, char **argv) {
    int wrank, wsize, rrank, rsize, rounds = 1, mine = 0, tag;
    MPI_Comm ring;
    MPI_Datatype token_type;
    token_t tok = {0, 0, -1};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wrank == 0 && argc > 1) rounds = atoi(argv[1]);
    MPI_Bcast(&rounds, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &ring);
    MPI_Comm_rank(ring, &rrank);
    MPI_Comm_size(ring, &rsize);
    MPI_Type_contiguous(3, MPI_INT, &token_type);
    MPI_Type_commit(&token_type);
    int next = (rrank + 1) % rsize;

    if (rrank == 0) {
        tag = TOKEN; /* ring rank 0 starts with the token */
    } else {
        wait_for_token(ring, token_type, &tok, &tag);
    }
    for (;;) {
        if (tag == STOP) {
            MPI_Send(&tok, 1, token_type, next, STOP, ring); /* on round to the one that stopped */
            break;
        }
        if (mine < rounds) {
            printf("P%d in CS (lap %d)\n", wrank, tok.laps);
            mine++;
            tok.total++;
#ifdef BROKEN_PASS_EARLY
            tok.last = rrank;
            MPI_Send(&tok, 1, token_type, next, tok.total == rounds * rsize ? STOP : TOKEN, ring);
            printf("P%d out of CS\n", wrank);
            if (tok.total == rounds * rsize) {
                wait_for_token(ring, token_type, &tok, &tag); /* the STOP back */
                break;
            }
            wait_for_token(ring, token_type, &tok, &tag);
            continue;
#else
            printf("P%d out of CS\n", wrank);
#endif
        }
        if (next == 0) tok.laps++;
        tok.last = rrank;
        if (tok.total == rounds * rsize) {
            MPI_Send(&tok, 1, token_type, next, STOP, ring);
            wait_for_token(ring, token_type, &tok, &tag); /* the STOP back */
            break;
        }
        MPI_Send(&tok, 1, token_type, next, TOKEN, ring);
        wait_for_token(ring, token_type, &tok, &tag);
    }
    MPI_Type_free(&token_type);
    MPI_Comm_free(&ring);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
