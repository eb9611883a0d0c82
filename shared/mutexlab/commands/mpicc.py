"""``mutexlab mpicc ARGS`` / ``mutexlab mpicxx ARGS``: the C (C++) compiler against mutexlab's MPI.

Every argument goes to gcc (g++) as it is; mutexlab adds its ``mpi.h`` to the include path and,
when linking, its MPI library and the linker's ``--wrap`` of the thread calls a rank counts
(docs/mpi.md). A link that fails on an MPI call mutexlab does not implement is named as such.
"""

from __future__ import annotations

import re
import subprocess
import sys

from .common import fail
from .registry import Command

UNDEFINED = re.compile(r"undefined reference to [`'](P?MPI_\w+)'")
# The compiler's words for a name the header does not declare: gcc's C (a value, then a type),
# then g++ (a value, then a type: `MPI_Win w;` at file scope).
UNDECLARED = re.compile(
    r"[‘'](P?MPI_\w+)[’'] (?:undeclared|was not declared|does not name a type)"
    r"|unknown type name [‘'](P?MPI_\w+)[’']"
)
# g++ on MPI-2's C++ bindings (MPI::Init, MPI::COMM_WORLD), which MPI-3 removed.
CXX_BINDINGS = re.compile(r"[‘']MPI[’'] (?:has not been declared|is not a (?:namespace|class))")
FORTRAN = re.compile(r"\.(?:f|for|ftn|fpp|f90|f95|f03|f08)$", re.IGNORECASE)
# Boost.MPI: a C++ library compiled against another MPI (Debian's libboost-mpi: Open MPI's ABI).
BOOST_MPI = re.compile(r"^\s*#\s*include\s*[<\"]boost/mpi", re.MULTILINE)
SOURCES = re.compile(r"\.(?:c|cc|cp|cpp|cxx|c\+\+|C)$")


def boost_mpi(args: list[str]) -> str | None:
    """The argument that makes a Boost.MPI program (its library, or a source including it), if any."""
    for arg in args:
        if arg.startswith("-lboost_mpi"):
            return arg
        if SOURCES.search(arg) and not arg.startswith("-"):
            try:
                with open(arg, encoding="utf-8", errors="replace") as source:
                    if BOOST_MPI.search(source.read(1_000_000)):
                        return arg
            except OSError:
                continue  # the compiler names a missing source
    return None


def compile_with(compiler: str, args: list[str]) -> int:
    from ..mpi import BuildError, compile_argv

    if not args or args in (["--help"], ["-h"]):
        print(
            f"usage: mutexlab mpi{'cxx' if compiler == 'g++' else 'cc'} [{compiler} arguments ...]\n"
            f"compile and link against mutexlab's MPI, for 'mutexlab test PROBLEM --mpi PROGRAM' (docs/mpi.md)"
        )
        return 0 if args else 2
    fortran = [a for a in args if FORTRAN.search(a) and not a.startswith("-")]
    if fortran:
        return fail(
            f"{fortran[0]} is Fortran: mutexlab's MPI has the C and C++ bindings only (docs/mpi.md#not-mpi)"
        )
    boost = boost_mpi(args)
    if boost:
        return fail(
            f"{boost}: Boost.MPI is not part of mutexlab's MPI — its library is compiled against another MPI "
            "(Debian's libboost-mpi against Open MPI), whose messages mutexlab cannot hold: call MPI's C "
            "functions (MPI_Send, MPI_Recv …) from C++ (docs/mpi.md#not-mpi)"
        )
    try:
        argv = compile_argv(compiler, args)
    except BuildError as exc:
        return fail(str(exc))
    try:
        done = subprocess.run(argv, stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        return fail(f"cannot run {compiler}: {exc.strerror or exc}")
    sys.stderr.write(done.stderr)
    undeclared = {name for found in UNDECLARED.findall(done.stderr) for name in found if name}
    missing = sorted(set(UNDEFINED.findall(done.stderr)) | undeclared)
    if done.returncode != 0 and missing:
        return fail(
            f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not part of mutexlab's MPI "
            "(docs/mpi.md lists what it implements)"
        )
    if done.returncode != 0 and CXX_BINDINGS.search(done.stderr):
        return fail(
            "MPI::… is MPI-2's C++ binding, removed in MPI-3 and not part of mutexlab's MPI: call the C "
            "functions (MPI_Init(&argc, &argv), MPI_Comm_rank(MPI_COMM_WORLD, &rank) …) from C++"
        )
    return done.returncode


def raw(name: str, args: list[str]) -> int:
    """The command run on its arguments as given (argparse would take gcc's flags for its own)."""
    return compile_with("g++" if name == "mpicxx" else "gcc", args)


def _arguments(p) -> None:
    p.add_argument("args", nargs="*", metavar="ARG", help="the compiler's arguments, as for gcc")


COMMAND = Command(
    "mpicc",
    "compile a C MPI program against mutexlab's MPI, for test --mpi",
    "gcc with mutexlab's mpi.h and MPI library (docs/mpi.md). Exit: the compiler's, 2 when an MPI "
    "call is not part of mutexlab's MPI.",
    lambda args: raw("mpicc", args.args),
    _arguments,
)
