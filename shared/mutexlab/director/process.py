"""One node program as a child process, spoken to one line at a time.

Invariants: every child runs in a process group of its own (``start_new_session``) and is killed
with its whole group (``kill``); a ``Pool`` kills all it started on ``close``, which every caller
reaches through ``finally`` (an interrupt included). Reading is bounded: a line longer than
``MAX_LINE``, more than ``MAX_OUTPUTS`` lines for one input, or no ``done`` within ``timeout``
seconds is a ``NodeFault``, never a hang and never unbounded memory.

A child dies with the process that started it, even one SIGKILLed (whose ``finally`` never runs),
and so does all it starts, a daemon too (``tree.dying_with_parent``). Nodes are started from the
thread that runs the driver's loop, which lives as long as the process: a parent-death signal comes
when the *thread* that started the child ends.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from typing import Any

from .. import interrupts, watcher
from . import tree
from .ending import how_ended, last_lines, missing_script, never_ran
from .lines import (
    CRASHED,
    MAX_LINE,
    MAX_OUTPUTS,
    START,
    UNASKED,
    NodeFault,
    encode,
    flood,
    no_protocol_line,
    parse,
    said_nothing,
    shorten,
    unended,
)
from .waits import buffered_for, executable, late_words, protocol_on_stderr, speaker, why_silent, why_unheard

# Seconds a new process of ``mutexlab test`` (or ``replay --node``) has for its first answer (its
# first init) when that is more than the timeout: starting a JVM or an interpreter on a busy machine
# takes seconds, answering does not. (A node of ``run --node`` over RabbitMQ: node.RUN_START_TIMEOUT.)
TEST_START_TIMEOUT = 30.0
# Bytes of a node's standard error kept (its last words, read as it writes them so it never blocks
# on a full pipe): a crash's finding ends with its last lines — a traceback's exception, an MPI error.
ERR_TAIL = 2048
BUFFERED = (
    "a program whose output is buffered (C stdio, C++ std::cout, Java's PrintWriter, Python's "
    "print into a pipe, Perl's STDOUT ($| = 1), mawk) must flush it after each done line"
)
LINE_REST = 1.0  # seconds a line begun after a done waits for its end before it is a late line


class NodeProcess:
    """Node ``node`` (its id, from 1) running ``argv``."""

    def __init__(
        self,
        argv: list[str],
        node: int,
        peers: frozenset[int],
        timeout: float,
        start_timeout: float = TEST_START_TIMEOUT,
        start_setting: str = "--start-timeout",
    ) -> None:
        self.node, self.peers, self.timeout = node, peers, timeout
        self.start_setting = start_setting  # what gives a slow starter more: test's flag, run's variable
        self.start_timeout = max(start_timeout, timeout)
        self.told = False  # an input was sent (the first has start_timeout to be answered)
        self.heard = False  # the node wrote something: it started, and its output is not stuck
        self.reusable = False  # the node said it starts afresh on a second init
        self.last_words = ""  # a log line's last_words: shown if the node then ends
        self.clock_jumped = self.read_held = False  # an MPI rank said so (a clock jump, a read held)
        self.finalize_pending = ""  # an MPI rank's thread was in a call at MPI_Finalize: taken by Run
        self.unseen_wait = ""  # an MPI rank's thread busy where its library cannot see: a stall says so
        self.command, self.argv = argv[0], argv
        if tree.dying_with_parent(argv) != argv and shutil.which(argv[0]) is None:  # the launcher would fail
            raise NodeFault(START, node, f"cannot start {argv[0]!r}: not found or not executable")
        with interrupts.held():  # a stop between the start and the watch would leave the node behind
            try:
                self.proc = subprocess.Popen(
                    tree.dying_with_parent(argv),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    bufsize=0,
                )
            except OSError as exc:
                raise NodeFault(START, node, f"cannot start {argv[0]!r}: {exc.strerror or exc}") from None
            watcher.watch(self.proc.pid)  # its group: killed by the watcher if this process dies first
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        self.stdin, self.out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self.stdin, False)  # a node that stops reading is a stall, not a hang
        self.err_tail = b""  # the last ERR_TAIL bytes of its standard error, kept by its reader:
        # a thread of its own reads it as the node writes it, so the node never blocks on it
        self.err_reader = threading.Thread(
            target=self.read_err, args=(self.proc.stderr.fileno(),), name=f"stderr-{node}", daemon=True
        )
        self.err_reader.start()
        self.buffer = b""
        self.spoke = False  # a line of it parsed: a bad line after it is no failing start's
        self.eof = False  # its output ended (seen between inputs)
        self.last = "init"  # the type of the last input, for a line written after its done
        self.answered = ""  # the type of the last input answered with its done
        self.fresh = True  # nothing read since the last input was sent
        self.deadline = 0.0  # when the answer to the last input is due
        self.budget = timeout  # the seconds it was given
        self.running: tree.Running | None = None  # a stretch's processor time, which moves the deadline

    def ask(self, message: dict[str, Any]) -> tuple[list[dict[str, Any]], bytes, dict[str, Any]]:
        """Send ``message``; (its outputs, their raw bytes, the ``done`` line) once the node says done."""
        self.tell(message)
        return self.answer(message)

    def tell(self, message: dict[str, Any]) -> None:
        """Send ``message`` (``answer`` reads what the node says to it)."""
        if self.told:
            try:
                self.late()
            except NodeFault as fault:
                raise self.reused(fault, message) from None
        self.budget = self.timeout if self.told else self.start_timeout
        self.deadline = time.monotonic() + self.budget
        ns = message.get("ns") if message["type"] == "stretch" else None
        self.running = (
            tree.Running(self.proc.pid, 4 * ns / 1e9 + self.budget) if isinstance(ns, int) else None
        )
        self.told, self.fresh = True, True
        self.last = message["type"]
        self.write(encode(message), self.deadline, message)

    def answer(self, message: dict[str, Any]) -> tuple[list[dict[str, Any]], bytes, dict[str, Any]]:
        """The node's answer to ``message``, sent by ``tell``: its outputs, their raw bytes, the done."""
        outputs: list[dict[str, Any]] = []
        raw: list[bytes] = []
        lines = 0  # every line counts against MAX_OUTPUTS: blank and log lines too
        while True:
            line = self.readline(self.deadline, message)
            lines += 1
            if lines > MAX_OUTPUTS:
                raise flood(self.node, message["type"], line)
            if not line.strip():  # a blank line says nothing (a doubled newline): skipped
                continue
            try:
                parsed = parse(line, self.node, self.peers)
            except NodeFault as fault:
                raise self.reused(self.first_words(fault), message) from None
            self.spoke = True
            if parsed["type"] == "done":
                if self.quiet():  # written past the done (a log line says nothing, another is no input's)
                    self.late(past=message["type"])
                self.answered, self.unseen_wait = message["type"], ""
                return outputs, b"\n".join(raw), parsed
            if parsed["type"] == "log":
                self.heed(parsed)
                continue
            outputs.append(parsed)
            raw.append(line)

    def reused(self, fault: NodeFault, message: dict[str, Any]) -> NodeFault:
        """``fault``, "between" runs when it came at a kept node's init: a late line of the last."""
        fault.fields |= {"between": True} if message["type"] == "init" and self.answered else {}
        return fault

    def first_words(self, fault: NodeFault) -> NodeFault:
        """``fault`` (a bad line), told with the node's end when the line was the first it wrote
        and it then ended at once: what it said as it failed — an escript's compiler errors, which
        go to standard output, a usage message — not a line meant for the protocol."""
        if fault.rule != "garbage" or self.spoke:
            return fault
        self.spoke = True  # asked once
        try:
            code = self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return fault  # it runs on: a banner, a debugging print
        if code == 0:
            return fault
        tail = self.stderr_tail()
        fault.message += (
            f" — the first line it wrote, and then it {how_ended(code)}: most likely what it said as it "
            "failed (a compiler's errors, which an escript writes on standard output; a usage message)"
            + (f"; its standard error ended with: {shorten(tail, 300)}" if tail else "")
            + "; the line"
        )
        return fault

    def write(self, data: bytes, deadline: float, message: dict[str, Any]) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.stdin, view) :]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                raise self.crashed(message, "closed its input (it reads no more)") from None
            left = deadline - time.monotonic()
            if left <= 0:
                raise self.stalled(message)
            if not select.select([], [self.stdin], [], left)[1]:
                raise self.stalled(message)

    def heed(self, log: dict[str, Any]) -> None:
        """A ``log`` line: ignored but for what mutexlab's own adapters say in it."""
        if isinstance(log.get("last_words"), str):  # why it is about to end, if it ends
            self.last_words = log["last_words"][:300]
        self.clock_jumped |= log.get("clock_jumped") is True
        self.read_held |= log.get("read_held") is True
        if isinstance(pending := log.get("finalize_pending"), str):
            self.finalize_pending = self.finalize_pending or pending[:300]
        self.unseen_wait = str(log.get("unseen_wait", self.unseen_wait))[:600]  # an MPI rank's

    def quiet(self) -> bytes:
        """What is left unread past the blank and ``log`` lines at its front (dropped, logs heeded)."""
        self.buffer, logs = said_nothing(self.buffer, self.node, self.peers)
        for log in logs:
            self.heed(log)
        return self.buffer.strip()

    def late(self, grace: float = 0.0, past: str = "") -> None:  # past: with the done answering it
        """NodeFault (protocol) if the node wrote after its last ``done``, before its next input
        (within ``grace`` seconds), a line that is not ``log`` nor blank: a timer's or another
        thread's line, no input's answer. A line begun waits up to LINE_REST for its end."""
        end = time.monotonic() + grace
        limit, begun = end + 2 * LINE_REST, 0.0  # when a line not ended yet began
        while not self.eof:
            left, now = self.unread(max(end - time.monotonic(), 0.0)), time.monotonic()
            begun = (begun or now) if left else 0.0
            if left and (b"\n" in self.buffer or self.eof or now >= min(begun + LINE_REST, limit)):
                raise NodeFault("protocol", self.node, self.wrote_late(past, left), shorten(left))
            if not left and now >= end:
                return
            end = min(max(end, begun + LINE_REST), limit)  # a line begun: a moment for its end

    def read_err(self, fd: int) -> None:
        """Its standard error until it ends (its reader thread, which alone closes it: an fd closed
        under a blocked read could be reused by another open), the last ERR_TAIL bytes kept."""
        try:
            while chunk := os.read(fd, 1 << 16):
                self.err_tail = (self.err_tail + chunk)[-ERR_TAIL:]
        except OSError:
            pass
        finally:
            assert self.proc.stderr is not None
            self.proc.stderr.close()

    def stderr_tail(self, wait: float = 0.3) -> str:
        """The last lines of its standard error (what a process that ended says why), or ""."""
        return last_lines(self.err_after(wait))

    def unread(self, grace: float = 0.0) -> bytes:
        """What the node wrote after its last ``done`` and nothing read yet (within ``grace`` s)."""
        if select.select([self.out], [], [], grace)[0]:
            chunk = os.read(self.out, 1 << 16)  # b"": its output ended, which its next read finds
            self.heard = self.heard or bool(chunk)
            self.eof = self.eof or not chunk
            self.buffer += chunk
        return self.quiet()

    def gone(self) -> None:
        """NodeFault (crashed) if a node that promised to start afresh on the next init ended after
        its last answer: a finding of this run's schedule (seen at the next init, no schedule
        would show it)."""
        if self.eof and self.reusable:
            try:
                code: int | None = self.proc.wait(timeout=0.5)  # its output ends as it exits
            except subprocess.TimeoutExpired:
                code = None
            raise self.ended_after(code)

    def ended_after(self, code: int | None) -> NodeFault:
        """A node that ended after answering its last input, seen by its end (``gone``) or as its
        next input came (``crashed``): one fault, in the same words whichever came first."""
        how = "closed its output" if code is None else how_ended(code)
        promise = (
            ": it answered its first init with reinit: true, a promise to keep reading until its "
            "standard input ends and start afresh on the next init"
            if self.reusable
            else ": a node keeps reading until its standard input ends (a peer's message may come)"
        )
        return NodeFault(
            CRASHED, self.node, f"node {self.node} {how} after answering {self.answered}, {UNASKED}{promise}"
        )

    def wrote_late(self, past: str = "", left: bytes = b"") -> str:  # past: in the done's write
        exe = executable(tree.program(self.proc.pid))  # with a word of its language (late_words)
        words = late_words(self.node, past or self.last, self.argv, exe, past=bool(past))
        return words + no_protocol_line(left, self.node, self.peers)  # a bare "bye", say

    def advice(self, program: int) -> str:
        """How to flush, in the language of what ``program`` runs or of the command."""
        return buffered_for(self.argv, BUFFERED, executable(program))

    def stalled(self, message: dict[str, Any]) -> NodeFault:
        code = self.proc.poll()
        if code is not None:  # it ended, but its output did not: something it started holds it
            return NodeFault(
                CRASHED,
                self.node,
                f"node {self.node} {how_ended(code)} while handling {message['type']}, and a process "
                "it started still holds its standard output open",
            )
        program = speaker(tree.program(self.proc.pid), self.stdin, self.out)  # `go run`'s program
        if not self.heard:  # not a byte since it started: slow to start, or its output is buffered
            return NodeFault(
                "stalled",
                self.node,
                f"node {self.node} wrote nothing at all within {self.start_timeout:g} s of its start "
                f"(no done line for its first {message['type']}): "
                + protocol_on_stderr(self.err_tail)
                + why_unheard(program, self.stdin, self.advice(program), self.start_setting, self.err_tail),
            )
        if self.buffer:  # the start of a line, never ended
            why = unended(self.buffer)
            return NodeFault(
                "stalled",
                self.node,
                f"node {self.node} did not answer {message['type']} within {self.budget:g} s: it wrote {why}",
                shorten(self.buffer),
            )
        said = "(no done line)" if self.fresh else "(lines of its answer, but no done line)"
        why = (
            why_silent(program, self.stdin, self.advice(program), self.fresh, self.err_tail)
            or ": stalled or unresponsive"
        )
        why = f": {self.unseen_wait}" if self.unseen_wait else why  # an MPI rank's words on its wait
        if wrong := protocol_on_stderr(self.err_tail):
            why = ": " + wrong + why.removeprefix(": ")
        return NodeFault(
            "stalled",
            self.node,
            f"node {self.node} did not answer {message['type']} within {self.budget:g} s {said}{why}",
        )

    def readline(self, deadline: float, message: dict[str, Any]) -> bytes:
        while True:
            cut = self.buffer.find(b"\n")
            if cut >= 0:
                line, self.buffer = self.buffer[:cut], self.buffer[cut + 1 :]
                if len(line) > MAX_LINE:
                    raise self.too_long(line)
                return line.rstrip(b"\r")
            if len(self.buffer) > MAX_LINE:
                raise self.too_long(self.buffer)
            left = deadline - time.monotonic()
            if not select.select([self.out], [], [], max(left, 0))[0]:
                if self.running is not None and self.running.on():  # a stretch runs on, in its own time
                    deadline = self.deadline = time.monotonic() + self.budget
                    continue
                raise self.stalled(message)
            chunk = os.read(self.out, 1 << 16)
            if not chunk:
                raise self.crashed(message)
            self.heard, self.fresh = True, False
            self.buffer += chunk

    def too_long(self, line: bytes) -> NodeFault:
        return NodeFault(
            "garbage",
            self.node,
            f"node {self.node} wrote a line longer than {MAX_LINE:,} bytes",
            shorten(line, 80),
        )

    def crashed(self, message: dict[str, Any], closed: str = "closed its output") -> NodeFault:
        """The node ended, or ``closed`` (what it did, when it still runs)."""
        try:
            code = self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            code = None
        if code in (126, 127) and not self.heard and self.not_run():
            said = self.stderr_tail(0.0)
            # What setpriv (or a shell in front: sh -c) says when it cannot run the command: the
            # program never ran, so it is not judged (exit 2, as a command not found).
            raise NodeFault(
                START,
                self.node,
                f"cannot start {self.command!r}: it exited with status {code} before writing anything, "
                "the status of a command that could not be run (a file that is no program, or whose #! "
                "line names an interpreter that is not there — a \\r at its end, from Windows line "
                "endings?)" + (f"; its standard error ended with: {shorten(said, 300)}" if said else ""),
            )
        if code not in (0, None) and not self.heard and (script := self.missing_script()):
            raise NodeFault(  # an interpreter given a script that is not there: it never ran
                START,
                self.node,
                f"cannot start {self.command!r} on {script!r}: no such file (the script it is to run, "
                f"looked for from {os.getcwd()})",
            )
        if code == 0 and self.fresh and self.answered and message["type"] != "init":
            # a clean end after its last done, seen as the next input came: its end, not that input's
            raise self.ended_after(code)
        how = closed if code is None else how_ended(code)
        between = (
            " (between runs: it answered its first init with reinit: true, a promise to keep reading "
            "and start afresh on the next init, and ended instead)"
            if message["type"] == "init" and self.reusable
            else ""
        )
        tail = self.stderr_tail() if code is not None else ""
        # what it wrote and nobody read, ended before its input was (a usage message, then exit 2):
        # a bad first line is the fault it is when read in time (first_words), whichever came first;
        # its log lines are heeded on the way (last words said before its first answer)
        fresh = not self.heard
        left = self.unread().split(b"\n", 1)[0] if code is not None and not self.eof else b""
        words = f" (its last words: {self.last_words})" if self.last_words else ""
        if left and fresh:
            try:
                parse(left, self.node, self.peers)
            except NodeFault as fault:
                return self.first_words(fault)
        wrote = f", having written on standard output (unread): {shorten(left)}" if left else ""
        return NodeFault(
            CRASHED,
            self.node,
            f"node {self.node} {how} while handling {message['type']}{words}{between}{wrote}"
            + ("; its standard error ended with" if tail else ""),
            shorten(tail, 300) if tail else None,  # control characters shown escaped
            {"between": True} if between else {},
        )

    def missing_script(self) -> str | None:
        """The script an interpreter was given when no such file exists (``ending.missing_script``)."""
        return missing_script(self.argv, self.err_after)

    def err_after(self, wait: float = 0.3) -> bytes:  # its end, unless a child it left holds it open
        self.err_reader.join(wait)
        return self.err_tail

    def not_run(self) -> bool:
        """Whether a node that ended 126 or 127 before writing anything never ran (``never_ran``)."""
        return never_ran(self.err_after())

    def kill(self, trees: bool = True) -> None:
        """End the node, its tree (unless ``trees``: killed already) and its group; idempotent."""
        if trees and self.proc.returncode is None:  # daemons too: it is their subreaper
            tree.kill_trees([self.proc.pid])
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        for stream in (self.proc.stdin, self.proc.stdout):  # its standard error: its reader closes it
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL: the child cannot linger
            self.proc.wait(timeout=5)
            watcher.unwatch(self.proc.pid)  # reaped: its id may be reused, never to be killed again
        self.err_reader.join(1.0)  # at its end of file, unless something it started still holds it


