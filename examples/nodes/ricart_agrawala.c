/* Ricart–Agrawala as a mutexlab node: JSON Lines on stdin and stdout (docs/test-any-program.md).
 *
 *   gcc -O2 -o ra ricart_agrawala.c                       correct
 *   gcc -O2 -DBROKEN_REPLY_IN_CS -o ra-broken ricart_agrawala.c   replies while in the critical section
 *   gcc -O2 -DBROKEN_COMPARE -o ra-compare ricart_agrawala.c      defers the earlier request, answers the later
 *   gcc -O2 -DBROKEN_DUP -o ra-dup ricart_agrawala.c              counts a duplicated REPLY twice
 *
 * A request is (timestamp, id); the smaller goes first. A node that wants the critical section
 * sends REQUEST to every peer and enters when every peer has replied; it defers a REQUEST while
 * it holds the section or while its own pending request is earlier, and answers the deferred
 * ones when it leaves. A REPLY names the request it answers (its timestamp, "for"), and a node counts
 * one REPLY per peer for its pending request: a network that delivers a message twice
 * (`mutexlab test --duplicate K`) lets nobody in early. Deterministic: it reads nothing but its input. */
#include <stdio.h>
#include <string.h>

#include "jsonline.h"

#define MAX_NODES 64
#define LINE 70000

static int me, nodes, clock_, my_ts, replies, requesting, holding;
static int deferred[MAX_NODES + 1]; /* the timestamp of each peer's deferred request, 0: none */
static int replied[MAX_NODES + 1];  /* the peers that answered the pending request */

static void send(int to, const char *type, int ts) {
    printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"%s\",\"ts\":%d}}\n", to, type, ts);
}

static void reply(int to, int ts, int answers) {
    printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"REPLY\",\"ts\":%d,\"for\":%d}}\n", to, ts, answers);
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
            memset(replied, 0, sizeof replied);
            puts("{\"type\":\"done\",\"reinit\":true}");
            fflush(stdout);
            continue;
        }
        if (json_is(line, "type", "request")) {
            my_ts = ++clock_;
            requesting = 1;
            replies = 0;
            memset(replied, 0, sizeof replied);
            for (int j = 1; j <= nodes; j++)
                if (j != me) send(j, "REQUEST", my_ts);
        } else if (json_is(line, "type", "release")) {
            holding = 0;
            puts("{\"type\":\"exit\",\"resource\":\"cs\"}");
            for (int j = 1; j <= nodes; j++)
                if (deferred[j]) {
                    reply(j, ++clock_, deferred[j]);
                    deferred[j] = 0;
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
                if (defer) {
                    if (ts > deferred[from]) /* an older copy was answered before the peer asked again */
                        deferred[from] = ts;
                } else {
                    reply(from, ++clock_, ts); /* a copy answered again: the asker counts one */
                }
            } else if (json_is(body, "type", "REPLY")) {
#if defined(BROKEN_DUP)
                int fresh = 1; /* counts every REPLY: a duplicated one twice */
#else
                int fresh = (int)json_int(body, "for", 0) == my_ts && !replied[from];
#endif
                if (requesting && fresh && (replied[from] = 1) && ++replies == nodes - 1) {
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
