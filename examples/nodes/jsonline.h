/* A few helpers to read mutexlab's node protocol lines (one JSON object per line) in C, without a
 * JSON library: find a key at the top level of the object (or inside one nested object) and read
 * a whole number or a string after it. Enough for the examples; a real node may use cJSON. */
#ifndef JSONLINE_H
#define JSONLINE_H

#include <stdlib.h>
#include <string.h>

/* The value of "key" in the object that starts at obj ('{'), at that object's own level: a
 * pointer to the first character of the value, or NULL. */
static const char *json_find(const char *obj, const char *key) {
    size_t klen = strlen(key);
    int depth = 0;
    for (const char *p = obj; *p; p++) {
        if (*p == '"') {
            const char *start = p + 1;
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1]) p++;
            if (!*p) return NULL;
            if (depth == 1 && (size_t)(p - start) == klen && strncmp(start, key, klen) == 0) {
                const char *v = p + 1;
                while (*v == ' ') v++;
                if (*v == ':') {
                    v++;
                    while (*v == ' ') v++;
                    return v;
                }
            }
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            if (--depth == 0) return NULL;
        }
    }
    return NULL;
}

static long json_int(const char *obj, const char *key, long missing) {
    const char *v = json_find(obj, key);
    return v ? strtol(v, NULL, 10) : missing;
}

/* Whether the string value of "key" equals want. */
static int json_is(const char *obj, const char *key, const char *want) {
    const char *v = json_find(obj, key);
    size_t n = strlen(want);
    return v && *v == '"' && strncmp(v + 1, want, n) == 0 && v[1 + n] == '"';
}

#endif
