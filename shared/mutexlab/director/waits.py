"""What a node that did not answer is doing, read from Linux's /proc: whether a thread of it is
blocked reading its standard input (it took the input as handled and waits for the next — so its
answer, if it wrote one, sits unflushed in its output buffer), and whether it runs at all.

Only the node's own process is read — the program, below mutexlab's launcher (``tree.program``) —
or the child a wrapper runs it in holding its input and output (``speaker``: ``go run``) —
not what else it started (in a shell's pipeline the reader of the pipe is another program), and only
what the kernel shows its owner; anything unreadable (another system, a process already gone)
says nothing, and the stall keeps its plain words.
"""

from __future__ import annotations

import array
import fcntl
import json
import os
import platform
import re
import termios

from .ending import last_lines
from .lines import PAST_DONE

# read(2) and its kin, by machine: the calls a thread waiting for input sits in (a read of fd 0;
# programs that poll — Node.js, Go — wait in epoll and are not seen)
READS = {"x86_64": {0, 17, 19, 295}, "aarch64": {63, 65, 67, 69}}.get(platform.machine(), set())
# epoll_wait, epoll_pwait(2), poll, ppoll, select, pselect6: where an event loop (Node.js's libuv,
# asyncio, Tcl's) waits with nothing to do
POLLS = {"x86_64": {232, 281, 441, 7, 271, 23, 270}, "aarch64": {22, 441, 73, 72}}.get(
    platform.machine(), set()
)


