/* mutexlab.h's calls: an entry, an exit, a state or an event of the rank, a line to the director
 * in order with the rank's messages and printed lines (mpi.c's ml_say). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static void said(const char *fmt, const char *name) {
    char esc[512], line[600];
    ml_json_string(esc, sizeof esc, name);
    snprintf(line, sizeof line, fmt, esc);
    ml_say(line);
}

void mutexlab_enter(const char *resource) { said("{\"type\":\"enter\",\"resource\":%s}\n", resource); }

void mutexlab_exit(const char *resource) { said("{\"type\":\"exit\",\"resource\":%s}\n", resource); }

void mutexlab_state(const char *state) { said("{\"type\":\"state\",\"state\":%s}\n", state); }

void mutexlab_event(const char *event, const char *fields) {
    char esc[512], line[4096];
    ml_json_string(esc, sizeof esc, event);
    int has = fields && *fields;
    int k = snprintf(line, sizeof line, "{\"type\":\"event\",\"event\":%s%s%s}\n", esc, has ? "," : "",
                     has ? fields : "");
    if (k >= (int)sizeof line) ml_fatal("mutexlab_event(%.40s): fields longer than 4,000 bytes", event);
    ml_say(line);
}
