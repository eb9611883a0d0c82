/* A token ring of processes (fork, pipes) that writes a ShiViz / GoVector log for `mutexlab
   verify` with vector clocks. cc -o ring token_ring.c && ./ring LOG NODES ROUNDS [TOKENS [broken]]
   TOKENS tokens go round: that many nodes may be inside at once. broken: enter before the token. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#define MAX 32
int n, me, out, vc[MAX];

void log_event(const char *text) { /* tick my own entry, then one write() per record */
    char buf[2048];
    int len = snprintf(buf, sizeof buf, "node-%d {", me);
    vc[me]++;
    for (int p = 0, first = 1; p < n; p++)
        if (vc[p]) len += snprintf(buf + len, sizeof buf - len, "%s\"node-%d\":%d", first ? "" : ",", p, vc[p]), first = 0;
    len += snprintf(buf + len, sizeof buf - len, "}\n%s\n", text);
    write(out, buf, len);
}

void critical_section(void) { log_event("request cs"); log_event("enter cs"); log_event("exit cs"); }

int main(int argc, char **argv) {
    int rounds = atoi(argv[3]), tokens = argc > 4 ? atoi(argv[4]) : 1, broken = argc > 5, ring[MAX][2];
    n = atoi(argv[2]);
    out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    for (int p = 0; p < n; p++) pipe(ring[p]);
    for (me = 0; me < n; me++) {
        if (fork() > 0) continue;
        for (int r = 0, clock[MAX]; r < rounds; r++) {
            if (broken) critical_section();
            if (r > 0 || me >= tokens) { /* wait for a token; merge the clock it carries */
                read(ring[me][0], clock, sizeof clock);
                for (int p = 0; p < n; p++) vc[p] = vc[p] > clock[p] ? vc[p] : clock[p];
                log_event("token received");
            }
            if (!broken) critical_section();
            log_event("token sent");
            write(ring[(me + 1) % n][1], vc, sizeof vc); /* the token carries my clock */
        }
        return 0;
    }
    while (wait(NULL) > 0) {}
    return 0;
}
