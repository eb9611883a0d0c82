/* The program's standard output flushed wherever mutexlab's MPI reads it (mpi.c: at every MPI
 * call, condition wait and sleep), C++'s std::cout with it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "internal.h"

/* C++'s std::cout, when the program calls std::ios_base::sync_with_stdio(false), buffers on its
 * own (a "\n" does not flush it): flushed with stdout wherever stdout is, its lines come back in
 * order with the rank's messages instead of never (the rank never exits: at_end waits). Found by
 * name (the Itanium C++ ABI's std::cout, std::ostream::flush and std::ios_base::Init) in a program
 * linked with libstdc++. Before GCC 13 std::cout is built only by the std::ios_base::Init of a
 * unit that includes <iostream>: one of our own builds it first (as such a unit would), so a
 * program without <iostream> is not flushed through an unbuilt stream. */
static void *cxx_cout;
static void *(*cxx_flush)(void *);
static int cxx_looked;
static long cxx_init_object[4]; /* a std::ios_base::Init (an empty class): never destroyed */

void ml_sync_stdout(void) { /* called with L not held */
    fflush(stdout);
    if (!cxx_looked) {
        void (*cxx_init)(void *);
        cxx_cout = dlsym(RTLD_DEFAULT, "_ZSt4cout");
        *(void **)&cxx_flush = dlsym(RTLD_DEFAULT, "_ZNSo5flushEv");
        *(void **)&cxx_init = dlsym(RTLD_DEFAULT, "_ZNSt8ios_base4InitC1Ev");
        if (cxx_cout && cxx_flush && cxx_init)
            cxx_init(cxx_init_object);
        else
            cxx_cout = NULL;
        cxx_looked = 1;
    }
    if (cxx_cout) cxx_flush(cxx_cout);
}
