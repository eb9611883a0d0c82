/* k-mutual exclusion, Raymond's variant of Ricart-Agrawala (enter after N-K replies, defer the
 * rest while inside or ahead). Written from docs/test-any-program.md.
 *
 * Two threads: a reader thread that fgets() stdin lines into a small queue and signals a
 * condition variable; a worker that waits on it, handles one line, answers, and then tells the
 * reader it may read again (so that every answer ends with done before the next input).
 *
 *   gcc -O2 -pthread -o kmx o11_kmutex_condvar.c            correct
 *   gcc -O2 -pthread -DBROKEN_TIE -o kmx-tie ...             forgets the tie-break on ids
 *
 * On end of input the reader says "unexpected EOF" and exits with status 1 (a student's habit).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 64
#define QLEN 8

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t have_line = PTHREAD_COND_INITIALIZER;
static char queue[QLEN][4096];
static int q_head = 0, q_tail = 0, eof_seen = 0;

static int me, n, k;
static long clock_ = 0, my_ts = 0;
static int requesting = 0, inside = 0, replies = 0;
static long deferred[MAXN + 1];  /* the ts of a deferred request, 0: none */

static long num_after(const char *s, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(s, pat);
    if (!p) return -1;
    return strtol(p + strlen(pat), NULL, 10);
}

/* the input's own type is its last "type" (a recv's body has one of its own, sorted before) */
static const char *last_type(const char *s) {
    const char *p = NULL, *q = s;
    while ((q = strstr(q, "\"type\":\"")) != NULL) { p = q; q++; }
    return p ? p + 8 : "";
}

static void send_msg(int to, const char *type, long ts) {
    printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"%s\",\"ts\":%ld,\"from\":%d}}\n", to, type, ts, me);
}

static void handle(const char *line) {
    const char *t = last_type(line);
    if (strncmp(t, "init\"", 5) == 0) {
        me = (int)num_after(line, "id");
        n = (int)num_after(line, "nodes");
        k = (int)num_after(line, "k");
        if (k < 1) k = 2;
        clock_ = my_ts = 0; requesting = inside = replies = 0;
        memset(deferred, 0, sizeof deferred);
        printf("{\"type\":\"done\",\"reinit\":true}\n");
        fflush(stdout);
        return;
    }
    if (strncmp(t, "request\"", 8) == 0) {
        requesting = 1; replies = 0; my_ts = ++clock_;
        for (int j = 1; j <= n; j++) if (j != me) send_msg(j, "REQUEST", my_ts);
        if (n - k <= 0) { inside = 1; requesting = 0; printf("{\"type\":\"enter\",\"resource\":\"cs\"}\n"); }
    } else if (strncmp(t, "release\"", 8) == 0) {
        inside = 0;
        printf("{\"type\":\"exit\",\"resource\":\"cs\"}\n");
        for (int j = 1; j <= n; j++) if (deferred[j]) { send_msg(j, "REPLY", deferred[j]); deferred[j] = 0; }
    } else if (strncmp(t, "recv\"", 5) == 0) {
        const char *body = strstr(line, "\"body\":");
        long ts = num_after(body, "ts");
        int from = (int)num_after(line, "from");
        if (ts > clock_) clock_ = ts;
        clock_++;
        if (strstr(body, "\"type\":\"REQUEST\"")) {
            int ahead;
#ifdef BROKEN_TIE
            ahead = requesting && my_ts < ts;
#else
            ahead = requesting && (my_ts < ts || (my_ts == ts && me < from));
#endif
            if (inside || ahead) deferred[from] = ts;
            else send_msg(from, "REPLY", ts);
        } else if (requesting && ts == my_ts) {  /* a REPLY names the request it answers */
            if (++replies >= n - k) {
                requesting = 0; inside = 1;
                printf("{\"type\":\"enter\",\"resource\":\"cs\"}\n");
            }
        }
    }
    printf("{\"type\":\"done\"}\n");
    fflush(stdout);
}

static void *reader(void *arg) {
    (void)arg;
    char buf[4096];
    for (;;) {
        if (!fgets(buf, sizeof buf, stdin)) {
            fprintf(stderr, "unexpected EOF\n");
            exit(1);
        }
        pthread_mutex_lock(&mu);
        while ((q_tail + 1) % QLEN == q_head) pthread_cond_wait(&have_line, &mu);
        strcpy(queue[q_tail], buf);
        q_tail = (q_tail + 1) % QLEN;
        pthread_cond_broadcast(&have_line);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    for (;;) {
        char line[4096];
        pthread_mutex_lock(&mu);
        while (q_head == q_tail && !eof_seen) pthread_cond_wait(&have_line, &mu);
        strcpy(line, queue[q_head]);
        q_head = (q_head + 1) % QLEN;
        pthread_cond_broadcast(&have_line);
        pthread_mutex_unlock(&mu);
        handle(line);
    }
}
