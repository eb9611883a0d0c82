/* The hamster killers without an arbiter as a mutexlab program (`mutexlab test elves`): node 0 is
 * the mayor, nodes 1..N the elves. JSON Lines on stdin and stdout (docs/test-any-program.md); the
 * design of elves_ledger.py beside it (and of examples/solutions/elves_no_arbiter.py).
 *
 *   gcc -O2 -o elves examples/nodes/elves_ledger.c                        correct
 *   gcc -O2 -DBROKEN_EAGER -o elves-eager examples/nodes/elves_ledger.c   answers every ledger request
 *                                                                        at once: two elves, one contract
 *
 * The mayor hands out each round of init's options.plan (INIT_CONTRACTS) and, once every contract
 * of it is done (CONTRACT_COMPLETED), sends STOP {round, final} to every elf and begins the next.
 * Each elf keeps a ledger (contracts taken per round, pins and poison free), changed under a
 * Ricart–Agrawala lock among the elves: with every LEDGER_REPLY in it takes its next contract, its
 * pins, its poison, as far as enough are free, tells the others (LEDGER_UPDATE, before the replies
 * it deferred: links are FIFO) and passes the lock on. Giving back needs no lock (RELEASE). An elf
 * holding all it needs does the contract in the same answer (nothing arrives unasked).
 * Deterministic: it reads nothing but its input. */
#include <stdio.h>
#include <string.h>

#include "jsonline.h"

#define LINE 70000
#define MAXR 64   /* rounds */
#define MAXC 256  /* contracts per round */
#define MAXN 128  /* elves */

static int me, elves, clk;
static int rounds, ncontracts[MAXR], plan[MAXR][MAXC];
static int pins_per_elf, per_hamster;
static const char *state = "";

/* the mayor */
static int round_no, done_count, done_seen[MAXC + 1];
/* an elf */
static int active, taken[MAXR + 1], free_pins, free_poison;
static int holding, holding_hamsters, has_pins, has_poison;
static int asking, replies, replied[MAXN + 1], deferred_n, deferred_to[MAXN], deferred_ts[MAXN];

static int tick(void) { return ++clk; }
static void seen(int ts) { if (ts > clk) clk = ts; }

static void set_state(const char *s) {
    if (strcmp(s, state) != 0) {
        state = s;
        printf("{\"type\":\"state\",\"state\":\"%s\"}\n", s);
    }
}

/* init's options.plan: [[h, h, ...], [h, ...], ...] */
static void read_plan(const char *v) {
    int depth = 0;
    rounds = 0;
    for (const char *p = v; *p; p++) {
        if (*p == '[') {
            if (++depth == 2 && rounds < MAXR) ncontracts[rounds] = 0;
        } else if (*p == ']') {
            if (--depth == 0) return;
            if (depth == 1 && rounds < MAXR) rounds++;
        } else if (depth == 2 && *p >= '0' && *p <= '9') {
            char *end;
            long h = strtol(p, &end, 10);
            if (rounds < MAXR && ncontracts[rounds] < MAXC) plan[rounds][ncontracts[rounds]++] = (int)h;
            p = end - 1;
        }
    }
}

/* -- the mayor ------------------------------------------------------------------------------ */
static void begin(void) {
    round_no++;
    done_count = 0;
    memset(done_seen, 0, sizeof done_seen);
    printf("{\"type\":\"event\",\"event\":\"round\",\"round\":%d}\n", round_no);
    for (int e = 1; e <= elves; e++)
        printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"INIT_CONTRACTS\",\"sender\":0,\"ts\":%d,"
               "\"round\":%d}}\n", e, tick(), round_no);
    set_state("MAYOR_WAITING");
}

static void completed(int r, int contract) {
    if (r != round_no || contract < 1 || contract > MAXC || done_seen[contract]) return;
    done_seen[contract] = 1;
    if (++done_count < ncontracts[round_no - 1]) return;
    int final = round_no == rounds;
    for (int e = 1; e <= elves; e++)
        printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"STOP\",\"sender\":0,\"ts\":%d,\"round\":%d,"
               "\"final\":%s}}\n", e, tick(), round_no, final ? "true" : "false");
    if (final) set_state("MAYOR_DONE");
    else begin();
}

