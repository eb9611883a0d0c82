/* Token ring with fork and pipes; each process writes its own clock-free JSON Lines file
   PREFIX.<i>; the message id is a number (sender*1000+seq). cc ring_cf.c && ./a.out PREFIX N ROUNDS [broken] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int n = atoi(argv[2]), rounds = atoi(argv[3]), broken = argc > 4, p[64][2];
    for (int i = 0; i < n; i++) pipe(p[i]);
    for (int me = 0; me < n; me++) {
        if (fork()) continue;
        char name[256]; snprintf(name, sizeof name, "%s.%d", argv[1], me);
        FILE *f = fopen(name, "w"); int seq = 0, id;
        for (int r = 0; r < rounds; r++) {
            fprintf(f, "{\"pid\":\"p%d\",\"event\":\"request\",\"resource\":\"cs\"}\n", me);
            if (broken && me == 1 && r == 0) {
                fprintf(f, "{\"pid\":\"p%d\",\"event\":\"enter\",\"resource\":\"cs\"}\n", me);
                fprintf(f, "{\"pid\":\"p%d\",\"event\":\"exit\",\"resource\":\"cs\"}\n", me);
            }
            if (r > 0 || me > 0) {
                read(p[me][0], &id, sizeof id);
                fprintf(f, "{\"pid\":\"p%d\",\"event\":\"recv\",\"type\":\"TOKEN\",\"from\":\"p%d\",\"id\":\"%d\"}\n", me, id / 1000, id);
            }
            if (!(broken && me == 1 && r == 0)) {
                fprintf(f, "{\"pid\":\"p%d\",\"event\":\"enter\",\"resource\":\"cs\"}\n", me);
                fprintf(f, "{\"pid\":\"p%d\",\"event\":\"exit\",\"resource\":\"cs\"}\n", me);
            }
            if (r == rounds - 1 && me == n - 1) break; /* the last holder keeps the token */
            id = me * 1000 + ++seq;
            fprintf(f, "{\"pid\":\"p%d\",\"event\":\"send\",\"type\":\"TOKEN\",\"to\":\"p%d\",\"id\":\"%d\"}\n", me, (me + 1) % n, id);
            fflush(f);
            write(p[(me + 1) % n][1], &id, sizeof id);
        }
        fclose(f); return 0;
    }
    while (wait(NULL) > 0) {}
    return 0;
}
