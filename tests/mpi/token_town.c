/* The hamster killers on a token ring, as a student hands them in: one token, a struct of ints
 * sent as an MPI_Type_contiguous type, goes round mayor (rank 0) -> elf 1 -> ... -> mayor and
 * carries the whole town (the round's contracts and who took them, the free pins and poison, the
 * contracts done). An idle elf holding the token takes a free contract with its pin and poison;
 * at the token's next visit it kills the hamsters, gives the tools back and reports. The mayor
 * starts a round when the last one is done, and sends the token round with STOP after the last.
 * The town is read from argv by rank 0 and sent by MPI_Bcast; MPI_Allreduce and MPI_Barrier at
 * the end. Lines as examples/mpi/elves.regex reads them.
 *   -DBROKEN_POISON  an elf takes its poison without taking it off the token
 *   -DBROKEN_EARLY   the mayor ends a round with one contract still being done */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXC 16

typedef struct {
    int round, ncontracts, hamsters[MAXC], taken[MAXC], done, pins, poison, stop;
} token_t;

enum { PINS, POISON, CONTRACTS, ROUNDS, HMIN, HMAX, NPARAMS };

static int me, size;

static void say(const char *who, const char *fmt, int a, int b, int c) {
    printf("[%s %d | t=%.3f] ", who, me, MPI_Wtime());
    printf(fmt, a, b, c);
    printf("\n");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int town[NPARAMS] = {3, 10, 6, 2, 1, 5};
    if (me == 0)
        for (int i = 0; i < NPARAMS && i + 1 < argc; i++) town[i] = atoi(argv[i + 1]);
    MPI_Bcast(town, NPARAMS, MPI_INT, 0, MPI_COMM_WORLD);
    if (town[CONTRACTS] > MAXC) {
        fprintf(stderr, "at most %d contracts a round\n", MAXC);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Datatype token_type;
    MPI_Type_contiguous(sizeof(token_t) / sizeof(int), MPI_INT, &token_type);
    MPI_Type_commit(&token_type);
    int next = (me + 1) % size, prev = (me + size - 1) % size;
    token_t t = {0}; /* all of it: it is sent whole, and bytes left unset would differ run to run */
    int mine_done = 0;

    if (me == 0) {
        unsigned seed = 2024;
        for (int round = 1; round <= town[ROUNDS]; round++) {
            t.round = round;
            t.ncontracts = town[CONTRACTS];
            t.done = t.stop = 0;
            t.pins = town[PINS];
            t.poison = town[POISON];
            char list[MAXC * 4 + 1] = "";
            int at = 0;
            for (int c = 0; c < t.ncontracts; c++) {
                t.hamsters[c] = town[HMIN] + (int)(rand_r(&seed) % (unsigned)(town[HMAX] - town[HMIN] + 1));
                t.taken[c] = 0;
                at += snprintf(list + at, sizeof list - at, c ? " %d" : "%d", t.hamsters[c]);
            }
            printf("[mayor | t=%.3f] round %d begins, contracts (hamsters): %s\n", MPI_Wtime(), round, list);
#ifdef BROKEN_EARLY
            int enough = t.ncontracts - 1;
#else
            int enough = t.ncontracts;
#endif
            do {
                MPI_Send(&t, 1, token_type, next, 0, MPI_COMM_WORLD);
                MPI_Recv(&t, 1, token_type, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } while (t.done < enough);
            printf("[mayor | t=%.3f] round %d is over, STOP to every elf\n", MPI_Wtime(), round);
        }
        printf("[mayor | t=%.3f] no more rounds: the town is clean\n", MPI_Wtime());
        t.stop = 1;
        MPI_Send(&t, 1, token_type, next, 0, MPI_COMM_WORLD);
        MPI_Recv(&t, 1, token_type, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        int working = -1, round = 0, hamsters = 0; /* the contract being done, -1 none */
        for (;;) {
            MPI_Recv(&t, 1, token_type, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (t.stop) {
                say("elf", "goes home%.0d%.0d%.0d", 0, 0, 0);
                MPI_Send(&t, 1, token_type, next, 0, MPI_COMM_WORLD);
                break;
            }
            if (working >= 0) {
                say("elf", "kills %d hamsters, contract %d.%d", hamsters, round, working + 1);
                say("elf", "returns 1 pins%.0d%.0d%.0d", 0, 0, 0);
                say("elf", "returns %d poison%.0d%.0d", hamsters, 0, 0);
                say("elf", "reports contract %d.%d to the mayor%.0d", round, working + 1, 0);
                t.pins += 1;
                t.poison += hamsters;
                t.done++;
                mine_done++;
                working = -1;
            } else {
                for (int c = 0; c < t.ncontracts; c++) {
                    if (t.taken[c] || t.pins < 1 || t.poison < t.hamsters[c]) continue;
                    t.taken[c] = 1;
                    working = c;
                    round = t.round;
                    hamsters = t.hamsters[c];
                    say("elf", "takes contract %d.%d (%d hamsters)", round, c + 1, hamsters);
                    say("elf", "takes 1 pins%.0d%.0d%.0d", 0, 0, 0);
                    say("elf", "takes %d poison%.0d%.0d", hamsters, 0, 0);
                    t.pins -= 1;
#ifndef BROKEN_POISON
                    t.poison -= hamsters;
#endif
                    break;
                }
            }
            MPI_Send(&t, 1, token_type, next, 0, MPI_COMM_WORLD);
        }
    }
    int all = 0;
    MPI_Allreduce(&mine_done, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) fprintf(stderr, "%d contracts done in all\n", all);
    MPI_Type_free(&token_type);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
