"""One rank of ``mutexlab test --mpi``, between the director and the program (docs/mpi.md).

Run as a script with nothing of mutexlab imported (each rank of each run starts one, so it
starts fast): ``rank.py [--regex R] [--resource NAME] [--sync-sends] [--stdin FILE] -- PROGRAM [ARGS]``
(``--sync-sends``: the program's standard sends wait for their receive, ``MUTEXLAB_MPI_SYNC_SENDS=1``;
``--stdin``: rank 0's standard input is FILE, ``MUTEXLAB_MPI_STDIN``, as ``mpirun`` gives rank 0 its own). It starts the program
(built with ``mutexlab mpicc``), hands it each input line, and passes its answer on up to its
``done`` (which says what the rank's main thread waits in, if it has not ended: ``blocked``),
changed in two ways: its answer to ``init`` says ``reinit`` (the adapter is kept for
the next run and starts the program afresh on the next ``init``), and a line the program printed (``{"type":"log","stdout":...}``) that
``--regex`` matches becomes an ``enter`` or ``exit`` (the named group ``enter`` or ``exit`` took
part; ``resource``, if it took part, names the resource, else ``--resource``; ``units`` counts
them). A sleep after a printed line asks (``{"type":"log","pausable":true}``) whether it is a
pause: while the rank holds a resource the adapter answers ``pause`` and tells the director
(``{"type":"pause"}``: the director later sends a ``wake``, passed on), else ``go``; an operation on
the rank's own window (``"pausable":"rma"``) is always a pause. A call mutexlab's MPI does not implement (``mpi_error``) is written to the file
``MUTEXLAB_MPI_ERRORS`` names, and the rank ends (exit 70): the run is stopped, not judged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

try:  # a time limit per match when the regex module is there (it is with mutexlab)
    import regex as _re

    TIMED = True
except ImportError:  # pragma: no cover - mutexlab depends on regex
    import re as _re

    TIMED = False


def rank_zero(init: bytes) -> bool:
    """Whether the node ``init`` starts is rank 0: the lowest id of it and its peers."""
    said = json.loads(init)
    return said["id"] == min([said["id"], *said.get("peers", [])])


def main(argv: list[str]) -> int:
    cut = argv.index("--")
    options, program = argv[:cut], argv[cut + 1 :]
    pattern = options[options.index("--regex") + 1] if "--regex" in options else None
    resource = options[options.index("--resource") + 1] if "--resource" in options else "cs"
    compiled = _re.compile(pattern) if pattern is not None else None
    environment = dict(os.environ)  # --sync-sends: the library makes standard sends synchronous
    environment["MUTEXLAB_MPI_SYNC_SENDS"] = "1" if "--sync-sends" in options else ""
    given_stdin = options[options.index("--stdin") + 1] if "--stdin" in options else ""
    child: subprocess.Popen | None = None
    out = sys.stdout.buffer
    held: dict[str, int] = {}  # the units of each resource the rank holds, by its lines
    for line in sys.stdin.buffer:
        init = line.startswith(b'{"id":')  # the director's keys come sorted: init's first is id
        if init:  # a run begins: the program afresh (this adapter is kept across runs)
            held.clear()
            if child is not None:
                child.kill()
                child.wait()
            environment["MUTEXLAB_MPI_STDIN"] = given_stdin if given_stdin and rank_zero(line) else ""
            try:
                child = subprocess.Popen(
                    program, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env=environment
                )
            except OSError as exc:
                return report(f"cannot start {program[0]!r}: {exc.strerror or exc}")
        if child is None or child.stdin is None or child.stdout is None:
            return report("an input came before init")
        rank_lines = child.stdout
        try:
            child.stdin.write(line)
            child.stdin.flush()
        except (BrokenPipeError, ConnectionResetError):  # it stopped reading: what it printed says why
            first = rank_lines.readline()
            if first and not first.startswith(b"{"):
                return report(foreign(program, first), child)
            return ended(child)
        while True:
            answer = rank_lines.readline()
            if not answer:
                return ended(child)
            if answer.startswith(b'{"type":"log"'):
                said = json.loads(answer)
                if "mpi_error" in said:
                    return report(said["mpi_error"], child)
                if "pausable" in said:  # a sleep inside, or any RMA on its own window: others may go first
                    inside = said["pausable"] == "rma" or any(units > 0 for units in held.values())
                    try:
                        child.stdin.write(b'{"type":"pause"}\n' if inside else b'{"type":"go"}\n')
                        child.stdin.flush()
                    except (BrokenPipeError, ConnectionResetError):  # it ended: its output ends too
                        pass
                    if inside:
                        out.write(b'{"type":"pause"}\n')
                    continue
                # a deadline passed at once, a read held
                told = said.get("clock_jumped") is True or said.get("read_held") is True
                if told or "finalize_pending" in said:  # the verdict says so
                    out.write(answer)
                if "unseen_wait" in said:  # a thread keeps the rank busy: a stall names its wait
                    out.write(answer)
                    out.flush()
                if "last_words" in said:  # MPI_Abort, or an error MPI makes fatal: the crash's why
                    out.write(json.dumps({"type": "log", "last_words": said["last_words"]}).encode() + b"\n")
                if "stdout" in said and compiled is not None:
                    found = (
                        compiled.search(said["stdout"], timeout=1.0)
                        if TIMED
                        else compiled.search(said["stdout"])
                    )
                    said_lines = meaning(found.groupdict() if found else {}, resource)
                    if isinstance(said_lines, str):
                        return report(f"{said_lines} (the line {said['stdout']!r})", child)
                    for said_line in said_lines:
                        hold(held, said_line)
                        out.write(json.dumps(said_line).encode() + b"\n")
                continue
            if not answer.startswith(b"{"):  # mutexlab's MPI writes only JSON lines here
                return report(foreign(program, answer), child)
            if answer.startswith(b'{"type":"done"'):
                out.write(answer.replace(b'"done"', b'"done","reinit":true', 1) if init else answer)
                out.flush()
                break
            if answer.startswith((b'{"type":"enter"', b'{"type":"exit"')):  # mutexlab_enter, mutexlab_exit
                hold(held, json.loads(answer))
            out.write(answer)
    if child is None:
        return 0
    child.kill()
    return ended(child)


def hold(held: dict[str, int], said: dict) -> None:
    """Count an ``enter`` or ``exit`` line into ``held`` (units of each resource held)."""
    if said.get("type") in ("enter", "exit") and isinstance(said.get("resource"), str):
        units = said.get("units", 1) if isinstance(said.get("units", 1), int) else 1
        change = units if said["type"] == "enter" else -units
        held[said["resource"]] = held.get(said["resource"], 0) + change


def foreign(program: list[str], line: bytes) -> str:
    """What a program that does not run on mutexlab's MPI is told: it printed a line itself on
    the standard output that mutexlab's MPI takes over before ``main``."""
    text = line.decode("utf-8", "replace").rstrip("\n")[:80]
    return (
        f"{program[0]} does not run on mutexlab's MPI: it printed {text!r} where mutexlab's MPI "
        "speaks (a program built with another mpicc, a Fortran or mpi4py program, or a launcher "
        "script); build it with 'mutexlab mpicc' or 'mutexlab mpicxx'"
    )


