/* The mason bees on a token ring, as a student hands them in: every rank a bee; one token goes
 * round and carries each reed's holder, its eggs and the eggs promised to it, and the free
 * flowers, packed with MPI_Pack; it is sent with MPI_Isend + MPI_Wait and taken with MPI_Probe,
 * MPI_Get_count and MPI_Recv. A bee with the token takes a free reed with room for all its eggs
 * (or retires when no reed has room left), then a flower; at the token's next visit it leaves the
 * flower and lays an egg; after its last egg it leaves its reed and dies. Once every bee has
 * ended, the token goes round once more and each bee ends with it. Arguments: reeds, flowers,
 * eggs, cocoons (3 3 5 15 without any). Lines as examples/mpi/bees_printf.regex reads them.
 *   -DBROKEN_FLOWER  a bee enters a flower without taking it off the token
 *   -DBROKEN_REED    a bee takes a reed with room whoever holds it */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXR 16

typedef struct {
    int holder[MAXR], eggs[MAXR], promised[MAXR];
    int flowers, finished, stopper; /* packed together: three ints in a row */
} token_t;

static int me, size, reeds = 3, flowers = 3, eggs = 5, cocoons = 15;

static void pass(token_t *t) {
    char buf[1024];
    int pos = 0;
    MPI_Pack(t->holder, reeds, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD);
    MPI_Pack(t->eggs, reeds, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD);
    MPI_Pack(t->promised, reeds, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD);
    MPI_Pack(&t->flowers, 3, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD);
    MPI_Request r;
    MPI_Isend(buf, pos, MPI_PACKED, (me + 1) % size, 0, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

static void take(token_t *t) {
    char buf[1024];
    MPI_Status st;
    int n, pos = 0;
    MPI_Probe((me + size - 1) % size, 0, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_PACKED, &n);
    MPI_Recv(buf, n, MPI_PACKED, st.MPI_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Unpack(buf, n, &pos, t->holder, reeds, MPI_INT, MPI_COMM_WORLD);
    MPI_Unpack(buf, n, &pos, t->eggs, reeds, MPI_INT, MPI_COMM_WORLD);
    MPI_Unpack(buf, n, &pos, t->promised, reeds, MPI_INT, MPI_COMM_WORLD);
    MPI_Unpack(buf, n, &pos, &t->flowers, 3, MPI_INT, MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 4) reeds = atoi(argv[1]), flowers = atoi(argv[2]), eggs = atoi(argv[3]), cocoons = atoi(argv[4]);
    if (reeds > MAXR) MPI_Abort(MPI_COMM_WORLD, 1);
    int bee = me + 1, reed = -1, on_flower = 0, laid = 0, done = 0;
    token_t t;
    if (me == 0) {
        for (int i = 0; i < reeds; i++) t.holder[i] = -1, t.eggs[i] = t.promised[i] = 0;
        t.flowers = flowers;
        t.finished = 0;
        t.stopper = -1;
    } else {
        take(&t);
    }
    for (;;) {
        if (t.stopper >= 0) { /* the last lap: pass it on unless the next bee set it going */
            if ((me + 1) % size != t.stopper) pass(&t);
            break;
        }
        if (!done && reed < 0) {
            int room = 0;
            for (int i = 0; i < reeds && reed < 0; i++) {
                if (t.promised[i] + eggs <= cocoons) room = 1;
#ifdef BROKEN_REED
                if (t.promised[i] + eggs <= cocoons) {
#else
                if (t.holder[i] < 0 && t.promised[i] + eggs <= cocoons) {
#endif
                    reed = i;
                    t.holder[i] = bee;
                    t.promised[i] += eggs;
                    printf("[%d] bee %d enters reed %d\n", t.finished, bee, i + 1);
                }
            }
            if (reed < 0 && !room) {
                printf("[%d] bee %d retires, no room\n", t.finished, bee);
                done = 1;
                t.finished++;
            }
        } else if (!done && on_flower) {
            printf("[%d] bee %d leaves flower\n", t.finished, bee);
            t.flowers++;
            on_flower = 0;
            laid++;
            t.eggs[reed]++;
            printf("[%d] bee %d lays egg %d in reed %d (%d in reed)\n", t.finished, bee, laid, reed + 1,
                   t.eggs[reed]);
            if (laid == eggs) {
                printf("[%d] bee %d leaves reed %d\n", t.finished, bee, reed + 1);
                t.holder[reed] = -1;
                printf("[%d] bee %d dies after %d eggs\n", t.finished, bee, laid);
                done = 1;
                t.finished++;
            }
        } else if (!done && t.flowers > 0) {
#ifndef BROKEN_FLOWER
            t.flowers--;
#endif
            on_flower = 1;
            printf("[%d] bee %d enters flower\n", t.finished, bee);
        }
        if (t.finished == size) { /* every bee has ended: one last lap */
            t.stopper = me;
            pass(&t);
            break;
        }
        pass(&t);
        take(&t);
    }
    MPI_Finalize();
    return 0;
}
