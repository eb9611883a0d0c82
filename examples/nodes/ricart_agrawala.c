/* Ricart–Agrawala as a mutexlab node: JSON Lines on stdin and stdout (docs/test-any-program.md).
 *
 *   gcc -O2 -o ra ricart_agrawala.c                       correct
 *   gcc -O2 -DBROKEN_REPLY_IN_CS -o ra-broken ricart_agrawala.c   replies while in the critical section
 *   gcc -O2 -DBROKEN_COMPARE -o ra-compare ricart_agrawala.c      defers the earlier request, answers the later
 *
 * A request is (timestamp, id); the smaller goes first. A node that wants the critical section
 * sends REQUEST to every peer and enters when every peer has replied; it defers a REQUEST while
 * it holds the section or while its own pending request is earlier, and answers the deferred
 * ones when it leaves. Deterministic: it reads nothing but its input. */
#include <stdio.h>
#include <string.h>

#include "jsonline.h"

#define MAX_NODES 64
#define LINE 70000

static int me, nodes, clock_, my_ts, replies, requesting, holding;
static int deferred[MAX_NODES + 1];

static void send(int to, const char *type, int ts) {
    printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"%s\",\"ts\":%d}}\n", to, type, ts);
}

static int earlier(int ts_a, int id_a, int ts_b, int id_b) { /* (ts_a, id_a) before (ts_b, id_b) */
    return ts_a < ts_b || (ts_a == ts_b && id_a < id_b);
}

int main(void) {
    static char line[LINE];
    while (fgets(line, sizeof line, stdin)) {
        if (json_is(line, "type", "init")) {
            me = (int)json_int(line, "id", 1);
            nodes = (int)json_int(line, "nodes", 1);
            if (nodes > MAX_NODES) nodes = MAX_NODES;
            clock_ = my_ts = replies = requesting = holding = 0;
            memset(deferred, 0, sizeof deferred);
            puts("{\"type\":\"done\",\"reinit\":true}");
            fflush(stdout);
            continue;
        }
        if (json_is(line, "type", "request")) {
            my_ts = ++clock_;
            requesting = 1;
            replies = 0;
            for (int j = 1; j <= nodes; j++)
                if (j != me) send(j, "REQUEST", my_ts);
        } else if (json_is(line, "type", "release")) {
            holding = 0;
            puts("{\"type\":\"exit\",\"resource\":\"cs\"}");
            for (int j = 1; j <= nodes; j++)
                if (deferred[j]) {
                    deferred[j] = 0;
                    send(j, "REPLY", ++clock_);
                }
        } else if (json_is(line, "type", "recv")) {
            int from = (int)json_int(line, "from", 0);
            const char *body = json_find(line, "body");
            if (!body || from < 1 || from > nodes) {
                fprintf(stderr, "bad recv: %s", line);
            } else if (json_is(body, "type", "REQUEST")) {
                int ts = (int)json_int(body, "ts", 0);
                clock_ = (clock_ > ts ? clock_ : ts) + 1;
#if defined(BROKEN_REPLY_IN_CS)
                int defer = requesting && earlier(my_ts, me, ts, from); /* forgets its own holding */
#elif defined(BROKEN_COMPARE)
                int defer = holding || (requesting && earlier(ts, from, my_ts, me)); /* backwards */
#else
                int defer = holding || (requesting && earlier(my_ts, me, ts, from));
#endif
                if (defer)
                    deferred[from] = 1;
                else
                    send(from, "REPLY", ++clock_);
            } else if (json_is(body, "type", "REPLY")) {
                if (requesting && ++replies == nodes - 1) {
                    requesting = 0;
                    holding = 1;
                    puts("{\"type\":\"enter\",\"resource\":\"cs\"}");
                }
            }
        }
        if (requesting && nodes == 1) { /* alone: nobody to ask */
            requesting = 0;
            holding = 1;
            puts("{\"type\":\"enter\",\"resource\":\"cs\"}");
        }
        puts("{\"type\":\"done\"}");
        fflush(stdout);
    }
    return 0;
}
