/* K-mutual exclusion for mutexlab's line protocol, node 1 keeping the K permits.
 *
 * Written from the protocol page, systems style: no stdio on the protocol's streams at all.
 * Input is read with read(2) seven bytes at a time into a line buffer (a line arrives in many
 * pieces); every answer is put together as an iovec array and written with one writev(2).
 * The JSON is not parsed: keys are sorted, so the input's own "type" is its last one and a recv's
 * body comes first.
 *
 *   gcc -O2 -o kmutex-chunks o14_kmutex_chunks.c
 *   gcc -O2 -DBROKEN_LAST_PERMIT -o kmutex-chunks-broken o14_kmutex_chunks.c
 *
 * BROKEN_LAST_PERMIT: the coordinator checks "any permits left?" as free >= 0 (after a refactor
 * from a count of permits handed out): one more node than K gets in.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAXN 64
#define MAXIOV 64

static int me, k, free_permits, inside;
static int queue[MAXN * 4], head, tail;
static struct iovec iov[MAXIOV];
static int niov;
static char numbers[MAXIOV][16];

static void put(const char *s) {
    iov[niov].iov_base = (void *)s;
    iov[niov].iov_len = strlen(s);
    niov++;
}

static void put_int(int v) {
    snprintf(numbers[niov], sizeof numbers[niov], "%d", v);
    put(numbers[niov]);
}

static void flush_answer(void) {
    struct iovec *at = iov;
    int left = niov;
    while (left > 0) {
        ssize_t n = writev(1, at, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            exit(3);
        }
        while (left > 0 && (size_t)n >= at->iov_len) {
            n -= (ssize_t)at->iov_len;
            at++;
            left--;
        }
        if (left > 0) {
            at->iov_base = (char *)at->iov_base + n;
            at->iov_len -= (size_t)n;
        }
    }
    niov = 0;
}

static void send_to(int to, const char *kind) {
    put("{\"type\":\"send\",\"to\":");
    put_int(to);
    put(",\"body\":{\"type\":\"");
    put(kind);
    put("\"}}\n");
}

static void enter(void) {
    inside = 1;
    put("{\"type\":\"enter\",\"resource\":\"cs\"}\n");
}

static int permit_left(void) {
#ifdef BROKEN_LAST_PERMIT
    return free_permits >= 0;
#else
    return free_permits > 0;
#endif
}

static void hand_out(void) { /* the coordinator: permits to the waiting, in order */
    while (head != tail && permit_left()) {
        int who = queue[head++ % (MAXN * 4)];
        free_permits--;
        if (who == me)
            enter();
        else
            send_to(who, "PERMIT");
    }
}

static int int_after(const char *line, const char *key) {
    const char *at = strstr(line, key);
    return at ? atoi(at + strlen(key)) : -1;
}

static const char *last_type(const char *line) {
    const char *at = NULL, *next = line;
    while ((next = strstr(next, "\"type\":\"")) != NULL) at = next++;
    return at ? at + 8 : "";
}

static void handle(const char *line) {
    const char *type = last_type(line);
    if (strncmp(type, "init\"", 5) == 0) {
        me = int_after(line, "{\"id\":");
        k = int_after(line, "\"k\":");
        free_permits = k;
        inside = 0;
        head = tail = 0;
        put("{\"type\":\"done\",\"reinit\":true}\n");
        flush_answer();
        return;
    }
    if (strncmp(type, "request\"", 8) == 0) {
        if (me == 1) {
            queue[tail++ % (MAXN * 4)] = 1;
            hand_out();
        } else {
            send_to(1, "ASK");
        }
    } else if (strncmp(type, "release\"", 8) == 0) {
        inside = 0;
        put("{\"type\":\"exit\",\"resource\":\"cs\"}\n");
        if (me == 1) {
            free_permits++;
            hand_out();
        } else {
            send_to(1, "GIVE");
        }
    } else if (strncmp(type, "recv\"", 5) == 0) {
        int from = int_after(line, "\"from\":");
        const char *body = strstr(line, "\"body\":{\"type\":\"");
        const char *kind = body ? body + 16 : "";
        if (strncmp(kind, "ASK\"", 4) == 0) {
            queue[tail++ % (MAXN * 4)] = from;
            hand_out();
        } else if (strncmp(kind, "GIVE\"", 5) == 0) {
            free_permits++;
            hand_out();
        } else if (strncmp(kind, "PERMIT\"", 7) == 0) {
            enter();
        }
    }
    put("{\"type\":\"done\"}\n");
    flush_answer();
}

int main(void) {
    static char line[1 << 16];
    size_t used = 0;
    char chunk[7];
    for (;;) {
        ssize_t n = read(0, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        for (ssize_t i = 0; i < n; i++) {
            if (chunk[i] == '\n') {
                line[used] = 0;
                if (used > 0) handle(line);
                used = 0;
            } else if (used + 1 < sizeof line) {
                line[used++] = chunk[i];
            }
        }
    }
}
