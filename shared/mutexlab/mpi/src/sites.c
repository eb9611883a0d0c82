/* Where a thread waits in a loop of its own (docs/mpi.md#linger): a digest of its call stack, each
 * return address taken from the base of the file it lies in, so the same place gives the same
 * digest in every run whatever the address-space layout. The director lets such a loop go round
 * with nothing arriving (a linger); a loop that gave up for another loop, or for the same loop
 * called from elsewhere, waits at another place, so an unchanged digest and no word said show
 * that the linger changed nothing the program can act on. Taken only where a thread would wait
 * (after its polls with nothing new), and on each poll of its way back after a linger (256 at
 * most), never on a poll that goes on by itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdint.h>

#include "internal.h"

#define SITE_FRAMES 48 /* deeper than any loop's own calls; a deeper recursion is one place */

unsigned long ml_call_site(void) {
    void *frames[SITE_FRAMES];
    int n = backtrace(frames, SITE_FRAMES);
    uint64_t digest = 1469598103934665603ULL; /* FNV-1a over the frames' offsets */
    for (int i = 0; i < n; i++) {
        Dl_info info;
        uintptr_t at = (uintptr_t)frames[i];
        if (dladdr(frames[i], &info) && info.dli_fbase) at -= (uintptr_t)info.dli_fbase;
        for (int b = 0; b < 8; b++) digest = (digest ^ ((at >> (8 * b)) & 0xff)) * 1099511628211ULL;
    }
    return (unsigned long)digest;
}
