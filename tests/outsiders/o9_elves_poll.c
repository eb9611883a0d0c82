/* The hamster killers for mutexlab's node protocol, in C: standard input set non-blocking and
 * waited on with poll(2), read(2) into a buffer of its own and cut into lines; each answer
 * composed in memory and written with write(2) (no stdio on standard output). Written from
 * docs/test-any-program.md alone.
 *
 * The mayor (node 0) deals each round's contracts round-robin (contract c to elf (c-1) % N + 1)
 * and keeps the town's pins and poison: an elf with a contract asks it for its tools (TOOLS), the
 * mayor gives them in order of asking once they are free (GIVE), and the elf does the contract at
 * once and brings them back (BACK), which also tells the contract done. With every contract of
 * the round back, the mayor STOPs the round and deals the next.
 *
 *   -DBROKEN_EARLY_STOP   the mayor counts a contract done when it gives the tools, not when they
 *                         come back: the last round's STOP may overtake the last contract
 *   -DBROKEN_SEGV         an elf reads its second round's plan through a null pointer
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#define MAXC 64
#define MAXR 16
#define MAXN 64

static char out[1 << 16];
static size_t outlen;
static void emit(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    outlen += vsnprintf(out + outlen, sizeof out - outlen, fmt, ap);
    va_end(ap);
    out[outlen++] = '\n';
}
static void flush_out(void) {
    size_t at = 0;
    while (at < outlen) {
        ssize_t w = write(1, out + at, outlen - at);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) exit(1);
        at += (size_t)w;
    }
    outlen = 0;
}

/* a number after "key": anywhere in s (the keys read here are unique in their line) */
static long num(const char *s, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(s, pat);
    return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

static int me, nelves, pins_per_elf, pph, ncontracts, nrounds, clk;
static int plan[MAXR][MAXC];
/* the mayor's */
static int round_no, given, back, pins_free, poison_free;
static int askq[MAXN * MAXC][3], qhead, qtail; /* elf, round, contract */
/* an elf's */
static int jobs[MAXR * MAXC][2], jhead, jtail, busy;

static void send_body(int to, const char *type, int round, int contract) {
    emit("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"%s\",\"sender\":%d,\"ts\":%d,\"round\":%d,\"contract\":%d}}",
         to, type, me, ++clk, round, contract);
}

static void deal(void) {
    emit("{\"type\":\"event\",\"event\":\"round\",\"round\":%d}", round_no);
    given = back = 0;
    for (int c = 1; c <= ncontracts; c++) send_body((c - 1) % nelves + 1, "JOB", round_no, c);
}

static void grant(void) {
    while (qhead < qtail) {
        int r = askq[qhead][1], c = askq[qhead][2];
        int poison = plan[r - 1][c - 1] * pph;
        if (pins_free < pins_per_elf || poison_free < poison) return;
        pins_free -= pins_per_elf;
        poison_free -= poison;
        send_body(askq[qhead][0], "GIVE", r, c);
        qhead++;
        given++;
    }
}

static void round_over(void) {
    for (int e = 1; e <= nelves; e++)
        emit("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"STOP\",\"sender\":0,\"ts\":%d,\"round\":%d}}", e, ++clk, round_no);
    if (round_no < nrounds) {
        round_no++;
        deal();
    } else {
        emit("{\"type\":\"state\",\"state\":\"MAYOR_DONE\"}");
    }
}

static void next_job(void) {
    if (busy || jhead == jtail) return;
    int r = jobs[jhead][0], c = jobs[jhead][1];
    busy = 1;
    emit("{\"type\":\"enter\",\"resource\":\"contract:%d.%d\"}", r, c);
    emit("{\"type\":\"state\",\"state\":\"ELF_WAIT_FOR_RELEASE\"}");
    send_body(0, "TOOLS", r, c);
}

static void work(int r, int c) {
    int h = plan[r - 1][c - 1];
#ifdef BROKEN_SEGV
    if (r == 2) h = *(volatile int *)NULL;
#endif
    emit("{\"type\":\"enter\",\"resource\":\"pins\",\"units\":%d}", pins_per_elf);
    emit("{\"type\":\"enter\",\"resource\":\"poison\",\"units\":%d}", h * pph);
    emit("{\"type\":\"event\",\"event\":\"contract_done\",\"round\":%d,\"contract\":%d,\"hamsters\":%d}", r, c, h);
    emit("{\"type\":\"exit\",\"resource\":\"poison\",\"units\":%d}", h * pph);
    emit("{\"type\":\"exit\",\"resource\":\"pins\",\"units\":%d}", pins_per_elf);
    emit("{\"type\":\"exit\",\"resource\":\"contract:%d.%d\"}", r, c);
    send_body(0, "BACK", r, c);
    jhead++;
    busy = 0;
    emit("{\"type\":\"state\",\"state\":\"ELF_IDLE\"}");
    next_job();
}

static void init(const char *line) {
    me = (int)num(line, "id");
    nelves = (int)num(line, "elves");
    pins_per_elf = (int)num(line, "pins_per_elf");
    pph = (int)num(line, "poison_per_hamster");
    ncontracts = (int)num(line, "contracts");
    nrounds = (int)num(line, "rounds");
    pins_free = (int)num(line, "pins");
    poison_free = (int)num(line, "poison");
    const char *p = strstr(line, "\"plan\":[");
    p += strlen("\"plan\":[");
    for (int r = 0; r < nrounds; r++) {
        p = strchr(p, '[') + 1;
        for (int c = 0; c < ncontracts; c++) {
            char *end;
            plan[r][c] = (int)strtol(p, &end, 10);
            p = end + 1; /* past the comma (or the closing bracket) */
        }
    }
    clk = 0; qhead = qtail = jhead = jtail = busy = 0;
    if (me == 0) {
        round_no = 1;
        deal();
    }
}

static void recv_line(const char *line) {
    int from = (int)num(line, "from"), r = (int)num(line, "round"), c = (int)num(line, "contract");
    int ts = (int)num(line, "ts");
    if (ts > clk) clk = ts;
    clk++;
    const char *body = strstr(line, "\"body\":");
    char type[16] = "";
    sscanf(strstr(body, "\"type\":\"") + 8, "%15[A-Z_]", type);
    if (me == 0) {
        if (!strcmp(type, "TOOLS")) {
            askq[qtail][0] = from, askq[qtail][1] = r, askq[qtail][2] = c;
            qtail++;
        } else if (!strcmp(type, "BACK")) {
            pins_free += pins_per_elf;
            poison_free += plan[r - 1][c - 1] * pph;
            back++;
        }
        grant();
#ifdef BROKEN_EARLY_STOP
        int counted = given;
#else
        int counted = back;
#endif
        if (counted == ncontracts && r == round_no) {
            given = back = -1000; /* once per round */
            round_over();
        }
    } else if (!strcmp(type, "JOB")) {
        jobs[jtail][0] = r, jobs[jtail][1] = c;
        jtail++;
        next_job();
    } else if (!strcmp(type, "GIVE")) {
        work(r, c);
    } else if (!strcmp(type, "STOP")) {
        if (r == nrounds) emit("{\"type\":\"state\",\"state\":\"ELF_DONE\"}");
    }
}

static void handle(const char *line) {
    const char *t = strrchr(line, '}');
    /* the input's own type is its last key: ..."type":"recv"} */
    const char *k = t - 1;
    while (k > line && *k != ':') k--;
    char type[16] = "";
    sscanf(k + 1, "\"%15[a-z]", type);
    if (!strcmp(type, "init")) {
        init(line);
        emit("{\"type\":\"done\",\"reinit\":true}");
    } else {
        if (!strcmp(type, "recv")) recv_line(line);
        emit("{\"type\":\"done\"}");
    }
    flush_out();
}

int main(void) {
    static char buf[1 << 20];
    size_t have = 0;
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    struct pollfd pfd = {.fd = 0, .events = POLLIN};
    for (;;) {
        if (poll(&pfd, 1, -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        ssize_t n = read(0, buf + have, sizeof buf - 1 - have);
        if (n == 0) return 0;
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) continue;
            return 1;
        }
        have += (size_t)n;
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', buf + have - start)) != NULL) {
            *nl = '\0';
            if (nl > start) handle(start);
            start = nl + 1;
        }
        have = (size_t)(buf + have - start);
        memmove(buf, start, have);
    }
}
