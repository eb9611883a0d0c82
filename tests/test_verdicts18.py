"""Verdicts that never overstate, and stops that name what stopped them (verdict18).

* A trace coloured by ``jq -C`` (colour codes around each key, value and bracket) is read as the
  plain trace: the same verdict, the same words; an escape byte inside a value or another code
  is refused naming it. Before: ``not JSON (Expecting value)``, exit 2, the colours unnamed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BROKEN_KMUTEX = ROOT / "examples" / "solutions" / "kmutex_ricart_agrawala_broken.py"

KEY, PUNCT, STRING, NUMBER, OFF = "\x1b[34;1m", "\x1b[1;39m", "\x1b[0;32m", "\x1b[0;39m", "\x1b[0m"


def said(done) -> str:
    return f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"


def coloured(value: object, key: bool = False) -> str:
    """``value`` as ``jq -C -c .`` writes it (jq 1.6/1.7): each key, value and bracket coloured."""
    if isinstance(value, dict):
        inner = f"{PUNCT},{OFF}".join(
            f"{KEY}{json.dumps(k)}{OFF}{PUNCT}:{OFF}{coloured(v)}" for k, v in value.items()
        )
        return f"{PUNCT}{{{OFF}{inner}{PUNCT}{PUNCT}}}{OFF}"
    if isinstance(value, list):
        inner = f"{PUNCT},{OFF}".join(coloured(v) for v in value)
        return f"{PUNCT}[{inner}{PUNCT}{PUNCT}]{OFF}"
    colour = STRING if isinstance(value, str) else NUMBER
    return f"{colour}{json.dumps(value)}{OFF}"


def colour_file(plain: Path, out: Path) -> Path:
    lines = [json.loads(line) for line in plain.read_text().splitlines() if line.strip()]
    out.write_text("".join(coloured(event) + "\n" for event in lines))
    return out


@pytest.fixture
def traces(cli, tmp_path) -> dict[str, Path]:
    safe, broken = tmp_path / "safe.jsonl", tmp_path / "broken.jsonl"
    done = cli("simulate", "mutex", "-a", "ricart-agrawala", "-N", "3", "--seed", "1", "--trace", safe)
    assert done.returncode == 0, said(done)
    done = cli("simulate", BROKEN_KMUTEX, "-N", "4", "--seed", "1", "--trace", broken)
    assert done.returncode == 1, said(done)
    return {"safe": safe, "broken": broken}


@pytest.mark.parametrize(("name", "code"), [("safe", 0), ("broken", 1)])
def test_a_trace_coloured_by_jq_reads_as_the_plain_trace(cli, tmp_path, traces, name, code):
    plain = traces[name]
    shown = colour_file(plain, tmp_path / f"{name}-c.jsonl")
    assert f'{KEY}"event"{OFF}{PUNCT}:{OFF}{STRING}"run"{OFF}' in shown.read_text()
    want, done = cli("verify", plain), cli("verify", shown)
    assert want.returncode == done.returncode == code, said(done)
    assert done.stdout == want.stdout and done.stderr == want.stderr, said(done)
    assert cli("verify", shown, "--json").stdout == cli("verify", plain, "--json").stdout


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed (the emulation above runs)")
def test_the_real_jq_colours_read_as_the_plain_trace(cli, tmp_path, traces):
    for name, code in (("safe", 0), ("broken", 1)):
        shown = tmp_path / f"{name}-jq.jsonl"
        with open(traces[name], "rb") as given, open(shown, "wb") as out:
            subprocess.run(["jq", "-C", "-c", "."], stdin=given, stdout=out, check=True)
        assert "\x1b[" in shown.read_text()
        want, done = cli("verify", traces[name]), cli("verify", shown)
        assert want.returncode == done.returncode == code and done.stdout == want.stdout, said(done)


def test_an_escape_inside_a_value_or_another_code_is_refused_by_name(cli, tmp_path, traces):
    events = [json.loads(line) for line in traces["safe"].read_text().splitlines()]
    text = [coloured(e) for e in events]
    inside = text[1].replace(f'{STRING}"request"{OFF}', '"req\x1b[1muest"', 1)  # in a string: no JSON
    other = "\x1b[2J" + text[1]  # a code that clears the screen: no colour
    for line, column in ((inside, inside.index("\x1b[1mu") + 1), (other, 1)):
        log = tmp_path / "bad.jsonl"
        log.write_text("\n".join([text[0], line, *text[2:]]) + "\n")
        done = cli("verify", log)
        assert done.returncode == 2 and done.stdout == "", said(done)
        assert f"{log}:2: an escape byte that is no colour code between JSON tokens" in done.stderr, said(
            done
        )
        assert f"column {column})" in done.stderr and "jq -M" in done.stderr, said(done)


def test_a_clock_free_log_keeps_its_colours_apart_from_its_values(cli, tmp_path):
    """The clock-free reader took every escape code out, inside a string too (a name changed)."""
    log = tmp_path / "free.jsonl"
    lines = [
        {"event": "request", "pid": "a", "resource": "cs"},
        {"event": "enter", "pid": "a", "resource": "cs"},
        {"event": "exit", "pid": "a", "resource": "cs"},
    ]
    log.write_text("".join(coloured(e) + "\n" for e in lines))
    done = cli("verify", log)
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)
    log.write_text(log.read_text().replace(f'{STRING}"a"{OFF}', '"\x1b[1ma"', 1))
    done = cli("verify", log)
    assert done.returncode == 2 and re.search(r":1: an escape byte that is no colour code", done.stderr), (
        said(done)
    )
