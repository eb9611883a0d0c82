/* The hamster killers with one token: the mayor (rank 0) writes each round's contracts into a
 * token and hands it to elf 1; the token goes round the elves (1, 2, ..., n, 1, ...) and is the
 * only place pins and poison are counted.  An elf holding the token gives back what it used,
 * takes a contract, pins and poison if there are enough, passes the token on and works.
 * The mayor waits for the round's CONTRACT_COMPLETED messages with MPI_Waitall over
 * pre-posted receives, then sends STOP to every elf.
 * usage: mpirun -np N ./elves_token [pins poison contracts rounds hmin hmax]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TAG_TOKEN 1
#define TAG_DONE 2
#define TAG_STOP 3
#define MAXC 32
enum { ROUND, NEXT, PINS, POISON, DONE, NC, HAM };   /* the token: HAM.. hamsters per contract */

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pins = argc > 1 ? atoi(argv[1]) : 3, poison = argc > 2 ? atoi(argv[2]) : 10;
    int contracts = argc > 3 ? atoi(argv[3]) : 6, rounds = argc > 4 ? atoi(argv[4]) : 2;
    int hmin = argc > 5 ? atoi(argv[5]) : 1, hmax = argc > 6 ? atoi(argv[6]) : 5;
    if (size < 2 || contracts < 1 || contracts > MAXC || hmax > poison || pins < 1 || hmin < 1 || hmin > hmax) {
        if (rank == 0) fprintf(stderr, "elves: a town that cannot work\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int elves = size - 1;
    int token[HAM + MAXC];

    if (rank == 0) {
        unsigned seed = 2024;
        for (int r = 1; r <= rounds; r++) {
            char list[8 * MAXC] = "";
            int at = 0;
            token[ROUND] = r, token[NEXT] = 0, token[PINS] = pins, token[POISON] = poison;
            token[DONE] = 0, token[NC] = contracts;
            for (int c = 0; c < contracts; c++) {
                token[HAM + c] = hmin + (int)(rand_r(&seed) % (unsigned)(hmax - hmin + 1));
                at += snprintf(list + at, sizeof list - at, c ? ",%d" : "%d", token[HAM + c]);
            }
            printf("mayor: round %d opens with contracts [%s]\n", r, list);
            MPI_Request got[MAXC];
            int done[MAXC][2];
#ifdef BROKEN_EARLY_STOP
            int wait_for = contracts - 1;
#else
            int wait_for = contracts;
#endif
            for (int c = 0; c < wait_for; c++)
                MPI_Irecv(done[c], 2, MPI_INT, MPI_ANY_SOURCE, TAG_DONE, MPI_COMM_WORLD, &got[c]);
            MPI_Send(token, HAM + contracts, MPI_INT, 1, TAG_TOKEN, MPI_COMM_WORLD);
            MPI_Waitall(wait_for, got, MPI_STATUSES_IGNORE);
            printf("mayor: round %d closed\n", r);
            int stop[2] = {r, r == rounds};
            for (int e = 1; e <= elves; e++)
                MPI_Send(stop, 2, MPI_INT, e, TAG_STOP, MPI_COMM_WORLD);
        }
        printf("mayor: no rounds left, the town is clean\n");
    } else {
        int round = 0, c = -1, h = 0, has_pins = 0, has_poison = 0, worked = 0;
        unsigned seed = 77u * (unsigned)rank;
        for (;;) {
            MPI_Status st;
            MPI_Recv(token, HAM + MAXC, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (st.MPI_TAG == TAG_STOP) {
                if (token[1]) break;   /* the last round's STOP */
                continue;
            }
            if (token[ROUND] != round) {
                round = token[ROUND];
                c = -1, has_pins = has_poison = worked = 0;
            }
            if (worked) {
                printf("elf %d: gave back 1 pins\n", rank);
                printf("elf %d: gave back %d poison\n", rank, h);
                printf("elf %d: contract %d.%d reported\n", rank, round, c + 1);
                token[PINS] += 1;
                token[POISON] += h;
                token[DONE]++;
                int done[2] = {round, c + 1};
                MPI_Send(done, 2, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD);
                c = -1, has_pins = has_poison = worked = 0;
            }
            if (c < 0 && token[NEXT] < token[NC]) {
                c = token[NEXT]++;
                h = token[HAM + c];
                printf("elf %d: contract %d.%d is mine (%d hamsters)\n", rank, round, c + 1, h);
            }
            if (c >= 0 && !has_pins) {
                if (token[PINS] >= 1) {
                    token[PINS]--;
                    has_pins = 1;
                    printf("elf %d: got 1 pins\n", rank);
                } else {
                    printf("elf %d: waiting for pins\n", rank);
                }
            }
            if (has_pins && !has_poison) {
#ifdef BROKEN_POISON
                if (token[POISON] > 0) {   /* some poison left: enough, surely */
#else
                if (token[POISON] >= h) {
#endif
                    token[POISON] -= h;
                    has_poison = 1;
                    printf("elf %d: got %d poison\n", rank, h);
                } else {
                    printf("elf %d: waiting for poison\n", rank);
                }
            }
            if (has_poison) {
                printf("elf %d: contract %d.%d: %d hamsters killed\n", rank, round, c + 1, h);
                worked = 1;   /* given back at the token's next visit */
            }
            if (token[DONE] < token[NC])
                MPI_Send(token, HAM + token[NC], MPI_INT, rank % elves + 1, TAG_TOKEN, MPI_COMM_WORLD);
            if (worked)
                usleep(1000 + rand_r(&seed) % 4000);   /* poisoning takes a while */
        }
        printf("elf %d: going home\n", rank);
    }
    MPI_Finalize();
    return 0;
}
