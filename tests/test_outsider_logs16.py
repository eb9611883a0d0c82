"""``mutexlab verify`` on logs other programs write (tests/outsiders/o16_*, beside the programs that
wrote them): loguru's coloured console format with the clock as Python prints a dict, and its
``serialize=True`` JSON; GoVector-style per-process files from Go, the clock printed by ``%v`` (Go's
``map[…]``) and host names that are not ASCII, given as their directory; structlog's JSON with a
thread's traceback in it (``2>&1``); ``docker compose logs`` (a coloured container name on every
line); a RotatingFileHandler's files, the newest alone starting mid-run. Each correct log SAFE, each
broken one a VIOLATION naming both holders, or a refusal naming the problem and what to do; never a
traceback, in bounded time."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import missing
from outsider_edits import said

from mutexlab.audit.clocktext import plain, read_clock
from mutexlab.limits import InputError

OUTSIDERS = Path(__file__).resolve().parent / "outsiders"
# loguru's format in o16_loguru_ring.py: TIME | LEVEL | NODE CLOCK | MESSAGE (colour codes aside)
LOGURU = r"\S+ \S+ \| \S+\s* \| (?<host>\S+) (?<clock>{.*}) \| (?<event>.*)"
ROTATING = r"\S+ \S+ (?<host>\S+) (?<clock>{.*?}) (?<event>.*)"  # logging's %(asctime)s NODE VC MESSAGE


def run_said(command: str, cwd: Path, out: Path) -> Path:
    """The shell command an error gives, run as a user would, its output in ``out``."""
    if command.lstrip().startswith(("jq", "sed")) and shutil.which(command.split()[0]) is None:
        missing(f"{command.split()[0]} is not installed: the command the error gives cannot be run here")
    with open(out, "wb") as handle:
        subprocess.run(["bash", "-c", command], stdout=handle, check=True, cwd=cwd)
    return out


def test_a_coloured_loguru_log_with_python_dict_clocks_is_safe_and_an_early_entry_found(cli):
    """Before: `not a record of --regex` (the colour codes between the fields), and with them taken
    out, `the clock "{'n0': 1}" is not JSON`: no log whose clock Python printed could be read."""
    assert "\x1b[" in (OUTSIDERS / "o16_loguru_ring.log").read_text()
    assert "{'n0': 1}" in (OUTSIDERS / "o16_loguru_ring.log").read_text()
    done = cli("verify", OUTSIDERS / "o16_loguru_ring.log", "--regex", LOGURU)
    assert done.returncode == 0 and done.stdout.startswith("ShiViz log: SAFE"), said(done)
    assert "events: enter 6, exit 6, other 12, request 6" in done.stdout, said(done)
    done = cli("verify", OUTSIDERS / "o16_loguru_ring_early.log", "--regex", LOGURU)
    assert done.returncode == 1 and "ShiViz log: VIOLATION (2)" in done.stdout, said(done)
    assert "cs (capacity 1) held by n0 (1 unit, line 3), n1 (1 unit, line 8) at once" in done.stdout, said(
        done
    )


def govector_of(serialized: Path, coloured: str = "") -> str:
    """loguru's JSON records in GoVector's layout; ``coloured``: that host's descriptions in colour,
    as a runner colouring each process's output (foreman, concurrently) writes them."""
    out = []
    for line in serialized.read_text().splitlines():
        record = json.loads(line)["record"]
        host, text = record["extra"]["node"], record["message"]
        out.append(f"{host} {json.dumps(record['extra']['vc'])}")
        out.append(f"\x1b[33m{text}\x1b[0m" if host == coloured else text)
    return "\n".join(out) + "\n"


def test_a_hosts_coloured_descriptions_are_read_not_taken_for_other_events(cli, tmp_path):
    """Before: SAFE, exit 0 — n1's `\\x1b[33menter cs\\x1b[0m` was an `other` event, so its
    holdings went unchecked and the overlap was not seen. A false SAFE."""
    plain_log, coloured = tmp_path / "plain.log", tmp_path / "coloured.log"
    plain_log.write_text(govector_of(OUTSIDERS / "o16_loguru_ring_early.json"))
    coloured.write_text(govector_of(OUTSIDERS / "o16_loguru_ring_early.json", coloured="n1"))
    for log in (plain_log, coloured):
        done = cli("verify", log)
        assert done.returncode == 1 and "ShiViz log: VIOLATION (2)" in done.stdout, said(done)
        assert "events: enter 4, exit 4, other 8, request 4" in done.stdout, said(done)
        assert "cs (capacity 1) held by n0 (1 unit, line 5), n1 (1 unit, line 15) at once" in done.stdout
    safe = tmp_path / "safe.log"  # a host name in colour too
    safe.write_text(
        re.sub(
            r"^n1 ", "\x1b[36mn1\x1b[0m ", govector_of(OUTSIDERS / "o16_loguru_ring.json", "n1"), flags=re.M
        )
    )
    done = cli("verify", safe)
    assert done.returncode == 0 and "events: enter 6, exit 6, other 12, request 6" in done.stdout, said(done)