def ended(child: subprocess.Popen) -> int:
    code = child.wait()
    return code if code >= 0 else 128 - code


def meaning(fields: dict, resource: str) -> list[dict] | str:
    """What a printed line says, from the groups that took part in its match: an ``enter`` or
    ``exit`` (of ``resource``, or ``resource:index``, else ``--resource``; a group
    ``resource_NAME`` names the resource NAME whatever it matched; ``units``), a
    ``state_NAME`` (the state NAME) and an ``event_NAME`` (its fields the groups ``f_FIELD``,
    a number where the text is digits, a list of numbers where it is several: ``field``); a
    message when an entry names no resource."""
    said: list[dict] = []
    taken = {k: v for k, v in fields.items() if v is not None}
    event = next((k for k in ("enter", "exit") if k in taken), None)
    if event:
        named = [k[len("resource_") :] for k in taken if k.startswith("resource_")]
        name = named[0] if named else taken.get("resource") or resource
        if not name:
            return (
                f"--regex matched an {event} without its group 'resource': this problem has "
                "several resources, and every entry and exit must name one"
            )
        if "index" in taken:
            name = f"{name}:{taken['index']}"
        units = int(taken["units"]) if taken.get("units") else 1
        said.append({"type": event, "resource": name, "units": units})
    for key in taken:
        if key.startswith("state_"):
            said.append({"type": "state", "state": key[len("state_") :]})
        elif key.startswith("event_"):
            found = {k[2:]: field(v) for k, v in taken.items() if k.startswith("f_")}
            said.append({"type": "event", "event": key[len("event_") :], **found})
    return said


def field(text: str) -> int | list[int] | str:
    """An event's field from the text its group matched: a number where it is digits, a list of
    numbers where it is several separated by spaces or commas (``3 1 4``, ``3, 1, 4``), else the
    text."""
    if text.isdecimal():  # not isdigit: "²" is a digit int() refuses
        return int(text)
    parts = text.replace(",", " ").split()
    if len(parts) > 1 and all(p.isdecimal() for p in parts):
        return [int(p) for p in parts]
    return text


def report(message: str, child: subprocess.Popen | None = None) -> int:
    where = os.environ.get("MUTEXLAB_MPI_ERRORS")
    if where:
        with open(where, "a", encoding="utf-8") as handle:
            handle.write(message + "\n")
    if child is not None:
        child.kill()
    return 70


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