class Pool:
    """The node processes of the runs: kept across runs when every node said it can start afresh
    (``done`` with ``"reinit": true`` in answer to its first ``init``), else started anew each run."""

    def __init__(self, argv: list[str], timeout: float, start_timeout: float = TEST_START_TIMEOUT) -> None:
        self.argv, self.timeout, self.start_timeout = argv, timeout, start_timeout
        self.live: dict[int, NodeProcess] = {}
        self.started = 0  # processes started, for the summary and the benchmark

    def fresh(self, nodes: int, first: int = 1) -> dict[int, NodeProcess]:
        """Processes ``first``..N ready for an ``init``: the kept ones if all of them may be reused."""
        ids = frozenset(range(first, nodes + 1))
        if set(self.live) == ids and all(p.reusable for p in self.live.values()):
            return self.live
        self.close()
        for node in sorted(ids):
            self.live[node] = NodeProcess(self.argv, node, ids - {node}, self.timeout, self.start_timeout)
            self.started += 1
        return self.live

    def restart(self, node: int) -> dict[int, NodeProcess]:
        """Node ``node`` killed and started anew (a crash fault); the live processes."""
        old = self.live.pop(node)
        old.kill()
        self.live[node] = NodeProcess(self.argv, node, old.peers, self.timeout, self.start_timeout)
        self.started += 1
        return self.live

    def discard(self) -> None:
        """After a failed run: nothing kept, whatever state the processes are in."""
        self.close()

    def close(self) -> None:
        tree.kill_trees([p.proc.pid for p in self.live.values() if p.proc.returncode is None])
        for process in self.live.values():
            process.kill(trees=False)
        self.live.clear()