def test_loguru_serialized_json_is_named_with_the_jq_that_writes_govectors_layout(cli, tmp_path):
    """Before: `event lacks event, pid: not mutexlab's event shape …; read with --format shiviz
    --regex`, which cannot match a JSON line's nested fields."""
    converted = {}
    for name in ("o16_loguru_ring", "o16_loguru_ring_early"):
        log = OUTSIDERS / f"{name}.json"
        done = cli("verify", log)
        assert done.returncode == 2 and done.stdout == "", said(done)
        assert done.stderr.startswith(
            f"mutexlab: error: {log}:1: loguru's serialize=True JSON (each record under 'record', the "
            "fields the program bound under 'record.extra': node, vc)"
        ), said(done)
        command = re.search(r"(jq -r .*?) > LOG,", done.stderr)
        assert command is not None, said(done)
        converted[name] = run_said(command.group(1), tmp_path, tmp_path / f"{name}.log")
    done = cli("verify", converted["o16_loguru_ring"])
    assert done.returncode == 0 and "events: enter 6, exit 6, other 12, request 6" in done.stdout, said(done)
    done = cli("verify", converted["o16_loguru_ring_early"])
    assert done.returncode == 1 and "held by n0 (1 unit, line 5), n1 (1 unit, line 15) at once" in done.stdout


def test_go_per_host_files_with_map_clocks_given_as_a_directory(cli, tmp_path):
    """Before: `cannot read DIR: Is a directory`; put together, `not a record of GoVector's regex`
    (the clock `map[nœud-0:1]`, Go's %v of a map), and with --regex, `is not JSON`."""
    for name in ("o16_gomap_ring", "o16_gomap_ring_early"):
        done = cli("verify", OUTSIDERS / name)
        assert done.returncode == 2 and done.stdout == "", said(done)
        assert f"{OUTSIDERS / name}: a directory, not a log: verify reads one log of a run" in done.stderr
        assert f"cat {OUTSIDERS / name}/*-Log.txt > run.log" in done.stderr, said(done)
        drawn = cli("report", OUTSIDERS / name, "-o", tmp_path / "page.html")
        assert drawn.returncode == 2 and drawn.stderr == done.stderr, said(drawn)
    logs = {}
    for name in ("o16_gomap_ring", "o16_gomap_ring_early"):
        logs[name] = run_said(f"cat {OUTSIDERS / name}/*-Log.txt", tmp_path, tmp_path / f"{name}.log")
    assert "nœud-1 map[nœud-0:" in logs["o16_gomap_ring"].read_text()
    done = cli("verify", logs["o16_gomap_ring"])
    assert done.returncode == 0 and done.stdout.startswith("ShiViz log: SAFE"), said(done)
    assert "events: enter 6, exit 6, other 15, request 6" in done.stdout, said(done)
    done = cli("verify", logs["o16_gomap_ring_early"])
    assert done.returncode == 1 and "ShiViz log: VIOLATION (1)" in done.stdout, said(done)
    assert "cs (capacity 1) held by nœud-0 (1 unit, line 5), nœud-1 (1 unit, line 27) at once" in done.stdout


def test_clocks_printed_by_python_or_go_are_read_strictly(cli, tmp_path):
    assert read_clock("{'a b': 3, \"c'd\": 1}") == {"a b": 3, "c'd": 1}
    assert read_clock("map[10.0.0.1:8080:2 b:1]") == {"10.0.0.1:8080": 2, "b": 1}
    for text in ("{'a': 1, 'b': x}", "{'a': 1} junk", "{'a': 1", "{'a': -1}", "map[a:1 b]"):
        with pytest.raises(ValueError):
            read_clock(text)
    with pytest.raises(InputError):
        read_clock("{'a': 1, 'a': 2}")
    spaced = tmp_path / "spaced.log"
    spaced.write_text("node one map[node one:1]\nenter cs\n")
    done = cli("verify", spaced, "--regex", r"(?<host>.*?) (?<clock>map\[.*\])\n(?<event>.*)")
    assert done.returncode == 2 and "a host name with a space cannot be told apart in it" in done.stderr


def test_huge_clocks_and_colour_codes_are_refused_or_read_in_bounded_time(cli, tmp_path):
    path = tmp_path / "big.log"
    path.write_text("a map[" + "a:1 " * 100_001 + "]\nenter cs\n")
    started = time.process_time()
    done = cli("verify", path)
    assert done.returncode == 2 and "(limits.MAX_CLOCK_ENTRIES)" in done.stderr, said(done)
    path.write_text('a {"a":1}\n' + "\x1b[" * 200_000 + "\x1b]" * 200_000 + "enter cs\n")
    done = cli("verify", path)
    assert done.returncode == 2 and f"{path}:2: an escape byte that starts no terminal code" in done.stderr
    assert time.process_time() - started < 10
    assert plain("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b[1;32menter\x1b[0m cs") == "link enter cs"


