"""What the tests of ``mutexlab verify`` on other programs' logs share: the verdict of a log as the
command gives it, GoVector's regex, writers of ShiViz and clock-free logs, and the logs real
outside programs wrote (tests/outlogs/: a GoVector Ricart–Agrawala in Python, a lock server in C
with MPI printing Lamport clocks; each program beside its logs)."""

from __future__ import annotations

import json
from pathlib import Path

from mutexlab.cli import main

OUTLOGS = Path(__file__).resolve().parent / "outlogs"
GOVECTOR = r"(?<host>\S*) (?<clock>{.*})\n(?<event>.*)"


def verify(capsys, path, *flags: str) -> tuple[int, str, str]:
    """``mutexlab verify PATH FLAGS``: its exit code, standard output and standard error."""
    capsys.readouterr()
    code = main(["verify", str(path), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def shiviz(path: Path, records: list[tuple[str, dict, str]], regex_line: bool = True) -> Path:
    """A GoVector log of (host, clock, description) records, with its regex first when asked."""
    head = f"{GOVECTOR}\n\n" if regex_line else ""
    path.write_text(head + "".join(f"{h} {json.dumps(c)}\n{d}\n" for h, c, d in records))
    return path


def jsonl(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def outlog(name: str) -> list[str]:
    """The lines of tests/outlogs/NAME, without their line ends."""
    return (OUTLOGS / name).read_text().splitlines()