def polling(pid: int) -> bool:
    """Whether the main thread of ``pid`` waits in an event loop's poll (``POLLS``) and no thread of
    it runs: idle, waiting for what comes next."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        states = []
        for task in tasks:
            with open(f"/proc/{pid}/task/{task}/stat", encoding="ascii", errors="replace") as stat:
                states.append(stat.read().rsplit(")", 1)[1].split()[0])
        with open(f"/proc/{pid}/syscall", encoding="ascii") as call:
            fields = call.read().split()
    except (OSError, IndexError):
        return False
    return "R" not in states and bool(fields) and fields[0].isdigit() and int(fields[0]) in POLLS


def reading_input(pid: int, pipe: int) -> tuple[bool, bool, int]:
    """(a thread of ``pid`` is blocked reading the pipe whose write end is ``pipe``, a thread of it
    is running, its threads): what ``/proc/<pid>/task`` shows, (False, False, 0) if nothing."""
    try:
        inode = os.fstat(pipe).st_ino
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False, False, 0
    reading = running = False
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat", encoding="ascii", errors="replace") as stat:
                state = stat.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{pid}/task/{task}/syscall", encoding="ascii") as call:
                fields = call.read().split()
        except (OSError, IndexError):
            continue
        running |= state == "R"
        if len(fields) > 1 and fields[0].isdigit() and int(fields[0]) in READS:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{int(fields[1], 16)}")
            except (OSError, ValueError):
                continue
            reading |= link == f"pipe:[{inode}]"
    return reading, running, len(tasks)


def reading_helper(pid: int, pipe: int) -> str:
    """Words for a node whose thread is blocked reading a pipe other than its input that a process
    it started writes to (a coprocess: bash's ``coproc jq``, a ``popen``), "" if none: that
    process has not written what the node waits for — its output buffered, most likely."""
    try:
        mine = f"pipe:[{os.fstat(pipe).st_ino}]"
        tasks = os.listdir(f"/proc/{pid}/task")
        group = os.getpgid(pid)  # its group's leader: the launcher (director.tree), or the node itself
    except OSError:
        return ""
    waited = set()
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/syscall", encoding="ascii") as call:
                fields = call.read().split()
            if len(fields) > 1 and fields[0].isdigit() and int(fields[0]) in READS:
                link = os.readlink(f"/proc/{pid}/fd/{int(fields[1], 16)}")
                if link.startswith("pipe:") and link != mine:
                    waited.add(link)
        except (OSError, ValueError):
            continue
    for other in filter(str.isdigit, os.listdir("/proc") if waited else ()):
        try:
            if int(other) == pid or os.getpgid(int(other)) != group:  # the node's group alone
                continue
            if any(os.readlink(f"/proc/{other}/fd/{fd}") in waited for fd in os.listdir(f"/proc/{other}/fd")):
                with open(f"/proc/{other}/comm", encoding="utf-8", errors="replace") as comm:
                    name = comm.read().strip()
                return (
                    f": it waits reading from a process it started ({name}, pid {other}), which has not "
                    f"written what it waits for — most likely that process's output sits in its buffer "
                    f"(jq needs --unbuffered, sed -u, grep --line-buffered, awk fflush(), a C or Python "
                    f"helper a flush after each line, or run it under stdbuf -oL)"
                )
        except (OSError, ValueError):
            continue
    return ""


def unread(pipe: int) -> int:
    """The bytes in the node's input pipe (``pipe``: its write end) that the node has not read."""
    waiting = array.array("i", [0])
    try:
        fcntl.ioctl(pipe, termios.FIONREAD, waiting, True)
    except OSError:
        return 0
    return waiting[0]


def not_reading(pid: int, pipe: int, setting: str = "") -> str:
    """Words for a node that has not read its input (bytes of it wait in the pipe) and of which
    no thread runs, "" otherwise: it waits for something other than its input (or, before its
    first answer, has not finished starting: ``setting`` gives it longer)."""
    waiting = unread(pipe)
    if not waiting or reading_input(pid, pipe)[1]:
        return ""
    return (
        f"it has not read its input ({waiting} bytes wait unread in its standard input) and no "
        "thread of it runs: it waits for something else — does it read its standard input at all "
        "(not a file, a terminal or a socket; an escript whose %%! line says -noinput, or erl "
        "-noinput, reads none)?"
        + (f" Or it is still starting (give it a longer {setting})" if setting else "")
    )


def ended_child(pid: int, pipe: int, err_tail: bytes = b"") -> str:
    """Words for a node of which no thread runs nor reads its input (the pipe whose write end is
    ``pipe``) and a process it started has ended without being waited for (a zombie: a
    multiprocessing worker that raised, a popen'd helper that failed), "" if none: the node may
    wait for what that process would have sent. ``err_tail``, standard error's end, which the
    process shared with the node, most likely says why it ended."""
    reading, running, _ = reading_input(pid, pipe)
    if reading or running:  # it waits for its input, or a thread runs: the ended process is not the cause
        return ""
    for child in _children(pid):
        try:
            with open(f"/proc/{child}/stat", encoding="utf-8", errors="replace") as stat:
                name, _, rest = stat.read().partition(" (")[2].rpartition(") ")
            if rest.split()[0] == "Z":
                said = last_lines(err_tail)
                return (
                    f": a process it started ({name}, pid {child}) has ended and it has not waited "
                    "for that end — if it waits for what that process was to send (a multiprocessing "
                    "worker's answer, a helper's output), it waits for ever"
                    + (f"; standard error's last lines: {said}" if said else "")
                )
        except (OSError, IndexError):
            continue
    return ""


def why_silent(pid: int, pipe: int, buffered: str, fresh: bool = True, err_tail: bytes = b"") -> str:
    """Words for a node that wrote no done line in time (``fresh``: nothing of its answer at all):
    by what /proc shows, "" if it shows nothing to go by."""
    if helper := reading_helper(pid, pipe) or ended_child(pid, pipe, err_tail):
        return helper
    if deaf := not_reading(pid, pipe):
        return ": " + deaf
    reading, running, threads = reading_input(pid, pipe)
    if reading and threads == 1:
        rest = (
            "its answer, done line and all, is"
            if fresh
            else "the rest of its answer, its done line at least, is"
        )
        return (
            ": it waits for its next input (blocked reading its standard input), so it has handled "
            f"this one — {rest} most likely still in its output buffer (or never written): {buffered}"
            "; or it reads another line before it answers this one (every input is sent only after "
            "the done of the one before it)"
        )
    if reading and not running:
        return (
            ": a thread of it waits for its next input (blocked reading its standard input) and "
            "no thread runs — either its answer sits in its output buffer (" + buffered + ") or the "
            "thread that answers waits for something that never comes (a lock, a condition or "
            "queue nobody signals)"
        )
    if running:
        return ": it is running, not waiting for input — busy in a loop that does not end?"
    if polling(pid):
        return (
            ": it waits in its event loop with nothing to do (its main thread in epoll, poll or "
            "select, no thread running), so it has most likely handled this input — a path that "
            "ends without writing its done line (a callback that returns early, a coroutine awaiting "
            "what never comes), its answer left in "
            "an output buffer, or a timer not fired yet (what a timer writes is no input's answer)"
        )
    return ""


def why_unheard(pid: int, pipe: int, buffered: str, setting: str, err_tail: bytes = b"") -> str:
    """Words for a node that wrote nothing at all since its start, its first answer overdue."""
    if helper := reading_helper(pid, pipe) or ended_child(pid, pipe, err_tail):
        return helper.removeprefix(": ")
    if deaf := not_reading(pid, pipe, setting):
        return deaf
    reading, running, _ = reading_input(pid, pipe)
    read_all = (
        "reads all its input before answering (read(), readlines(), a JSON parser given the whole "
        "stream), waiting for an end that never comes: read one line at a time"
    )
    if reading and not running:
        return (
            "it has read its input and waits for more (blocked reading its standard input): either "
            f"its answer sits in its output buffer — {buffered}; or it {read_all}; or it cuts its input "
            "at something other than a newline (at \\r\\n, say: every input ends with \\n alone)"
        )
    if running:
        return f"it is running, not waiting for input: slow to start (give it a longer {setting}) or busy"
    if polling(pid):
        return (
            "it waits in its event loop with nothing to do (its main thread in epoll, poll or select,"
            " no thread running): it has most likely handled its init without writing its done line,"
            f" or its answer sits in an output buffer — {buffered}"
        )
    return f"{buffered}; one that {read_all}; one slow to start needs a longer {setting}"


# What a node writes in protocol lines: a line of its standard error that parses as one of these
# is most likely the protocol sent to the wrong stream (``console.error``, ``System.err``, ``eprint``)
PROTOCOL_TYPES = frozenset({"send", "enter", "exit", "state", "event", "pause", "done"})


def protocol_on_stderr(err_tail: bytes) -> str:
    """Words for a node whose standard error holds a protocol line (its answer written to the wrong
    stream), "" if it holds none."""
    for raw in reversed(err_tail.splitlines()):
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and line.get("type") in PROTOCOL_TYPES:
            shown = raw.decode("utf-8", "replace").strip()
            shown = shown if len(shown) <= 80 else shown[:79] + "…"
            return (
                f"its standard error holds a protocol line ({shown}): if that is its answer, it "
                "went to the wrong stream — mutexlab reads the protocol on standard output only, "
                "standard error is for debugging; if not, "
            )
    return ""


# How each language's own buffered output is flushed, by the interpreter that runs the program (or
# its script's extension): said beside the general advice, in the words of the program's language
FLUSHES = (
    (  # print is a statement there; its file iterator reads ahead whatever -u says
        re.compile(r"python2[\d.]*$"),
        "Python 2: sys.stdout.flush() after each done, or python2 -u; and read each line with "
        "sys.stdin.readline() or raw_input(): `for line in sys.stdin` reads 8 KB ahead, even under -u",
    ),
    (
        re.compile(r"python[\d.]*$|\.py$"),
        "Python: print(…, flush=True), or python3 -u — PYTHONUNBUFFERED=1 in an environment hides this",
    ),
    (re.compile(r"ruby[\d.]*$|\.rb$"), "Ruby: $stdout.sync = true"),
    (
        re.compile(r"lua[\d.]*$|\.lua$"),
        "Lua: io.stdout:flush() after each done, or io.stdout:setvbuf('line')",
    ),
    (re.compile(r"perl[\d.]*$|\.pl$"), "Perl: $| = 1"),
    (re.compile(r"tclsh[\d.]*$|\.tcl$"), "Tcl: flush stdout, or fconfigure stdout -buffering line"),
    (re.compile(r"[gm]?awk$|\.awk$"), "awk: fflush() after each done"),
    (re.compile(r"java$|\.java$"), "Java: flush() the PrintWriter or BufferedWriter after each done"),
    (re.compile(r"^go$|\.go$"), "Go: Flush() the bufio.Writer after each done"),
    (  # `ocaml script.ml` runs the bytecode toplevel: /proc shows ocamlrun
        re.compile(r"^ocaml(?:run)?[\d.]*$|\.ml$"),
        "OCaml: flush stdout after each done (print_string and Printf.printf do not; print_endline "
        "does), or end the format with %!",
    ),
)


# ``env`` and its assignments before the command (``env BROKEN=1 python3 node.py``)
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")


def _names(argv: list[str], exe: str) -> list[str]:
    """What may name the program's language: what it runs (``exe``), then the command's first
    two words past ``env`` and its assignments (an interpreter and its script)."""
    words = list(argv)
    while words and (os.path.basename(words[0]) == "env" or ASSIGNMENT.fullmatch(words[0])):
        words.pop(0)
    return [os.path.basename(word) for word in [exe, *words[:2]] if word and os.path.basename(word)]


def buffered_for(argv: list[str], buffered: str, exe: str = "") -> str:
    """``buffered`` (the general advice) with the flush of the program's own language, when the
    program runs an interpreter mutexlab knows (``exe``, what it runs: a ``python`` that is Python
    2, a script's ``#!``) or the command names one or a script."""
    for name in _names(argv, exe):
        for language, flush in FLUSHES:
            if language.search(name):
                return f"{buffered} — {flush}"
    return buffered


# What writes after a done line in a language's own way, said beside the general words (no
# parenthesis inside: shrink._said reads the line after the last one)
LATE = (
    (
        re.compile(r"^(?:node|nodejs)[\d.]*$|\.[mc]?js$"),
        "Node.js: what a worker thread writes with console.log or process.stdout reaches standard "
        "output through the main thread, after the main thread's own writes — post a worker's "
        "lines to the main thread and write them there, before the done",
    ),
)


def late_words(node: int, last: str, argv: list[str], exe: str = "", past: bool = False) -> str:
    """The fault of ``node`` writing after its done line answering ``last`` (``past``: in the
    same write as the done); where the program is one whose threads write late in a way of their
    own (a Node.js worker), the way."""
    way = next((way for name in _names(argv, exe) for language, way in LATE if language.search(name)), "")
    if past:
        return f"node {node} wrote past {PAST_DONE} {last})" + (f" ({way})" if way else "")
    return (
        f"node {node} wrote after {PAST_DONE} {last}), before its next input: every output an input "
        "causes must be written before that input's done (a line from a timer or another thread is "
        f"no input's answer{' — ' + way if way else ''})"
    )


# wait4 and waitid, by machine: where a wrapper (a shell, `go run`, `cargo run`) waits for the
# child it runs the program in
WAITS = {"x86_64": {"61", "247"}, "aarch64": {"260", "95"}}.get(platform.machine(), set())


def _children(pid: int) -> list[int]:
    """The children of ``pid``, each listed by the thread that forked it (Go forks from any); []
    if unreadable."""
    children: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as listed:
                children += [int(child) for child in listed.read().split()]
    except (OSError, ValueError):
        return []
    return children


def speaker(pid: int, pipe_in: int, pipe_out: int) -> int:
    """The process that speaks for the node ``pid``: ``pid``, or the child it runs the program in
    holding the node's input and output as its own (``go run``'s build, ``cargo run``, a shell that
    does not exec its last command), followed down while one child holds both; a pipeline's first
    reader (``tee | ./node``) holds only the input, and the node stays ``pid``."""
    try:
        wanted = {f"pipe:[{os.fstat(pipe_in).st_ino}]", f"pipe:[{os.fstat(pipe_out).st_ino}]"}
    except OSError:
        return pid
    for _ in range(8):  # a chain of wrappers, bounded
        calls = set()
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/syscall", encoding="ascii") as call:
                    calls.add(call.read().split(" ", 1)[0])
        except OSError:
            return pid
        children = _children(pid)
        if not calls & WAITS:  # no wrapper: it does not wait for a child (multiprocessing's resource
            return pid  # tracker, inheriting the node's input and output, is no program of it)
        holders = []
        for child in children:
            try:
                if {os.readlink(f"/proc/{child}/fd/0"), os.readlink(f"/proc/{child}/fd/1")} == wanted:
                    holders.append(child)
            except OSError:
                continue
        if len(holders) != 1:
            return pid
        pid = holders[0]
    return pid


def executable(pid: int) -> str:
    """What ``pid`` runs (``/proc/<pid>/exe``: ``/usr/bin/python2.7``), "" if unreadable."""
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""
