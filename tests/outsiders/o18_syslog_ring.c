/* A token ring of processes (fork, pipes) that writes syslog lines to a file, as syslog(3) hands
   them to a daemon (no daemon here: each line is one write() to a file opened O_APPEND, so the
   processes' lines never interleave). It never includes anything of mutexlab.

   cc -o ring o18_syslog_ring.c && ./ring LOG NODES ROUNDS 3164|5424 [early]
   3164: RFC 3164 lines, <13>Dec  3 07:00:00 HOST ring[PID]: MSG, MSG one JSON event in mutexlab's
         shape without clocks ({"event":"enter","resource":"cs","pid":"n1"}, sends and receives
         with ids);
   5424: RFC 5424 lines, <134>1 TIME HOST ring PID - - MSG, MSG a GoVector record on one line, a
         vector clock between the node's name and the event (n1 {"n0":4,"n1":1} token from n0).
   early: n1 enters once before its first token arrives (the bug: it overlaps n0's holding). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#define MAX 32
int n, me, out, rfc5424, vc[MAX];
char host[64];

void emit(const char *payload) { /* the syslog prefix, then the message: one write() a line */
    char line[4096], stamp[64];
    struct timeval now;
    gettimeofday(&now, NULL);
    struct tm *tm = gmtime(&now.tv_sec);
    int len;
    if (rfc5424) {
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", tm);
        len = snprintf(line, sizeof line, "<134>1 %s.%03ldZ %s ring %d - - %s\n", stamp,
                       (long)now.tv_usec / 1000, host, (int)getpid(), payload);
    } else {
        strftime(stamp, sizeof stamp, "%b %e %H:%M:%S", tm);
        len = snprintf(line, sizeof line, "<13>%s %s ring[%d]: %s", stamp, host, (int)getpid(), payload);
        len += snprintf(line + len, sizeof line - len, "\n");
    }
    write(out, line, len);
}

/* One event: the JSON fields (3164), or the description (5424) after the clock, ticked first. */
void log_event(const char *json, const char *text) {
    char payload[2048];
    vc[me]++;
    if (!rfc5424) {
        snprintf(payload, sizeof payload, "{%s,\"pid\":\"n%d\"}", json, me);
    } else {
        int len = snprintf(payload, sizeof payload, "n%d {", me);
        for (int p = 0, first = 1; p < n; p++)
            if (vc[p]) len += snprintf(payload + len, sizeof payload - len, "%s\"n%d\":%d", first ? "" : ",", p, vc[p]), first = 0;
        snprintf(payload + len, sizeof payload - len, "} %s", text);
    }
    emit(payload);
}

void critical_section(void) {
    log_event("\"event\":\"request\",\"resource\":\"cs\"", "request cs");
    log_event("\"event\":\"enter\",\"resource\":\"cs\"", "enter cs");
    log_event("\"event\":\"exit\",\"resource\":\"cs\"", "exit cs");
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s LOG NODES ROUNDS 3164|5424 [early]\n", argv[0]);
        return 2;
    }
    int rounds = atoi(argv[3]), early = argc > 5 && !strcmp(argv[5], "early"), ring[MAX][2];
    n = atoi(argv[2]);
    rfc5424 = !strcmp(argv[4], "5424");
    gethostname(host, sizeof host - 1);
    out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    for (int p = 0; p < n; p++) pipe(ring[p]);
    for (me = 0; me < n; me++) {
        if (fork() > 0) continue;
        int clock[MAX + 2]; /* the sender, its round, then its clock */
        char json[256], text[64];
        for (int r = 0; r < rounds; r++) {
            int bug = early && me == 1 && r == 0;
            if (bug) critical_section(); /* before the token: the bug */
            if (r > 0 || me > 0) {       /* wait for the token; merge the clock it carries */
                read(ring[me][0], clock, sizeof clock);
                for (int p = 0; p < n; p++) vc[p] = vc[p] > clock[p + 2] ? vc[p] : clock[p + 2];
                snprintf(json, sizeof json, "\"event\":\"recv\",\"type\":\"TOKEN\",\"from\":\"n%d\",\"id\":\"n%d#%d\"", clock[0], clock[0], clock[1]);
                snprintf(text, sizeof text, "token from n%d", clock[0]);
                log_event(json, text);
            }
            if (!bug) critical_section();
            if (r == rounds - 1 && me == n - 1) break; /* the last holder keeps it */
            int to = (me + 1) % n;
            snprintf(json, sizeof json, "\"event\":\"send\",\"type\":\"TOKEN\",\"to\":\"n%d\",\"id\":\"n%d#%d\"", to, me, r);
            snprintf(text, sizeof text, "token to n%d", to);
            log_event(json, text);
            clock[0] = me, clock[1] = r;
            memcpy(clock + 2, vc, sizeof vc);
            write(ring[to][1], clock, sizeof clock); /* the token carries my clock */
        }
        return 0;
    }
    while (wait(NULL) > 0) {}
    return 0;
}