def test_a_string_code_with_no_end_is_refused_not_taken_with_the_text_behind_it(cli, tmp_path):
    """Before: SAFE, exit 0 — an OSC with no BEL or ST after it (``\\x1b]2;n1 enter cs``, a title
    cut off) was removed with the rest of its line, so n1's request, enter and exit were `other`
    events and its overlap with n0 unseen. A false SAFE: a string left open hides what follows."""
    lines = ["n0 {'n0': 1}", "request cs", "n0 {'n0': 2}", "enter cs", "n1 {'n1': 1}", "request cs"]
    lines += ["n1 {'n1': 2}", "enter cs", "n0 {'n0': 3}", "exit cs", "n1 {'n1': 3}", "exit cs"]
    plain_log, open_log = tmp_path / "plain.log", tmp_path / "open.log"
    plain_log.write_text("\n".join(lines) + "\n")
    open_log.write_text(
        "".join(f"\x1b]2;n1 {t}\n" if i in (5, 7, 11) else f"{t}\n" for i, t in enumerate(lines))
    )
    done = cli("verify", plain_log)
    assert done.returncode == 1 and "held by n0 (1 unit, line 3), n1 (1 unit, line 7) at once" in done.stdout
    done = cli("verify", open_log)
    assert done.returncode == 2 and done.stdout == "", said(done)
    assert f"{open_log}:6: an escape byte that starts no terminal code" in done.stderr, said(done)
    for opened in ("\x1b]0;title enter cs", "\x1bPq#0 enter cs", "\x1b_x enter cs", "\x1b^x", "\x1bXx"):
        assert plain(opened).startswith("\x1b"), opened
    assert plain("\x1b]0;title\x07enter \x1b]0;t\x1b\\cs\x1bM") == "enter cs"


def test_structlog_json_with_a_threads_traceback_among_it_is_refused_saying_what_it_is(cli, tmp_path):
    """Before: `not JSON (Expecting value: line 1 column 1 (char 0))` and nothing more."""
    kept = {}
    for name in ("o16_structlog_lock", "o16_structlog_lock_eager"):
        log = OUTSIDERS / f"{name}.log"
        done = cli("verify", log)
        assert done.returncode == 2 and done.stdout == "", said(done)
        at = log.read_text().splitlines().index("Exception in thread Thread-2 (client):") + 1
        assert f"{log}:{at}: not JSON" in done.stderr, said(done)
        assert "text among the JSON events ('Exception in thread Thread-2 (client):'): another output" in (
            done.stderr
        )
        assert "grep '^{' FILE > LOG" in done.stderr, said(done)
        kept[name] = run_said(f"grep '^{{' {log}", tmp_path, tmp_path / f"{name}.log")
    done = cli("verify", kept["o16_structlog_lock"], *(f"--expect-entries=c{i}=2" for i in (1, 2, 3)))
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)
    assert "events: enter 6, exit 6, recv 18, request 6, send 18" in done.stdout, said(done)
    done = cli("verify", kept["o16_structlog_lock_eager"])
    assert done.returncode == 1 and "JSON Lines log: VIOLATION" in done.stdout, said(done)
    assert re.search(r"held by c\d \(1 unit, line \d+\), c\d \(1 unit, line \d+\) at once", done.stdout)


def test_docker_compose_logs_prefixes_are_named_with_the_command_that_removes_them(cli, tmp_path):
    """Before: `'lockd-1    |' before the record is not matched by the regex … (a prefix on every
    line, a host name with a space? give --regex that matches it)`: no regex reads JSON events."""
    stripped = {}
    for name in ("o16_compose_lock", "o16_compose_lock_eager"):
        log = OUTSIDERS / f"{name}.log"
        done = cli("verify", log)
        assert done.returncode == 2 and done.stdout == "", said(done)
        assert f"{log}:1: each line behind its container's name (" in done.stderr, said(done)
        assert "docker compose logs --no-log-prefix --no-color" in done.stderr, said(done)
        command = re.search(r"(sed -E .*?) > LOG,", done.stderr)
        assert command is not None, said(done)
        stripped[name] = run_said(command.group(1), tmp_path, tmp_path / f"{name}.log")
    done = cli("verify", stripped["o16_compose_lock"], *(f"--expect-entries=client{i}=2" for i in (1, 2, 3)))
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)
    assert "events: enter 6, exit 6, recv 18, request 6, send 18" in done.stdout, said(done)
    done = cli("verify", stripped["o16_compose_lock_eager"])
    assert done.returncode == 1 and "JSON Lines log: VIOLATION" in done.stdout, said(done)
    assert re.search(
        r"held by client\d \(1 unit, line \d+\), client\d \(1 unit, line \d+\) at once", done.stdout
    )


