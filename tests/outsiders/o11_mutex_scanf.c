/* Central-server mutual exclusion: node 1 is the coordinator (and a client too), every other node
 * asks it (REQ), is granted (OK) and gives back (REL). Written from docs/test-any-program.md by a
 * student who reads stdin with scanf("%s") -- the inputs are compact, no spaces, one token a line.
 *
 *   gcc -O2 -o central o11_mutex_scanf.c
 *   -DBROKEN_SELF    the coordinator forgets that it holds the section itself
 *   -DDEBUG_STDOUT   prints "got <line>" debugging to stdout (the protocol's stream)
 *   -DFLUSH_ON_SEND  flushes only after a line that sends something
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, holder = 0, queue[256], qlen = 0;
static int sent;

static int field(const char *tok, const char *key) {
    char pat[32];
    sprintf(pat, "\"%s\":", key);
    char *p = strstr(tok, pat);
    return p ? atoi(p + strlen(pat)) : -1;
}

static void send_to(int to, const char *type) {
    printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"%s\"}}\n", to, type);
    sent = 1;
}

static void grant(int who) {
    holder = who;
    if (who == me) printf("{\"type\":\"enter\",\"resource\":\"cs\"}\n");
    else send_to(who, "OK");
}

/* the coordinator: a request from `who` */
static void coord_req(int who) {
#ifdef BROKEN_SELF
    if (holder == 0 || holder == me) grant(who);
#else
    if (holder == 0) grant(who);
#endif
    else queue[qlen++] = who;
}

static void coord_rel(void) {
    holder = 0;
    if (qlen > 0) {
        int next = queue[0];
        memmove(queue, queue + 1, sizeof(int) * --qlen);
        grant(next);
    }
}

int main(void) {
    char tok[8192];
    while (scanf("%8191s", tok) == 1) {
#ifdef DEBUG_STDOUT
        printf("got %s\n", tok);
#endif
        sent = 0;
        char *type = strrchr(tok, '"');  /* ..."type":"request"} : the last quoted word */
        char *t = tok + strlen(tok);
        while (t > tok && strncmp(t, "\"type\":\"", 8) != 0) t--;
        type = t + 8;
        if (!strncmp(type, "init", 4)) {
            me = field(tok, "id");
            holder = qlen = 0;
            printf("{\"type\":\"done\",\"reinit\":true}\n");
            fflush(stdout);
            continue;
        } else if (!strncmp(type, "request", 7)) {
            if (me == 1) coord_req(1);
            else send_to(1, "REQ");
        } else if (!strncmp(type, "release", 7)) {
            printf("{\"type\":\"exit\",\"resource\":\"cs\"}\n");
            if (me == 1) coord_rel();
            else send_to(1, "REL");
        } else if (!strncmp(type, "recv", 4)) {
            int from = field(strstr(tok, "},") ? strstr(tok, "},") : tok, "from");
            if (strstr(tok, "\"type\":\"REQ\"")) coord_req(from);
            else if (strstr(tok, "\"type\":\"REL\"")) coord_rel();
            else if (strstr(tok, "\"type\":\"OK\"")) printf("{\"type\":\"enter\",\"resource\":\"cs\"}\n");
        }
        printf("{\"type\":\"done\"}\n");
#ifdef FLUSH_ON_SEND
        if (sent) fflush(stdout);
#else
        fflush(stdout);
#endif
    }
    return 0;
}
