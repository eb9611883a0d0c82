/* A dining philosopher as a mutexlab node (Chandy–Misra's hygienic solution): JSON Lines on
 * stdin and stdout (docs/test-any-program.md).
 *
 *   gcc -O2 -o philosopher philosopher.c                            correct
 *   gcc -O2 -DBROKEN_ONE_FORK -o phil-one-fork philosopher.c        eats as soon as it has one fork
 *   gcc -O2 -DBROKEN_GREEDY -o phil-greedy philosopher.c            a hungry one yields no fork: deadlock
 *
 * Philosopher i (of N) eats with fork i (its left) and fork i mod N + 1 (its right). Each fork
 * lies with one of its two users, clean or dirty, and the other holds its request token. A
 * hungry philosopher sends the token of every fork it lacks (REQ); one that gets a REQ gives the
 * fork (FORK) when it is dirty and it is not eating — asking for it back at once when hungry —
 * and keeps a clean fork (or one it eats with) until its meal ends. Eating dirties both forks.
 * At the start each fork lies, dirty, with the lower id of its users: no cycle of priorities.
 *
 * Told "request" (hungry) it eats once it has both forks: it enters fork:<left>, fork:<right>
 * and meal; told "release" it exits meal and both forks, and hands over the forks asked for.
 * Deterministic: it reads nothing but its input. */
#include <stdio.h>
#include <string.h>

#include "jsonline.h"

#define LINE 70000

static int me, nodes, hungry, eating;
static int fork_id[2];             /* my left and right forks */
static int other[2];               /* who shares each of them */
static int have[2], dirty[2], token[2];

static int side_of(int f) { return f == fork_id[0] ? 0 : f == fork_id[1] ? 1 : -1; }

static void send(int to, const char *type, int f) {
    printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"%s\",\"fork\":%d}}\n", to, type, f);
}

static void give(int s) { /* hand fork s over (cleaned), keeping its token; ask it back when hungry */
    have[s] = 0;
    send(other[s], "FORK", fork_id[s]);
    if (hungry) {
        token[s] = 0;
        send(other[s], "REQ", fork_id[s]);
    }
}

static void ask_missing(void) {
    for (int s = 0; s < 2; s++)
        if (!have[s] && token[s]) {
            token[s] = 0;
            send(other[s], "REQ", fork_id[s]);
        }
}

static void try_eat(void) {
#ifdef BROKEN_ONE_FORK
    int ready = have[0] || have[1];
#else
    int ready = have[0] && have[1];
#endif
    if (!hungry || eating || !ready) return;
    hungry = 0;
    eating = 1;
    for (int s = 0; s < 2; s++)
        if (have[s]) printf("{\"type\":\"enter\",\"resource\":\"fork:%d\"}\n", fork_id[s]);
    puts("{\"type\":\"enter\",\"resource\":\"meal\"}");
}

int main(void) {
    static char line[LINE];
    while (fgets(line, sizeof line, stdin)) {
        if (json_is(line, "type", "init")) {
            me = (int)json_int(line, "id", 1);
            nodes = (int)json_int(line, "nodes", 2);
            fork_id[0] = me;
            fork_id[1] = me % nodes + 1;
            other[0] = me == 1 ? nodes : me - 1; /* whose right fork my left one is */
            other[1] = me % nodes + 1;           /* whose left fork my right one is */
            hungry = eating = 0;
            for (int s = 0; s < 2; s++) {
                have[s] = me < other[s];
                dirty[s] = 1;
                token[s] = !have[s];
            }
            puts("{\"type\":\"done\",\"reinit\":true}");
            fflush(stdout);
            continue;
        }
        if (json_is(line, "type", "request")) {
            hungry = 1;
            ask_missing();
            try_eat();
        } else if (json_is(line, "type", "release")) {
            eating = 0;
            puts("{\"type\":\"exit\",\"resource\":\"meal\"}");
            for (int s = 0; s < 2; s++)
                if (have[s]) {
                    printf("{\"type\":\"exit\",\"resource\":\"fork:%d\"}\n", fork_id[s]);
                    dirty[s] = 1;
                }
            for (int s = 0; s < 2; s++)
                if (have[s] && token[s]) give(s); /* asked for while we ate */
        } else if (json_is(line, "type", "recv")) {
            const char *body = json_find(line, "body");
            int f = body ? (int)json_int(body, "fork", 0) : 0;
            int s = side_of(f);
            if (s < 0) {
                fprintf(stderr, "bad recv: %s", line);
            } else if (json_is(body, "type", "REQ")) {
                token[s] = 1;
#ifdef BROKEN_GREEDY
                int yield = have[s] && !eating && !hungry; /* keeps every fork while hungry */
#else
                int yield = have[s] && dirty[s] && !eating;
#endif
                if (yield) give(s);
            } else if (json_is(body, "type", "FORK")) {
                have[s] = 1;
                dirty[s] = 0;
                try_eat();
            }
        }
        puts("{\"type\":\"done\"}");
        fflush(stdout);
    }
    return 0;
}
