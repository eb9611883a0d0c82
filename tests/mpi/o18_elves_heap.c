/* The hamster killers with the mayor as the arbiter, in C as another group wrote it: rank 0, the
 * mayor, holds the round's contracts, the pins and the poison, and serves the elves from one poll
 * loop (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG), then MPI_Recv of what it found, usleep when
 * nothing came). An elf asks for a contract, then for its tools (1 pin, a portion of poison per
 * hamster) in one request; tool requests that cannot be served wait in a binary min-heap by the
 * poison they need (the smallest job first, then the lower elf), and every release serves the
 * heap's top while it fits. Once the round's contracts are all reported and every elf has been
 * told none is left, the mayor says STOP to every elf (its last round: go home). Prints as examples/mpi/elves.regex reads.
 * usage: mpirun -np 1+ELVES ./elves_heap [pins poison contracts rounds hmin hmax]
 *   -DBROKEN_PINS_ONLY  a tool request is granted when a pin is free, the poison not looked at
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { ASK_CONTRACT = 1, ASK_TOOLS = 2, RELEASE = 3, REPORT = 4, CONTRACT = 11, TOOLS = 12, STOP = 13 };
#define MAXC 32
#define MAXE 64

typedef struct { int need, elf; } job;
static job heap[MAXE];
static int heap_n;

static int before(job a, job b) { return a.need < b.need || (a.need == b.need && a.elf < b.elf); }

static void heap_push(job j) {
    int i = heap_n++;
    heap[i] = j;
    while (i > 0 && before(heap[i], heap[(i - 1) / 2])) {
        job t = heap[i];
        heap[i] = heap[(i - 1) / 2];
        heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static job heap_pop(void) {
    job top = heap[0];
    heap[0] = heap[--heap_n];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < heap_n && before(heap[l], heap[m])) m = l;
        if (r < heap_n && before(heap[r], heap[m])) m = r;
        if (m == i) break;
        job t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
    return top;
}

static int pins_left, poison_left;

static int fits(int need) {
#ifdef BROKEN_PINS_ONLY
    (void)need;
    return pins_left >= 1;
#else
    return pins_left >= 1 && poison_left >= need;
#endif
}

static void grant(int elf, int need) {
    int m[2] = {1, need};
    pins_left -= 1;
    poison_left -= need;
    MPI_Send(m, 2, MPI_INT, elf, TOOLS, MPI_COMM_WORLD);
}

static void mayor(int elves, int pins, int poison, int contracts, int rounds, int hmin, int hmax) {
    int ham[MAXC];
    for (int r = 1; r <= rounds; r++) {
        char list[8 * MAXC] = "";
        int at = 0, next = 0, reported = 0, told_none = 0;
        for (int c = 0; c < contracts; c++) {
            ham[c] = hmax - (c + r) % (hmax - hmin + 1);
            at += snprintf(list + at, sizeof list - (size_t)at, c ? " %d" : "%d", ham[c]);
        }
        printf("mayor: round %d begins, contracts (hamsters): %s\n", r, list);
        pins_left = pins, poison_left = poison, heap_n = 0;
        if (r > 1)
            for (int e = 1; e <= elves; e++) {
                int stop[2] = {r - 1, 0};
                MPI_Send(stop, 2, MPI_INT, e, STOP, MPI_COMM_WORLD);
            }
        while (reported < contracts || told_none < elves) {
            int flag = 0, m[2];
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            if (!flag) {
                usleep(100);
                continue;
            }
            MPI_Recv(m, 2, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int elf = st.MPI_SOURCE;
            if (st.MPI_TAG == ASK_CONTRACT) {
                int c[3] = {r, next < contracts ? next + 1 : 0, next < contracts ? ham[next] : 0};
                if (next < contracts)
                    next++;
                else
                    told_none++;
                MPI_Send(c, 3, MPI_INT, elf, CONTRACT, MPI_COMM_WORLD);
            } else if (st.MPI_TAG == ASK_TOOLS) {
                if (heap_n == 0 && fits(m[1]))
                    grant(elf, m[1]);
                else
                    heap_push((job){m[1], elf});
            } else if (st.MPI_TAG == RELEASE) {
                pins_left += m[0];
                poison_left += m[1];
                while (heap_n > 0 && fits(heap[0].need)) {
                    job j = heap_pop();
                    grant(j.elf, j.need);
                }
            } else if (st.MPI_TAG == REPORT) {
                reported++;
            }
        }
        printf("mayor: round %d is over\n", r);
    }
    for (int e = 1; e <= elves; e++) {
        int stop[2] = {rounds, 1};
        MPI_Send(stop, 2, MPI_INT, e, STOP, MPI_COMM_WORLD);
    }
    printf("mayor: the town is clean\n");
}

static void elf(int me) {
    for (;;) {
        int c[3], stop[2], tools[2];
        MPI_Send(&me, 1, MPI_INT, 0, ASK_CONTRACT, MPI_COMM_WORLD);
        MPI_Recv(c, 3, MPI_INT, 0, CONTRACT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (c[1] == 0) { /* none left this round: wait for the mayor's STOP */
            MPI_Recv(stop, 2, MPI_INT, 0, STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (stop[1]) break;
            continue;
        }
        printf("elf %d: takes contract %d.%d\n", me, c[0], c[1]);
        int ask[2] = {1, c[2]};
        MPI_Send(ask, 2, MPI_INT, 0, ASK_TOOLS, MPI_COMM_WORLD);
        MPI_Recv(tools, 2, MPI_INT, 0, TOOLS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("elf %d: takes %d pins\n", me, tools[0]);
        printf("elf %d: takes %d poison\n", me, tools[1]);
        usleep(500);
        printf("elf %d: kills %d hamsters, contract %d.%d\n", me, c[2], c[0], c[1]);
        printf("elf %d: returns %d poison\n", me, tools[1]);
        printf("elf %d: returns %d pins\n", me, tools[0]);
        MPI_Send(tools, 2, MPI_INT, 0, RELEASE, MPI_COMM_WORLD);
        printf("elf %d: reports contract %d.%d\n", me, c[0], c[1]);
        MPI_Send(c, 2, MPI_INT, 0, REPORT, MPI_COMM_WORLD);
    }
    printf("elf %d: goes home\n", me);
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pins = argc > 1 ? atoi(argv[1]) : 3, poison = argc > 2 ? atoi(argv[2]) : 10;
    int contracts = argc > 3 ? atoi(argv[3]) : 6, rounds = argc > 4 ? atoi(argv[4]) : 2;
    int hmin = argc > 5 ? atoi(argv[5]) : 1, hmax = argc > 6 ? atoi(argv[6]) : 5;
    if (size < 2 || size > MAXE || contracts > MAXC || hmin < 1 || hmin > hmax || hmax > poison) {
        if (rank == 0) fprintf(stderr, "elves_heap: a town that cannot work\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0)
        mayor(size - 1, pins, poison, contracts, rounds, hmin, hmax);
    else
        elf(rank);
    MPI_Finalize();
    return 0;
}
