"""``mutexlab test PROBLEM --np N --mpi PROGRAM [ARGS]`` and ``replay FILE --mpi PROGRAM``: an MPI
program built with ``mutexlab mpicc``, its ranks the nodes (docs/mpi.md).

Each rank runs behind ``mutexlab/mpi/rank.py``, which turns the lines the program prints into
``enter``/``exit`` by ``--regex``. The ranks act on their own: the problem is made with no
requests, so nothing asks them and an entry needs no request pending.
"""

from __future__ import annotations

import argparse
import mmap
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .. import watcher
from ..setups import ConfigError
from .common import count as whole
from .common import readable
from .flags import entries

GROUPS = ("enter", "exit")
# What a newcomer puts first out of habit: a launcher, whose ranks mutexlab starts itself.
LAUNCHER = re.compile(r"(mpirun|mpiexec|orterun|prterun|srun|aprun)(\.[\w-]+)?")
# The libraries of another MPI, named in the dynamic section of a program linked with them; the
# string every program linked with mutexlab's own MPI holds (src/mpi.c, said when run by hand).
# Any library of theirs: libmpi, libmpich, and their C++ and Fortran bindings (libmpi_mpifh,
# libmpi_usempif08, libmpichfort, libmpi_cxx …).
OTHER_MPI = re.compile(rb"lib(?:mpi|mpich)\w*\.so[.\d]*")
FORTRAN_MPI = re.compile(r"libmpi_(?:mpifh|usempi)|libmpichf|libfmpich")
# A Python program on mpi4py (its command ``python…``, or a script whose first line names python).
PYTHON = re.compile(r"python[\d.]*")
OURS = b"this program was built with mutexlab mpicc"


def add_arguments(p, replay: bool = False) -> None:
    p.add_argument(
        "--mpi",
        nargs=argparse.REMAINDER,
        metavar="PROGRAM",
        help="an MPI program built with 'mutexlab mpicc', then its arguments: its ranks are the nodes "
        "(last on the line: everything after it is the program's)",
    )
    if replay:
        return
    p.add_argument("--np", type=whole(1), metavar="N", help="--mpi: how many ranks (default: --nodes)")
    p.add_argument(
        "--entries",
        type=entries,
        metavar="K",
        help="--mpi: each rank must enter K times per run, or K0,K1,… rank by rank (0: a rank that "
        "need not enter); a run that comes to rest with a rank short of it is a deadlock",
    )
    p.add_argument(
        "--regex",
        metavar="REGEX",
        help="--mpi: a line the program prints that this matches is an enter (named group 'enter' took "
        "part) or an exit (group 'exit'); optional groups 'resource', 'index' (the resource "
        "is resource:index; resource_NAME names NAME whatever it matched) and 'units'; a group "
        "state_NAME is the state NAME, event_NAME an event "
        "whose fields are the groups f_FIELD",
    )
    p.add_argument(
        "--sync-sends",
        action="store_true",
        help="--mpi: a standard send (MPI_Send, MPI_Isend) waits until a receive matches it, as MPI "
        "allows (Open MPI and MPICH do for large messages): a program relying on buffering hangs",
    )
    p.add_argument(
        "--stdin",
        metavar="FILE",
        help="--mpi: rank 0 reads FILE as its standard input, as mpirun gives rank 0 its own "
        "(mpirun -np 4 ./program < FILE); the other ranks read nothing",
    )
    p.add_argument(
        "--regex-file",
        metavar="FILE",
        help="--mpi: the --regex, read from FILE (its trailing newlines dropped)",
    )


REGEX_FILE_LIMIT = 64 * 1024  # a regex file larger than this is not a regex


def regex_of(args) -> str | None:
    """The regex of --regex or --regex-file (ConfigError for both, or a file it cannot use)."""
    path = getattr(args, "regex_file", None)
    if path is None:
        return args.regex
    if args.regex is not None:
        raise ConfigError("give --regex or --regex-file, not both")
    try:
        with open(path, "rb") as handle:
            raw = handle.read(REGEX_FILE_LIMIT + 1)
    except OSError as exc:
        raise ConfigError(f"--regex-file {path}: {exc.strerror or exc}") from None
    if len(raw) > REGEX_FILE_LIMIT:
        raise ConfigError(f"--regex-file {path}: larger than {REGEX_FILE_LIMIT} bytes, not a regex")
    try:
        text = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        raise ConfigError(f"--regex-file {path}: not UTF-8 text") from None
    if not text or "\n" in text:
        raise ConfigError(
            f"--regex-file {path}: write the regex on one line (the file has {len(text.splitlines())})"
        )
    return text


