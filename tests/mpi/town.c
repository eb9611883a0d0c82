/* hamster killers - mpi version. rank 0 = mayor, others = elves.
 * mayor keeps the pins & poison and gives contracts out. compile: mpicc -o town town.c
 * run: mpirun -np 4 ./town [pins poison contracts rounds]
 * (written outside mutexlab, as a student would: tests/test_mpi_outsiders.py)
 * -DBROKEN_PINS hands out pins without counting, -DBROKEN_CRASH elf 2 segfaults on contract 2,
 * -DLAST_WORDS: an elf's last line has no newline (mpirun prints it all the same)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T_WANT 1
#define T_CONTRACT 2
#define T_NONE 3
#define T_WANTPINS 4
#define T_PINS 5
#define T_WANTPOISON 6
#define T_POISON 7
#define T_GIVEBACK 8
#define T_FINISHED 9
#define T_STOP 10
#define T_NEWROUND 11
#define T_HOME 12

int pins = 3, poison = 10, ncontracts = 6, rounds = 2;
int me, n;

void tell(int to, int tag, int a, int b) {
    int m[2] = {a, b};
    MPI_Send(m, 2, MPI_INT, to, tag, MPI_COMM_WORLD);
}

void mayor() {
    int pins_left = pins, poison_left = poison;
    int pinq[64], npinq = 0, poiq[64], poiamt[64], npoiq = 0;
    int ham[64];
    srand(2024);
    for (int r = 1; r <= rounds; r++) {
        char list[512] = "";
        for (int i = 0; i < ncontracts; i++) {
            ham[i] = 1 + rand() % 5;
            sprintf(list + strlen(list), i ? ", %d" : "%d", ham[i]);
        }
        printf("MAYOR: === round %d === contracts: %s\n", r, list);
        fprintf(stderr, "mayor: round %d\n", r);
        for (int e = 1; e < n; e++) tell(e, T_NEWROUND, r, 0);
        int next = 0, finished = 0;
        while (finished < ncontracts) {
            int m[2];
            MPI_Status st;
            MPI_Recv(m, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int who = st.MPI_SOURCE;
            switch (st.MPI_TAG) {
            case T_WANT:
                if (m[0] != r) break; /* old round */
                if (next < ncontracts) { tell(who, T_CONTRACT, next + 1, ham[next]); next++; }
                else tell(who, T_NONE, r, 0);
                break;
            case T_WANTPINS:
                pinq[npinq++] = who;
                break;
            case T_WANTPOISON:
                poiq[npoiq] = who; poiamt[npoiq++] = m[0];
                break;
            case T_GIVEBACK:
                pins_left += m[0]; poison_left += m[1];
                break;
            case T_FINISHED:
                finished++;
                break;
            }
            /* hand out what we can */
#ifdef BROKEN_PINS
            while (npinq > 0) {
#else
            while (npinq > 0 && pins_left > 0) {
#endif
                pins_left--;
                tell(pinq[0], T_PINS, 1, 0);
                memmove(pinq, pinq + 1, --npinq * sizeof(int));
            }
            while (npoiq > 0 && poison_left >= poiamt[0]) {
                poison_left -= poiamt[0];
                tell(poiq[0], T_POISON, poiamt[0], 0);
                memmove(poiq, poiq + 1, (npoiq - 1) * sizeof(int));
                memmove(poiamt, poiamt + 1, (npoiq - 1) * sizeof(int));
                npoiq--;
            }
        }
        printf("MAYOR: round %d finished, sending STOP\n", r);
        for (int e = 1; e < n; e++) tell(e, T_STOP, r, 0);
    }
    for (int e = 1; e < n; e++) tell(e, T_HOME, 0, 0);
    printf("MAYOR: no hamsters left, bye\n");
}

int wait_for(int tag, int *m) {
    MPI_Status st;
    for (;;) {
        MPI_Recv(m, 2, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == tag || st.MPI_TAG == T_HOME || tag == -1) return st.MPI_TAG;
        fprintf(stderr, "elf %d: ignoring tag %d\n", me, st.MPI_TAG);
    }
}

void elf() {
    int m[2], round = 0;
    srand(me);
    for (;;) {
        int t = wait_for(-1, m);
        if (t == T_HOME) break;
        if (t != T_NEWROUND) continue;
        round = m[0];
        for (;;) {
            tell(0, T_WANT, round, 0);
            t = wait_for(-1, m);
            if (t == T_NONE || t == T_STOP) break;
            if (t != T_CONTRACT) { fprintf(stderr, "elf %d: huh %d\n", me, t); continue; }
            int c = m[0], h = m[1];
            printf("elf %d: got contract %d.%d (%d hamsters)\n", me, round, c, h);
            tell(0, T_WANTPINS, 1, 0);
            wait_for(T_PINS, m);
            printf("elf %d: grabbed 1 pins\n", me);
            tell(0, T_WANTPOISON, h, 0);
            printf("elf %d: waiting...\n", me);
            wait_for(T_POISON, m);
            printf("elf %d: grabbed %d poison\n", me, h);
            usleep(1000 * (rand() % 10)); /* working */
#ifdef BROKEN_CRASH
            if (me == 2 && c == 2) { int *p = NULL; *p = 1; }
#endif
            printf("elf %d: killed %d hamsters of contract %d.%d\n", me, h, round, c);
            printf("elf %d: gave back %d poison\n", me, h);
            printf("elf %d: gave back 1 pins\n", me);
            tell(0, T_GIVEBACK, 1, h);
            printf("elf %d: finished contract %d.%d\n", me, round, c);
            tell(0, T_FINISHED, c, 0);
        }
        /* wait for the stop of this round */
        if (t != T_STOP) wait_for(T_STOP, m);
    }
#ifdef LAST_WORDS
    printf("elf %d: going home", me);
#else
    printf("elf %d: going home\n", me);
#endif
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc > 4) { pins = atoi(argv[1]); poison = atoi(argv[2]); ncontracts = atoi(argv[3]); rounds = atoi(argv[4]); }
    if (me == 0) mayor(); else elf();
    MPI_Finalize();
    return 0;
}
