/* A mason bee as a mutexlab node (docs/bees.md; docs/test-any-program.md#problems). It acts on
 * its own: no request lines, everything happens in answer to init and to messages.
 *
 *   gcc -O2 -o bee bee.c
 *   mutexlab test bees --node ./bee --nodes 4 --option reeds=2 --option flowers=1 \
 *       --option eggs=2 --option cocoons=2
 *   gcc -O2 -DBROKEN_FLOWERS -o bee-broken bee.c     (enters a flower with one permission too few)
 *
 * Reeds: bee i takes reed ((i-1) mod T)+1, as the ((i-1) div T)-th bee on it; a reed holds
 * cocoons/eggs bees one after the other, so bee i waits for RELEASEreed from bee i-T, and a bee
 * beyond them retires at once. Flowers: K of them, Raymond's K-entry version of Ricart–Agrawala:
 * a bee asks every other bee (REQflower with its Lamport stamp), a bee answers (ACKflower) at once
 * unless its own pending request is earlier in (stamp, id) order, and a bee enters once N-K bees
 * have answered its current request. It visits the flower, lays an egg and answers the deferred
 * requests in the same step; after its last egg it leaves the reed and dies. */
#include <stdio.h>
#include <string.h>

#include "jsonline.h"

#define MAX_BEES 64
#define LINE 70000

static int me, bees, flowers, reeds, eggs, cocoons;
static int clock_, my_ts, requesting, acks, laid, reed, slot, alive_on_reed;
static int deferred[MAX_BEES + 1];

static void request_flower(void) {
    my_ts = ++clock_;
    requesting = 1;
    acks = 0;
    for (int j = 1; j <= bees; j++)
        if (j != me) printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"REQflower\",\"ts\":%d}}\n", j, my_ts);
}

static void on_reed(void) {
    alive_on_reed = 1;
    printf("{\"type\":\"enter\",\"resource\":\"reed:%d\"}\n", reed);
    puts("{\"type\":\"state\",\"state\":\"ON_REED\"}");
    request_flower();
}

static int needed(void) {
#ifdef BROKEN_FLOWERS
    int need = bees - flowers - 1;
#else
    int need = bees - flowers;
#endif
    return need < 0 ? 0 : need;
}

/* Enter a flower if this request has enough permissions; then the egg, the deferred answers,
 * and the next request or the end. */
static void maybe_visit(void) {
    if (!requesting || acks < needed()) return;
    requesting = 0;
    puts("{\"type\":\"enter\",\"resource\":\"flower\"}");
    puts("{\"type\":\"exit\",\"resource\":\"flower\"}");
    laid++;
    printf("{\"type\":\"event\",\"event\":\"egg\",\"reed\":%d,\"count\":%d,\"in_reed\":%d}\n", reed, laid,
           slot * eggs + laid);
    for (int j = 1; j <= bees; j++)
        if (deferred[j]) {
            printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"ACKflower\",\"req_ts\":%d}}\n", j, deferred[j]);
            deferred[j] = 0;
        }
    if (laid < eggs) {
        request_flower();
        return;
    }
    alive_on_reed = 0;
    printf("{\"type\":\"exit\",\"resource\":\"reed:%d\"}\n", reed);
    if (me + reeds <= bees && slot + 1 < cocoons / eggs)
        printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"RELEASEreed\",\"reed\":%d}}\n", me + reeds, reed);
    printf("{\"type\":\"event\",\"event\":\"death\",\"eggs\":%d}\n", laid);
    puts("{\"type\":\"state\",\"state\":\"DEAD\"}");
}

int main(void) {
    static char line[LINE];
    while (fgets(line, sizeof line, stdin)) {
        if (json_is(line, "type", "init")) {
            const char *options = json_find(line, "options");
            me = (int)json_int(line, "id", 1);
            bees = (int)json_int(line, "nodes", 1);
            flowers = options ? (int)json_int(options, "flowers", 1) : 1;
            reeds = options ? (int)json_int(options, "reeds", 1) : 1;
            eggs = options ? (int)json_int(options, "eggs", 1) : 1;
            cocoons = options ? (int)json_int(options, "cocoons", 1) : 1;
            if (bees > MAX_BEES || eggs < 1 || reeds < 1) {
                fprintf(stderr, "unsupported options\n");
                return 2;
            }
            clock_ = my_ts = requesting = acks = laid = alive_on_reed = 0;
            memset(deferred, 0, sizeof deferred);
            reed = (me - 1) % reeds + 1;
            slot = (me - 1) / reeds;
            if (slot >= cocoons / eggs) {
                printf("{\"type\":\"event\",\"event\":\"retire\",\"rank\":%d,\"would_be_reed\":%d}\n", me, reed);
                puts("{\"type\":\"state\",\"state\":\"RETIRED\"}");
            } else if (slot == 0) {
                on_reed();
                maybe_visit(); /* alone, or with flowers for everyone: no permission needed */
            }
            puts("{\"type\":\"done\",\"reinit\":true}");
            fflush(stdout);
            continue;
        }
        if (json_is(line, "type", "recv")) {
            int from = (int)json_int(line, "from", 0);
            const char *body = json_find(line, "body");
            if (body && from >= 1 && from <= bees) {
                if (json_is(body, "type", "REQflower")) {
                    int ts = (int)json_int(body, "ts", 0);
                    clock_ = (clock_ > ts ? clock_ : ts) + 1;
                    if (requesting && (my_ts < ts || (my_ts == ts && me < from)))
                        deferred[from] = ts;
                    else
                        printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"ACKflower\",\"req_ts\":%d}}\n",
                               from, ts);
                } else if (json_is(body, "type", "ACKflower")) {
                    if (requesting && json_int(body, "req_ts", -1) == my_ts) acks++;
                    maybe_visit();
                } else if (json_is(body, "type", "RELEASEreed")) {
                    on_reed();
                    maybe_visit();
                }
            }
        }
        puts("{\"type\":\"done\"}");
        fflush(stdout);
    }
    return 0;
}