def options_first(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``test bees --mpi --np 5 ./bees``: mutexlab's own options written between ``--mpi`` and
    the program are moved before ``--mpi`` (``test bees --np 5 --mpi ./bees``); from the first
    word that is not one of them on, everything is the program's and its arguments'."""
    if "--mpi" not in argv:
        return argv
    command = next((word for word in argv if not word.startswith("-")), None)
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)  # noqa: SLF001 - argparse lists no subparsers publicly
    if sub is None or command not in sub.choices:
        return argv
    own = sub.choices[command]._option_string_actions  # noqa: SLF001 - the options' table
    at = argv.index("--mpi")
    moved: list[str] = []
    word = at + 1
    while word < len(argv) and argv[word].startswith("-") and argv[word] != "--mpi":
        flag, _, value = argv[word].partition("=")
        action = own.get(flag)
        if action is None:
            break  # not mutexlab's: the program's (a program's name never starts with '-')
        takes = action.nargs != 0 and not value
        moved += argv[word : word + 1 + takes]
        word += 1 + takes
    return [*argv[:at], *moved, *argv[at : at + 1], *argv[word:]] if moved else argv


def check_regex(pattern: str | None, named: bool = False) -> None:
    """``pattern`` has a group ``enter`` or ``exit`` (and ``resource`` when ``named``: a problem
    of several resources); ConfigError naming what is missing."""
    if pattern is None:
        return
    import regex

    try:
        names = regex.compile(pattern).groupindex
    except regex.error as exc:
        raise ConfigError(f"--regex {pattern!r} is not a regular expression: {exc}") from None
    if not set(GROUPS) & set(names):
        raise ConfigError(
            f"--regex {pattern!r} has no named group 'enter' or 'exit': write e.g. "
            "'(?P<enter>enters)|(?P<exit>leaves) the critical section'"
        )
    if named and "resource" not in names:
        raise ConfigError(
            f"--regex {pattern!r} has no named group 'resource': this problem has several resources, "
            "and an entry must name one (e.g. 'enters (?P<resource>[a-z]+:\\d+)')"
        )


def program(args) -> list[str]:
    if args.node is not None:
        raise ConfigError(
            "give --node CMD (a node-protocol program) or --mpi PROGRAM (an MPI program), not both"
        )
    if not args.mpi:
        raise ConfigError("--mpi names no program: put it last, '--mpi ./program [args]'")
    if LAUNCHER.fullmatch(os.path.basename(args.mpi[0])):
        raise ConfigError(
            f"--mpi takes the program itself, not {os.path.basename(args.mpi[0])!r}: mutexlab starts the "
            "ranks (--np N), as in '--np 4 --mpi ./program [args]'"
        )
    found = shutil.which(args.mpi[0])
    if found is None and args.mpi[0].startswith("-"):  # a misspelt flag of ours, taken as the program
        raise ConfigError(
            f"{args.mpi[0]!r} is no option of mutexlab test, so it was taken as the program after --mpi "
            "(mutexlab's flags there are read up to the first word that is not one of them): "
            f"check its spelling ('mutexlab test --help'), or put it before --mpi"
        )
    if found is None:
        raise ConfigError(f"cannot start {args.mpi[0]!r}: not found or not executable")
    other = other_mpi(found)
    if FORTRAN_MPI.search(other):
        raise ConfigError(
            f"{args.mpi[0]} is a Fortran MPI program ({other}): mutexlab's MPI has the C and C++ "
            "bindings only, so a Fortran program cannot be tested with --mpi (docs/mpi.md#not-mpi)"
        )
    if mpi4py(found, args.mpi[1:]):
        raise ConfigError(
            f"{' '.join(args.mpi[:2])} is a Python program on mpi4py: mutexlab's MPI is for C and C++ "
            "('mutexlab mpicc', 'mutexlab mpicxx'), and mpi4py runs on another MPI, whose messages "
            "mutexlab cannot hold; a Python program can be tested as a node-protocol program "
            "(--node, docs/test-any-program.md)"
        )
    if other:
        raise ConfigError(
            f"{args.mpi[0]} is linked with another MPI ({other}): build it with 'mutexlab mpicc' "
            "('mutexlab mpicxx' for C++), the same arguments as any mpicc, so that mutexlab holds its "
            "messages (docs/mpi.md)"
        )
    return list(args.mpi)


def other_mpi(path: str) -> str:
    """The other MPI library an ELF executable at ``path`` is linked with, without mutexlab's own
    ("" for anything else: a script, a wrapper such as env or valgrind, a file it cannot read)."""
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data[:4] != b"\x7fELF" or data.find(OURS) >= 0:
                return ""
            named = OTHER_MPI.search(data)  # type: ignore[call-overload]
            return named.group().decode() if named else ""
    except (OSError, ValueError):
        return ""


def mpi4py(path: str, args: list[str]) -> bool:
    """Whether the command is a Python script that imports mpi4py: ``python script.py`` or a
    script whose ``#!`` line names python (only the script's first 64 kB are read)."""
    script = path
    if PYTHON.fullmatch(os.path.basename(path)):
        script = next((a for a in args if not a.startswith("-")), "")
    try:
        with open(script, "rb") as f:
            head = f.read(65536)
    except OSError:
        return False
    first = head.split(b"\n", 1)[0]
    if script == path and not (first.startswith(b"#!") and b"python" in first):
        return False
    return b"mpi4py" in head


def processes(args, options: dict[str, Any]) -> int:
    """The problem's processes for ``--np`` ranks (``--nodes`` without it). A problem with a role
    beside its processes (its node 0) has it as rank 0 and the processes as ranks 1..np-1; the
    role, which never sees ``init``, draws its own workload (``DRAWN_BY_PROGRAM``)."""
    from ..director.problem import DRAWN_BY_PROGRAM, has_role

    if not has_role(args.problem):
        return args.np or args.nodes
    options[DRAWN_BY_PROGRAM] = True
    if args.np is None:
        return args.nodes
    if args.np < 2:
        raise ConfigError(
            f"--np {args.np}: {args.problem} needs rank 0 for its node 0 and at least one rank beside it"
        )
    return args.np - 1


def node_command(args, resource: str) -> list[str]:
    """The nodes' command for ``test --mpi``; ConfigError when the flags do not fit."""
    from ..mpi import rank_argv

    given, pattern, stdin = program(args), regex_of(args), getattr(args, "stdin", None)
    check_regex(pattern, named=not resource)
    sync = bool(getattr(args, "sync_sends", False))
    return rank_argv(given, pattern, resource, sync, stdin and readable(stdin, "--stdin"))


def replay_command(args, recorded: list[str], resource: str) -> list[str]:
    """The nodes' command for ``replay FILE --mpi``: the regex and the resource the scenario was
    found with (``resource`` where it names none)."""
    from ..mpi import program_of, rank_argv, resource_of, stdin_of, sync_sends_of

    stdin = stdin_of(recorded)  # the counterexample's: the run it recorded read it
    return rank_argv(
        program(args),
        program_of(recorded)[1],
        resource_of(recorded, resource),
        sync_sends_of(recorded),
        stdin and readable(stdin, "the counterexample's --stdin"),
    )


def shown(argv: list[str]) -> list[str]:
    """What a node command of ``--mpi`` runs, for the text: the program, not the adapter."""
    from ..mpi import program_of

    return program_of(argv)[0] or argv


def unread_output(argv: list[str]) -> bool:
    """A node command of ``--mpi``: its rank's lines are read through a filter, some may go unread."""
    from ..mpi import program_of

    return bool(program_of(argv)[0])


class Errors(list):
    """What the ranks reported as not supported, filled on the way out: up to ``mark``, when it was
    called. The shrinking's runs on fewer ranks may ask a program for a size it cannot take (a
    rank 0 that sends to rank 1, alone): that candidate fails to reproduce, and no more."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.upto: int | None = None

    def mark(self) -> None:
        self.upto = os.path.getsize(self.path)


@contextmanager
def errors() -> Iterator[Errors]:
    """Collects what the ranks report as not supported (a list filled on the way out)."""
    watcher.start()  # running before the directory is made: told of it at once
    folder = tempfile.mkdtemp(prefix="mutexlab-mpi-")
    watcher.watch_dir(folder)  # removed by the watcher if this process is killed (SIGKILL too)
    open(path := os.path.join(folder, "errors.txt"), "wb").close()
    found = Errors(path)
    before = os.environ.get("MUTEXLAB_MPI_ERRORS")
    os.environ["MUTEXLAB_MPI_ERRORS"] = path
    try:
        yield found
    finally:
        if before is None:
            os.environ.pop("MUTEXLAB_MPI_ERRORS", None)
        else:
            os.environ["MUTEXLAB_MPI_ERRORS"] = before
        with open(path, "rb") as text:
            said = text.read() if found.upto is None else text.read(found.upto)
        lines = said.decode("utf-8", "replace").splitlines()
        found += sorted({line.strip() for line in lines if line.strip()})
        shutil.rmtree(folder, ignore_errors=True)
        watcher.unwatch_dir(folder)


def unsupported(found: list[str]) -> str:
    """The first reason a rank stopped (the others, often the same on other lines, counted)."""
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    if found[0].startswith("--regex"):
        return f"the program was not judged: {found[0]}{more} (docs/mpi.md#entries)"
    return f"the program stopped: {found[0]}{more} ({where_explained(found[0])})"


# Which page says more about why a rank stopped: a call or datatype outside the subset, one of
# the library's limits, a thread it cannot count; else (MPI_Buffer_detach with none attached:
# a mistake the MPIs answer differently) the page itself.
_EXPLAINED = (
    (
        (
            "not supported by mutexlab's MPI",
            "mutexlab's MPI does not know",
            "mutexlab's MPI knows",
            "mutexlab's MPI reduces",
        ),
        "docs/mpi.md lists what mutexlab's MPI implements",
    ),
    (("more than ", "carries at most"), "docs/mpi.md#limits"),
    (("from a thread not started",), "docs/mpi.md#threads"),
)


def where_explained(reason: str) -> str:
    for words, page in _EXPLAINED:
        if any(w in reason for w in words):
            return page
    return "docs/mpi.md"


def state_groups(pattern: str | None) -> list[str]:
    """The NAMEs of ``pattern``'s ``state_NAME`` groups, however spelled (``(?P<…>``, ``(?<…>``)."""
    if not pattern:
        return []
    import regex

    try:
        names = regex.compile(pattern).groupindex
    except regex.error:  # (check_regex refused it before any run)
        return []
    return sorted(name[len("state_") :] for name in names if name.startswith("state_"))


def unreported(
    message: str,
    events: list[dict[str, Any]],
    rule: str = "",
    pattern: str | None = None,
    details: list[str] | None = None,
) -> str | None:
    """A run that came to rest unfinished by the problem's own end (its final states) with no
    rank having reported a state: the finding stands (a program stuck before its first state
    looks the same), but the likelier cause is that the states are printed and --regex does not
    read them — unless ``pattern``, the --regex, has ``state_`` groups: then it reads states, and
    the note says no rank printed one (telling such a user to add the groups would mislead).
    ``details``, the finding's lines: when every rule they name is ``[held-at-end]`` (a rank of
    ``mutex`` deadlocked inside its section), no final state was missed: no note."""
    from ..director.judge import NO_PROGRESS_SEEN, UNFINISHED

    if rule == NO_PROGRESS_SEEN:  # the role's lines unread: perhaps printed where none is read
        return "note: a rank's lines are read from its standard output (its standard error is not matched)"
    if message != UNFINISHED or any(e.get("event") == "state" for e in events):
        return None
    rules = [line.strip() for line in details or [] if line.strip().startswith("[")]
    if rules and all(line.startswith("[held-at-end]") for line in rules):
        return None
    states = state_groups(pattern)
    if states:
        return (
            f"note: no rank reported a state in this run, though --regex reads states ({', '.join(states)}): "
            "no rank printed such a line before the run came to rest — each stopped before its first "
            "state, or printed it on its standard error (which is not matched)"
        )
    return (
        "note: no rank reported a state in this run; if the program prints them on its standard "
        "output (its standard error is not matched), give --regex groups state_NAME (and event_NAME), "
        "or call mutexlab_state (docs/mpi.md#entries)"
    )


TRACE_KEYS = {"event", "pid", "t", "vc"}


def unlike_options(events: list[dict[str, Any]], options: dict[str, Any]) -> str | None:
    """A rank's event whose number is named as an option and differs from it (a bee dying after
    2 eggs where the options say ``eggs`` 5): the program read another configuration from its own
    arguments than the options the audit judges by, the likelier cause of the finding."""
    from ..director.lines import RESERVED_EVENTS

    for event in events:
        if event.get("event") in RESERVED_EVENTS:
            continue
        for key, value in event.items():
            wanted = options.get(key)
            if key in TRACE_KEYS or type(value) is not int or type(wanted) is not int or value == wanted:
                continue
            return (
                f"note: {event.get('pid')}'s {event.get('event')} says {key} {value} where the test's "
                f"options say {key}={wanted}: the audit judges by the options, so give the test the "
                f"values the program took from its arguments (-o {key}={value} …) (docs/mpi.md#options-and-arguments)"
            )
    return None


def hints(
    events: list[dict[str, Any]], options: dict[str, Any], finding, pattern: str | None = None
) -> list[str]:
    """Every note on a finding of an MPI run that applies, the likeliest cause first: options
    unlike the program's own (the audit judged another configuration), then states or lines
    unread (``pattern``: the --regex), then a thread the library cannot see. One does not hide
    another: a run can both take other options and print its states where --regex does not read them."""
    found = (
        unlike_options(events, options),
        unreported(finding.message, events, finding.rule, pattern, finding.details),
        busy(finding.rule),
    )
    return [note for note in found if note]


def busy(rule: str) -> str | None:
    """A rank that did not answer in time: its library writes the protocol, so no buffering of the
    program's is to blame (as the stall's own words suggest for any node), but a thread that waits
    where the library cannot see it."""
    if rule != "stalled":
        return None
    return (
        "note: a rank answers once every thread of it waits in a call mutexlab's MPI knows (a "
        "receive, a wait or probe, a condition variable, a sleep, a join) or is stopped in a busy "
        "wait of its own or of OpenMP's; a thread waiting in anything else — a semaphore shared "
        "between processes (sem_open), a pipe, the C library's own code — keeps it busy (docs/mpi.md#threads)"
    )


def as_rank(finding) -> str:
    """The finding's words for an MPI rank: a rank silent since its start is not one whose output
    is buffered or that reads all its input first (its library writes the protocol), as the
    stall's words say for any node, but one a thread of which waits unseen (``busy``'s note)."""
    message = finding.message
    if finding.rule != "stalled" or "wrote nothing at all" not in message or "): " not in message:
        return message
    return (
        message[: message.index("): ") + 1] + ": a thread of it waits where mutexlab's MPI cannot see "
        "(note below), or it is slow to start (--start-timeout)"
    )


def entered(events: list[dict[str, Any]]) -> bool:
    return any(e.get("event") == "enter" for e in events)


def nothing_entered(settings, last_events: list[dict[str, Any]], timeout: float) -> bool:
    """No rank entered the resource: not in the last run, nor in a run of random steps (a
    systematic search's last run may be one cut short before any entry). A test where nothing
    enters tests nothing: the regex or the calls that report the entries are missing."""
    if entered(last_events):
        return False
    from ..director.runner import pool_of
    from ..director.search import play
    from ..director.strategies import Random

    strategy = Random(settings.seed)
    chooser = strategy.next_run()
    assert chooser is not None
    with pool_of(settings.program, timeout) as pool:
        outcome = play(settings, pool, chooser, lingers=strategy.lingers)
    return not entered(outcome.events)