/* -- an elf --------------------------------------------------------------------------------- */
static void send_elf(int to, const char *type, const char *fields) {
    printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"%s\",\"sender\":%d,\"ts\":%d%s}}\n", to, type, me,
           tick(), fields);
}

/* What I take next: 'c' a contract, 'p' pins, 'x' poison, 0 nothing; *units how many. */
static int need(int *units) {
    if (!holding) {
        *units = 1;
        return active && taken[round_no] < ncontracts[round_no - 1] ? 'c' : 0;
    }
    if (!has_pins) { *units = pins_per_elf; return 'p'; }
    if (!has_poison) { *units = holding_hamsters * per_hamster; return 'x'; }
    return 0;
}

static void go_on(void);

static void finish(void) {
    char fields[128];
    printf("{\"type\":\"event\",\"event\":\"contract_done\",\"round\":%d,\"contract\":%d,\"hamsters\":%d}\n",
           round_no, holding, holding_hamsters);
    printf("{\"type\":\"exit\",\"resource\":\"poison\",\"units\":%d}\n", has_poison);
    printf("{\"type\":\"exit\",\"resource\":\"pins\",\"units\":%d}\n", has_pins);
    printf("{\"type\":\"exit\",\"resource\":\"contract:%d.%d\"}\n", round_no, holding);
    free_pins += has_pins;
    free_poison += has_poison;
    snprintf(fields, sizeof fields, ",\"pins\":%d,\"poison\":%d", has_pins, has_poison);
    for (int j = 1; j <= elves; j++)
        if (j != me) send_elf(j, "RELEASE", fields);
    snprintf(fields, sizeof fields, ",\"round\":%d,\"contract\":%d", round_no, holding);
    holding = has_pins = has_poison = 0;
    send_elf(0, "CONTRACT_COMPLETED", fields);
    go_on();
}

static void critical(void) {
    int units, kind, took_c = 0, took_p = 0, took_x = 0;
    char fields[128];
    while ((kind = need(&units)) != 0) {
        if (kind == 'c') {
            holding = took_c = ++taken[round_no];
            holding_hamsters = plan[round_no - 1][holding - 1];
            printf("{\"type\":\"enter\",\"resource\":\"contract:%d.%d\"}\n", round_no, holding);
        } else if (kind == 'p' && free_pins >= units) {
            free_pins -= units;
            has_pins = took_p = units;
            printf("{\"type\":\"enter\",\"resource\":\"pins\",\"units\":%d}\n", units);
        } else if (kind == 'x' && free_poison >= units) {
            free_poison -= units;
            has_poison = took_x = units;
            printf("{\"type\":\"enter\",\"resource\":\"poison\",\"units\":%d}\n", units);
        } else {
            break;
        }
    }
    if (took_c || took_p || took_x) {
        snprintf(fields, sizeof fields, ",\"round\":%d,\"contract\":%d,\"pins\":%d,\"poison\":%d", round_no,
                 took_c, took_p, took_x);
        for (int j = 1; j <= elves; j++)
            if (j != me) send_elf(j, "LEDGER_UPDATE", fields);
    }
    for (int i = 0; i < deferred_n; i++) {
        snprintf(fields, sizeof fields, ",\"answers\":%d", deferred_ts[i]);
        send_elf(deferred_to[i], "LEDGER_REPLY", fields);
    }
    asking = replies = deferred_n = 0;
    go_on();
}

static void go_on(void) {
    int units, kind;
    if (strcmp(state, "ELF_DONE") == 0) return;
    kind = need(&units);
    if (asking) { set_state("ELF_REQUESTING"); return; }
    if (!kind) {
        if (has_poison) finish();
        else set_state("ELF_IDLE");
        return;
    }
    if ((kind == 'p' && free_pins < units) || (kind == 'x' && free_poison < units)) {
        set_state("ELF_WAIT_FOR_RELEASE");
        return;
    }
    set_state("ELF_REQUESTING");
    asking = tick();
    replies = 0;
    memset(replied, 0, sizeof replied);
    for (int j = 1; j <= elves; j++)
        if (j != me)
            printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"LEDGER_REQUEST\",\"sender\":%d,\"ts\":%d}}\n",
                   j, me, asking);
    if (elves == 1) critical();
}

