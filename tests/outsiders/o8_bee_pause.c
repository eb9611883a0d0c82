/* A mason bee, written from docs/test-any-program.md: its input read with read(2) into a 1 MB
 * buffer and cut into lines by hand; debugging on stderr. Its reed is fixed (bee i on reed
 * (i-1) mod T + 1, the bees of a reed in turn, each handing the reed to the next); flowers by a
 * K-entry Ricart-Agrawala (P - K permissions, each naming the request it answers). A visit
 * takes time: on a flower the bee writes "pause", and collects its nectar at the "wake".
 * -DBROKEN_RETIRED hands a full reed on to the bee after it, retired; -DBROKEN_HANDOFF hands the
 * reed on before leaving it. gcc -O2 -o bee o8_bee_pause.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int my_ts, me, P, K, T, E, C, clk, seq, asking, on_flower, grants, laid, quota, reed, in_reed;
static int deferred[64], deferred_seq[64];
static char *cut(char *line, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    char *at = strstr(line, pat);
    return at ? at + strlen(pat) : NULL;
}
static int num(char *s, const char *key, int dflt) {
    char *at = s ? cut(s, key) : NULL;
    return at ? atoi(at) : dflt;
}
static void ask_flower(void) {
    asking = 1, grants = 0, seq++, clk++, my_ts = clk;
    puts("{\"type\":\"state\",\"state\":\"WAIT_FLOWER\"}");
    for (int j = 1; j <= P; j++)
        if (j != me) printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"REQflower\",\"ts\":%d,\"seq\":%d}}\n", j, clk, seq);
}
static void try_flower(void) {
    if (!asking || on_flower || grants < P - K) return;
    on_flower = 1;
    puts("{\"type\":\"enter\",\"resource\":\"flower\"}");
    puts("{\"type\":\"state\",\"state\":\"ON_FLOWER\"}");
    puts("{\"type\":\"pause\"}");
}
static void enter_reed(int eggs_before) {
    in_reed = eggs_before;
    printf("{\"type\":\"enter\",\"resource\":\"reed:%d\"}\n", reed);
    puts("{\"type\":\"state\",\"state\":\"ON_REED\"}");
    ask_flower();
}
static void leave_reed(void) {
#ifdef BROKEN_RETIRED
    int next = me + T <= P;
#else
    int next = me + T <= P && C - ((me + T - 1) / T) * E > 0; /* the next bee on this reed lays */
#endif
#ifdef BROKEN_HANDOFF
    if (next) printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"HANDOFF\",\"in_reed\":%d}}\n", me + T, in_reed);
    printf("{\"type\":\"exit\",\"resource\":\"reed:%d\"}\n", reed);
#else
    printf("{\"type\":\"exit\",\"resource\":\"reed:%d\"}\n", reed);
    if (next) printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"HANDOFF\",\"in_reed\":%d}}\n", me + T, in_reed);
#endif
    printf("{\"type\":\"event\",\"event\":\"death\",\"eggs\":%d}\n", laid);
    puts("{\"type\":\"state\",\"state\":\"DEAD\"}");
}
static void wake(void) {   /* the nectar collected: off the flower, an egg, on or off the reed */
    on_flower = 0, asking = 0;
    puts("{\"type\":\"exit\",\"resource\":\"flower\"}");
    for (int j = 1; j <= P; j++)
        if (deferred[j]) {
            printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"ACKflower\",\"seq\":%d}}\n", j, deferred_seq[j]);
            deferred[j] = 0;
        }
    laid++, in_reed++;
    printf("{\"type\":\"event\",\"event\":\"egg\",\"reed\":%d,\"count\":%d,\"in_reed\":%d}\n", reed, laid, in_reed);
    puts("{\"type\":\"state\",\"state\":\"ON_REED\"}");
    if (laid == quota) leave_reed();
    else ask_flower();
}
static void handle(char *line) {
    char *body = strstr(line, "\"body\":{"), top[4096];
    size_t n = body ? (size_t)(body - line) : strlen(line);
    if (n >= sizeof top) n = sizeof top - 1;
    memcpy(top, line, n), top[n] = 0;
    if (body) strncat(top, strchr(body, '}') + 1, sizeof top - n - 1);
    char *type = cut(top, "type");
    if (!strncmp(type, "\"init\"", 6)) {
        char *opts = cut(line, "options");
        me = num(top, "id", 0), P = num(top, "nodes", 0);
        K = num(opts, "flowers", 1), T = num(opts, "reeds", 1), E = num(opts, "eggs", 5), C = num(opts, "cocoons", 15);
        clk = seq = asking = on_flower = grants = laid = 0;
        memset(deferred, 0, sizeof deferred);
        reed = (me - 1) % T + 1;
        int turn = (me - 1) / T;
        quota = C - turn * E < E ? C - turn * E : E;
        if (quota <= 0) {
            puts("{\"type\":\"state\",\"state\":\"RETIRED\"}");
            quota = 0;
        } else if (turn == 0) enter_reed(0);
        else puts("{\"type\":\"state\",\"state\":\"WAIT_REED\"}");
        puts("{\"type\":\"done\",\"reinit\":true}");
        return;
    }
    if (!strncmp(type, "\"wake\"", 6)) wake();
    else if (!strncmp(type, "\"recv\"", 6)) {
        int from = num(top, "from", 0);
        char *kind = cut(body, "type");
        int ts = num(body, "ts", 0), s = num(body, "seq", 0);
        if (ts > clk) clk = ts;
        if (!strncmp(kind, "\"REQflower\"", 11)) {
            /* defer while on a flower, or while asking with a smaller (ts, id) */
            int mine_first = asking && (my_ts < ts || (my_ts == ts && me < from));
            if (on_flower || mine_first) deferred[from] = 1, deferred_seq[from] = s;
            else printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"ACKflower\",\"seq\":%d}}\n", from, s);
        } else if (!strncmp(kind, "\"ACKflower\"", 11)) {
            if (asking && s == seq) grants++;
            try_flower();
        } else if (!strncmp(kind, "\"HANDOFF\"", 9)) enter_reed(num(body, "in_reed", 0));
    }
    puts("{\"type\":\"done\"}");
}
int main(void) {
    static char buf[1 << 20];
    size_t have = 0;
    for (;;) {
        ssize_t got = read(0, buf + have, sizeof buf - 1 - have);
        if (got <= 0) return 0;
        have += (size_t)got;
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
            *nl = 0;
            if (nl > start) {
                fprintf(stderr, "bee %d <- %s\n", me, start);
                handle(start);
                fflush(stdout);
            }
            start = nl + 1;
        }
        have -= (size_t)(start - buf);
        memmove(buf, start, have);
    }
}
