/* A token ring of 3 threads (pthreads) guarding one critical section, each thread printing its
   events as clock-free JSON Lines (docs/verify-any-log.md) to one shared FILE*, the token handed
   on through a pipe per thread. cc -O2 -pthread o9_ring_threads.c -o ring && ./ring ROUNDS MODE
   > LOG, MODE: ok (a line written whole under the stdio lock), pieces (each line printed in
   three fprintf calls with nobody holding the stream: threads' partial lines interleave),
   eager (thread 2 enters before the token reaches it, after a pause: a handover in file order
   that no message orders). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define N 3
static int rounds, ring[N][2];
static const char *mode;

static void emit(int me, const char *body) {
    if (strcmp(mode, "pieces") == 0) { /* three calls, unlocked: another thread may come between */
        fprintf(stdout, "{\"pid\": \"t%d\", ", me);
        usleep(50);
        fprintf(stdout, "%s", body);
        usleep(50);
        fprintf(stdout, "}\n");
        fflush(stdout);
        return;
    }
    flockfile(stdout);
    fprintf(stdout, "{\"pid\": \"t%d\", %s}\n", me, body);
    fflush(stdout);
    funlockfile(stdout);
}

static void cs(int me) {
    emit(me, "\"event\": \"request\", \"resource\": \"cs\"");
    emit(me, "\"event\": \"enter\", \"resource\": \"cs\"");
    usleep(300);
    emit(me, "\"event\": \"exit\", \"resource\": \"cs\"");
}

static void *node(void *arg) {
    int me = (int)(long)arg, next = (me + 1) % N, prev = (me + N - 1) % N;
    char body[160];
    for (int r = 0; r < rounds; r++) {
        int eager = strcmp(mode, "eager") == 0 && me == 2 && r == 0;
        if (eager) { usleep(20000); cs(me); } /* "t1 must be done by now" */
        if (r > 0 || me > 0) {
            int id;
            if (read(ring[me][0], &id, sizeof id) != sizeof id) exit(1);
            snprintf(body, sizeof body, "\"event\": \"recv\", \"type\": \"TOKEN\", \"from\": \"t%d\", \"id\": \"%d\"", prev, id);
            emit(me, body);
        }
        if (!eager) cs(me);
        int id = me * 1000 + r;
        snprintf(body, sizeof body, "\"event\": \"send\", \"type\": \"TOKEN\", \"to\": \"t%d\", \"id\": \"%d\"", next, id);
        emit(me, body);
        if (write(ring[next][1], &id, sizeof id) != sizeof id) exit(1);
        for (int k = 0; k < 3; k++) emit(me, "\"event\": \"think\"");  /* while the next one works */
    }
    return NULL;
}

int main(int argc, char **argv) {
    rounds = atoi(argv[1]);
    mode = argc > 2 ? argv[2] : "ok";
    pthread_t t[N];
    for (int i = 0; i < N; i++) if (pipe(ring[i])) return 1;
    for (long i = 0; i < N; i++) pthread_create(&t[i], NULL, node, (void *)i);
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    return 0;
}