static void elf_recv(const char *body) {
    int ts = (int)json_int(body, "ts", 0), sender = (int)json_int(body, "sender", -1);
    char fields[64];
    seen(ts);
    if (json_is(body, "type", "LEDGER_REQUEST")) {
        int mine = asking && (asking < ts || (asking == ts && me < sender));
#ifdef BROKEN_EAGER
        mine = 0; /* the bug: the lock is no lock */
#endif
        if (mine && deferred_n < MAXN) {
            deferred_to[deferred_n] = sender;
            deferred_ts[deferred_n++] = ts;
        } else {
            snprintf(fields, sizeof fields, ",\"answers\":%d", ts);
            send_elf(sender, "LEDGER_REPLY", fields);
        }
    } else if (json_is(body, "type", "LEDGER_REPLY")) {
        if (asking && json_int(body, "answers", -1) == asking && sender >= 1 && sender <= MAXN && !replied[sender]) {
            replied[sender] = 1;
            if (++replies == elves - 1) critical();
        }
    } else if (json_is(body, "type", "LEDGER_UPDATE")) {
        int r = (int)json_int(body, "round", 0), c = (int)json_int(body, "contract", 0);
        if (c && r >= 1 && r <= MAXR && c > taken[r]) taken[r] = c;
        free_pins -= (int)json_int(body, "pins", 0);
        free_poison -= (int)json_int(body, "poison", 0);
    } else if (json_is(body, "type", "RELEASE")) {
        free_pins += (int)json_int(body, "pins", 0);
        free_poison += (int)json_int(body, "poison", 0);
        if (strcmp(state, "ELF_WAIT_FOR_RELEASE") == 0) go_on();
    } else if (json_is(body, "type", "INIT_CONTRACTS")) {
        int r = (int)json_int(body, "round", 0);
        if (r >= 1 && r <= rounds) {
            round_no = r;
            active = 1;
            go_on();
        }
    } else if (json_is(body, "type", "STOP")) {
        const char *final = json_find(body, "final");
        active = 0;
        if (final && *final == 't') set_state("ELF_DONE");
        else if (!asking) set_state("ELF_IDLE");
    }
}

int main(void) {
    static char line[LINE];
    while (fgets(line, sizeof line, stdin)) {
        if (json_is(line, "type", "init")) {
            const char *options = json_find(line, "options");
            me = (int)json_int(line, "id", 1);
            elves = (int)json_int(line, "nodes", 1);
            if (elves > MAXN) elves = MAXN;
            clk = 0;
            state = "";
            read_plan(options ? json_find(options, "plan") : "[]");
            pins_per_elf = options ? (int)json_int(options, "pins_per_elf", 1) : 1;
            per_hamster = options ? (int)json_int(options, "poison_per_hamster", 1) : 1;
            free_pins = options ? (int)json_int(options, "pins", 0) : 0;
            free_poison = options ? (int)json_int(options, "poison", 0) : 0;
            round_no = done_count = active = holding = holding_hamsters = has_pins = has_poison = 0;
            asking = replies = deferred_n = 0;
            memset(taken, 0, sizeof taken);
            memset(replied, 0, sizeof replied);
            if (me == 0) begin();
            else set_state("ELF_IDLE");
            printf("{\"type\":\"done\",\"reinit\":true}\n");
        } else {
            if (json_is(line, "type", "recv")) {
                const char *body = json_find(line, "body");
                if (body && *body == '{') {
                    if (me == 0) {
                        seen((int)json_int(body, "ts", 0));
                        if (json_is(body, "type", "CONTRACT_COMPLETED"))
                            completed((int)json_int(body, "round", 0), (int)json_int(body, "contract", 0));
                    } else {
                        elf_recv(body);
                    }
                }
            }
            printf("{\"type\":\"done\"}\n");
        }
        fflush(stdout);
    }
    return 0;
}