def test_a_rotated_logs_newest_file_is_refused_naming_its_older_files_in_order(cli, tmp_path):
    """Before: `… skips events: 15 after 0 (… is a record missing, or out of its order? …)`, which
    did not say the log starts mid-run, nor which files come first."""
    combined = {}
    for name in ("o16_rotating_ring", "o16_rotating_ring_early"):
        log = OUTSIDERS / name / "ring.log"
        done = cli("verify", log, "--regex", ROTATING)
        assert (
            done.returncode == 2 and "it starts mid-run, as a rotated log's newest file does?" in done.stderr
        )
        older = sorted(log.parent.glob("ring.log.*"), key=lambda p: -int(p.suffix[1:]))
        want = "cat " + " ".join(str(p) for p in [*older, log]) + " > run.log"
        assert want in done.stderr, said(done)
        combined[name] = run_said(want.removesuffix(" > run.log"), tmp_path, tmp_path / f"{name}.log")
    done = cli("verify", combined["o16_rotating_ring"], f"--regex={ROTATING}", "--expect-entries", "3")
    assert done.returncode == 0 and "ShiViz log: SAFE" in done.stdout, said(done)
    assert "events: enter 9, exit 9, other 18, request 9" in done.stdout, said(done)
    done = cli("verify", combined["o16_rotating_ring_early"], "--regex", ROTATING)
    assert done.returncode == 1 and "ShiViz log: VIOLATION (1)" in done.stdout, said(done)
    assert "cs (capacity 1) held by n0 (1 unit, line 3), n1 (1 unit, line 6) at once" in done.stdout, said(
        done
    )


def jq_coloured(line: str) -> str:
    """A JSON line as ``jq -C -c .`` colours it: each key, each value, each brace in its colour."""
    line = re.sub(r'("[^"]*")(:)', "\x1b[34;1m\\1\x1b[0m\x1b[1;39m\\2\x1b[0m", line)
    line = re.sub(r'(:\x1b\[0m) ?("[^"]*")', "\\1\x1b[0;32m\\2\x1b[0m", line)
    return f"\x1b[1;39m{line[0]}\x1b[0m{line[1:-1]}\x1b[1;39m{line[-1]}\x1b[0m"


def test_json_lines_coloured_as_jq_shows_them_are_judged_as_the_plain_lines(cli, tmp_path):
    """Before: `not a record of GoVector's regex … (nor a JSON event …)`: the colour codes made
    every line no JSON."""
    for name, code in (("o16_structlog_lock", 0), ("o16_structlog_lock_eager", 1)):
        events = [line for line in (OUTSIDERS / f"{name}.log").read_text().splitlines() if line[:1] == "{"]
        plain_log, coloured = tmp_path / f"{name}.jsonl", tmp_path / f"{name}-c.jsonl"
        plain_log.write_text("\n".join(events) + "\n")
        coloured.write_text("\n".join(map(jq_coloured, events)) + "\n")
        assert '\x1b[34;1m"event"\x1b[0m\x1b[1;39m:\x1b[0m\x1b[0;32m"request"\x1b[0m' in coloured.read_text()
        want = cli("verify", plain_log)
        done = cli("verify", coloured)
        assert done.returncode == want.returncode == code and "JSON Lines log:" in done.stdout, said(done)
        assert done.stdout == want.stdout, said(done)


def test_a_warning_before_the_json_events_is_named_with_the_grep_that_keeps_them(cli, tmp_path):
    """Before: `not a record of GoVector's regex … (nor a JSON event …)` at line 1: the log was
    taken for a ShiViz log, the JSON events after the warning unmentioned."""
    log = tmp_path / "warned.log"
    warning = (
        "/usr/lib/python3/site-packages/structlog/_output.py:21: DeprecationWarning: file= is deprecated"
    )
    lines = (OUTSIDERS / "o16_structlog_lock.log").read_text().splitlines()
    log.write_text("\n".join([warning, *lines]) + "\n")
    done = cli("verify", log)
    assert done.returncode == 2 and done.stdout == "", said(done)
    assert f"{log}:1: text ({warning[:40]!r}) before the JSON events that start at line 2" in done.stderr
    command = re.search(r"(grep .*?) > LOG", done.stderr)
    assert command is not None, said(done)
    kept = run_said(command.group(1), tmp_path, tmp_path / "kept.log")
    done = cli("verify", kept)
    assert done.returncode == 0 and "events: enter 6, exit 6, recv 18, request 6, send 18" in done.stdout
