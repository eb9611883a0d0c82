"""``mutexlab mpicxx ARGS``: g++ against mutexlab's MPI (``mpicc``'s C++ twin)."""

from __future__ import annotations

from .mpicc import _arguments, raw
from .registry import Command

COMMAND = Command(
    "mpicxx",
    "compile a C++ MPI program against mutexlab's MPI, for test --mpi",
    "g++ with mutexlab's mpi.h and MPI library (docs/mpi.md). Exit: the compiler's, 2 when an MPI "
    "call is not part of mutexlab's MPI.",
    lambda args: raw("mpicxx", args.args),
    _arguments,
)
