"""The HTML report: built from real simulated traces, opened in real headless Chromium.

The page writes what it drew into ``<pre id="selfcheck">`` (process lines, arrows, highlighted
elements, JavaScript errors); Chromium's ``--dump-dom`` gives us the DOM after the scripts ran,
and its console log (on stderr) must stay empty. Screenshots go to ``artifacts/`` (gitignored;
``MUTEXLAB_ARTIFACTS`` overrides) for a human to look at.
"""

from __future__ import annotations

import argparse
import html as htmllib
import json
import os
import re
import shutil
import subprocess
import tempfile
from functools import partial
from pathlib import Path

import pytest
from conftest import broken, missing

from mutexlab.audit import verify_events
from mutexlab.cli import main
from mutexlab.commands.reporting import write_report_if_asked
from mutexlab.protocols.registry import make_setup
from mutexlab.report import build_model, build_report
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceWriter, read_trace

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(os.environ.get("MUTEXLAB_ARTIFACTS", ROOT / "artifacts"))
EAGER = broken("ricart_agrawala_eager")
CHROMIUM_TIMEOUT = 120  # seconds for one page load, generous for a loaded CI machine


# -- traces ----------------------------------------------------------------------------------
def ra_trace(
    path: Path | None, n: int, requests: int, seed: int = 1, broken: bool = False, **config
) -> list[dict]:
    """A Ricart–Agrawala trace; ``broken``: the variant that replies from inside the critical section."""
    setup = (EAGER.make_setup if broken else partial(make_setup, "ricart-agrawala"))(
        n, {"requests": requests}
    )
    with TraceWriter(path, keep=True) as trace:
        result = Simulation(setup, SimConfig(seed=seed, **config), trace=trace).run()
    assert not result.truncated
    return trace.events


def sends(events: list[dict]) -> int:
    return sum(1 for e in events if e["event"] == "send")


# -- Chromium --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        reason = "Debian's chromium is not installed (apt-get install chromium); the report tests need it"
        missing(reason)
    return found


def open_in_chromium(chromium: str, page: Path, screenshot: str | None = None, fragment: str = "") -> dict:
    """Load ``page`` in headless Chromium; return its self-check plus the console lines it logged."""
    with tempfile.TemporaryDirectory() as profile:
        base = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--window-size=1400,900",
            "--enable-logging=stderr",
            "--v=0",
        ]
        shot = []
        if screenshot:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shot = [f"--screenshot={ARTIFACTS / screenshot}"]
        # One launch does both: the DOM after the scripts ran on stdout, and the screenshot.
        done = subprocess.run(
            base + shot + ["--dump-dom", page.as_uri() + fragment],
            capture_output=True,
            text=True,
            timeout=CHROMIUM_TIMEOUT,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="selfcheck"[^>]*>(.*?)</pre>', done.stdout, re.S)
    assert found and found.group(1), "the page did not fill its self-check: its script did not run to the end"
    check = json.loads(htmllib.unescape(found.group(1)))
    check["console"] = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    check["dom"] = done.stdout
    return check


# -- the page in a real browser --------------------------------------------------------------
def test_small_trace_draws_one_line_per_participant_and_one_arrow_per_message(chromium, tmp_path, capsys):
    trace = tmp_path / "ra.jsonl"
    events = ra_trace(trace, n=3, requests=2)
    page = tmp_path / "ra.html"
    assert main(["report", str(trace), "-o", str(page)]) == 0
    assert f"report written to {page}" in capsys.readouterr().out

    check = open_in_chromium(chromium, page, screenshot="report-ra.png", fragment="#selftest=hover")
    run = events[0]
    assert check["errors"] == [] and check["console"] == []
    assert check["lines"] == len(run["processes"]) == 3
    assert check["arrows"] == sends(events) == check["messages_total"]
    assert check["omitted_in_window"] == 0 and check["outside_window"] == 0
    assert check["bars"] == sum(1 for e in events if e["event"] == "enter")
    assert check["safe"] is True and check["highlighted"] == 0
    assert check["occupancy_charts"] == 1  # cs
    assert "SAFE" in check["dom"]
    # Hovering the first arrow shows that message's fields; hovering a bar shows the interval.
    first = next(e for e in events if e["event"] == "send")
    shown = check["hover"]["msg"]
    assert shown.startswith(f"{first['type']}  {first['pid']} → {first['to']}   id {first['id']}")
    assert f"ts: {first['msg']['ts']}" in shown and "received t" in shown
    assert "holds cs" in check["hover"]["iv"] and "enter t" in check["hover"]["iv"]
    assert (ARTIFACTS / "report-ra.png").stat().st_size > 10_000


def test_a_violation_is_highlighted_on_the_diagram(chromium, tmp_path):
    events = ra_trace(None, n=3, requests=2, broken=True, dwell={"cs": 3.0})
    verdict = verify_events(events)
    assert not verdict.safe, "the broken variant must violate mutual exclusion for this test to mean anything"
    bad_lines = {e["_line"] for v in verdict.violations for e in v.events}

    page = tmp_path / "broken.html"
    page.write_text(build_report(events), encoding="utf-8")
    check = open_in_chromium(chromium, page, screenshot="report-violation.png")
    assert check["errors"] == [] and check["console"] == []
    assert check["safe"] is False
    assert check["bad_intervals"] == len(bad_lines) > 1  # each violating holder's interval is red
    assert check["highlighted"] > check["bad_intervals"]  # plus the band over the overlap
    assert f"VIOLATION ({len(verdict.violations)})" in check["dom"]


def test_a_5000_message_trace_loads_with_a_bounded_window(chromium, tmp_path):
    events = ra_trace(None, n=11, requests=23, seed=3)
    total = sends(events)
    assert total >= 5000
    page = tmp_path / "big.html"
    page.write_text(build_report(events), encoding="utf-8")

    check = open_in_chromium(chromium, page, screenshot="report-large.png")
    assert check["errors"] == [] and check["console"] == []
    assert check["messages_total"] == total
    assert 0 < check["arrows"] <= 2000
    # Nothing vanishes silently: drawn + omitted in the window + outside it = every message.
    assert check["arrows"] + check["omitted_in_window"] + check["outside_window"] == total
    assert check["lines"] == 11
    assert re.search(rf"of {total} message arrows drawn", check["dom"])


@pytest.mark.parametrize(
    "algorithm, processes, options",
    [
        ("bees", 5, {"flowers": 2, "reeds": 2, "eggs": 2, "cocoons": 4}),
        ("elves", 4, {}),
    ],
)
def test_scenario_traces_render_every_participant_and_message(
    chromium, tmp_path, algorithm, processes, options
):
    setup = make_setup(algorithm, processes, options)
    with TraceWriter(None, keep=True) as trace:
        Simulation(setup, SimConfig(seed=5), trace=trace).run()
    events = trace.events
    page = tmp_path / f"{algorithm}.html"
    page.write_text(build_report(events), encoding="utf-8")
    check = open_in_chromium(chromium, page, screenshot=f"report-{algorithm}.png")
    assert check["errors"] == [] and check["console"] == []
    assert check["lines"] == len(setup.names)
    assert check["arrows"] == sends(events)
    assert check["bars"] == sum(1 for e in events if e["event"] == "enter")
    notes = sum(1 for e in events if e["event"] not in ("run", "send", "recv", "enter", "exit", "state"))
    assert check["notes"] == notes > 0
    assert check["occupancy_charts"] >= 2


def test_a_stalled_run_shows_who_waits_for_whom(chromium, tmp_path):
    from mutexlab_broken.ricart_agrawala_variants import HoardingRicartAgrawala

    setup = make_setup("ricart-agrawala", 3, {"requests": 1})
    setup.protocols = {pid: HoardingRicartAgrawala(pid, 3, requests=1) for pid in setup.protocols}
    with TraceWriter(None, keep=True) as trace:
        result = Simulation(setup, SimConfig(seed=0), trace=trace).run()
    assert result.stalled
    page = tmp_path / "stalled.html"
    args = argparse.Namespace(report=str(page))
    assert write_report_if_asked(args, trace, result.stalled, result.states) == 0
    check = open_in_chromium(chromium, page, screenshot="report-stalled.png")
    assert check["errors"] == [] and check["console"] == []
    assert "STALLED" in check["dom"]
    assert "deadlock: node-1, node-2, node-3 wait for each other" in htmllib.unescape(check["dom"])
    assert '<section id="stall">' in check["dom"]  # no longer hidden


def test_wheel_zooms_around_the_pointer_and_drag_pans(chromium, tmp_path):
    page = tmp_path / "zoom.html"
    page.write_text(build_report(ra_trace(None, n=4, requests=3)), encoding="utf-8")
    check = open_in_chromium(chromium, page, fragment="#selftest=zoom")
    assert check["errors"] == [] and check["console"] == []
    z = check["zoom"]
    (a0, b0), (a1, b1), (a2, b2) = z["before"], z["zoomed"], z["panned"]
    assert (b1 - a1) == pytest.approx((b0 - a0) / 1.25)  # one notch in
    assert (a1 + b1) / 2 == pytest.approx((a0 + b0) / 2)  # around the pointer, here the middle
    assert z["arrows_zoomed"] <= z["arrows_before"]
    assert b2 - a2 == pytest.approx(b1 - a1) and a2 < a1  # dragging right shows earlier times


def test_trace_text_cannot_break_out_of_the_page(chromium, tmp_path):
    events = ra_trace(None, n=2, requests=1)
    hostile = "</script><script>window.__errors.push('injected')</script><b>"
    last = events[-1]
    events.append(
        {
            "event": "comment",
            "pid": "node-1",
            "t": last["t"],
            "lamport": last["lamport"],
            "vc": last["vc"],
            "text": hostile,
        }
    )
    page = tmp_path / "hostile.html"
    page.write_text(build_report(events), encoding="utf-8")
    check = open_in_chromium(chromium, page)
    assert check["errors"] == [] and check["notes"] >= 1
    assert check["dom"].count("<script") == 3  # the error hook, the data and the drawing script


# -- the page without a browser --------------------------------------------------------------
def test_the_page_is_self_contained():
    page = build_report(ra_trace(None, n=3, requests=1))
    assert "<link" not in page and "@import" not in page and not re.search(r"<script[^>]+src=", page)
    # The only URL is the SVG namespace, which is a name, not a fetch.
    assert set(re.findall(r"https?://[^\s\"'<>)]+", page)) <= {"http://www.w3.org/2000/svg"}


def test_model_has_one_message_per_send_and_marks_in_flight_ones(tmp_path):
    events = ra_trace(None, n=3, requests=2)
    cut = next(n for n, e in enumerate(events) if e["event"] == "send" and n > len(events) // 2)
    partial = events[: cut + 1]  # ends with a send whose receive never happened
    model = build_model(partial)
    assert len(model["msgs"]) == sends(partial)
    assert model["msgs"][-1][5] is None and model["stats"]["in_flight"] >= 1
    assert model["stats"]["delivered"] + model["stats"]["in_flight"] == sends(partial)
    assert model["procs"] == ["node-1", "node-2", "node-3"]


def test_wall_clock_traces_are_drawn_from_their_first_event():
    events = ra_trace(None, n=2, requests=1)
    epoch = 1_763_760_000.0
    shifted = [dict(e, t=e["t"] + epoch) if "t" in e else e for e in events]
    plain, wall = build_model(events), build_model(shifted)
    first = min(e["t"] for e in events if "t" in e)
    assert wall["t_origin"].startswith("2025-11-21T")
    assert plain["t_origin"] is None
    assert [m[3] for m in wall["msgs"]] == pytest.approx([m[3] - first for m in plain["msgs"]])
    assert wall["range"]["t"][0] == 0


def test_bee_reeds_show_their_holder_and_cocoons():
    setup = make_setup("bees", 4, {"flowers": 2, "reeds": 2})
    with TraceWriter(None, keep=True) as trace:
        result = Simulation(setup, SimConfig(seed=2), trace=trace).run()
    model = build_model(trace.events)
    charts = {c["name"]: c for c in model["occ"]}
    assert set(charts) >= {"flower", "reed:1", "reed:2"}
    assert charts["flower"]["cap"] == setup.capacities["flower"]
    eggs = [e for e in trace.events if e["event"] == "egg"]
    assert eggs
    for reed in ("reed:1", "reed:2"):
        laid = sum(1 for e in eggs if f"reed:{e['reed']}" == reed)
        final = charts[reed]["cocoons"][-1][1] if charts[reed].get("cocoons") else 0
        assert final == laid
        assert all(len(point[2]) <= 1 for point in charts[reed]["series"])  # one holder at a time
    # Messages per entry of each kind, as the simulator counts them (types named after their kind).
    for kind in ("reed", "flower"):
        mine = sum(n for t, n in result.messages.items() if kind in t)
        assert model["stats"]["per_kind"][kind]["per_entry"] == round(mine / result.entries[kind], 3)


def test_report_command_refuses_unreadable_traces(tmp_path, capsys):
    missing = tmp_path / "nope.jsonl"
    assert main(["report", str(missing)]) == 2
    assert "cannot read" in capsys.readouterr().err
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("{not json\n")
    assert main(["report", str(garbage)]) == 2
    assert "not JSON" in capsys.readouterr().err
    headless = tmp_path / "headless.jsonl"
    headless.write_text(json.dumps({"event": "send", "pid": "node-1", "t": 0, "vc": {"node-1": 1}}) + "\n")
    assert main(["report", str(headless)]) == 2
    assert "no 'run' header" in capsys.readouterr().err


def test_report_defaults_next_to_the_trace(tmp_path, capsys):
    trace = tmp_path / "run.jsonl"
    ra_trace(trace, n=2, requests=1)
    assert main(["report", str(trace)]) == 0
    assert (tmp_path / "run.html").read_text().startswith("<!DOCTYPE html>")
    assert "run.html" in capsys.readouterr().out


def test_replay_writes_a_report(tmp_path, capsys):
    scenario = ROOT / "examples" / "scenarios" / "lamport-timestamps.json"
    if not scenario.exists():
        scenario = tmp_path / "ra.json"
        scenario.write_text(
            json.dumps(
                {
                    "algorithm": "ricart-agrawala",
                    "processes": 2,
                    "steps": [
                        {"op": "request", "pid": 1},
                        {"op": "drain"},
                        {"op": "exit", "pid": 1},
                        {"op": "drain"},
                    ],
                }
            )
        )
    page = tmp_path / "replay.html"
    trace = tmp_path / "replay.jsonl"
    code = main(["replay", str(scenario), "--trace", str(trace), "--report", str(page)])
    assert code == 0
    assert f"report written to {page}" in capsys.readouterr().out
    text = page.read_text()
    assert text.count('id="selfcheck"') == 1
    assert build_model(read_trace(trace))["stats"]["messages"] == sends(read_trace(trace))


def test_write_report_if_asked(tmp_path, capsys):
    events = ra_trace(None, n=2, requests=1)
    assert write_report_if_asked(argparse.Namespace(report=None), events) == 0
    target = tmp_path / "r.html"
    assert write_report_if_asked(argparse.Namespace(report=str(target)), events) == 0
    assert target.exists() and "report written" in capsys.readouterr().out
    assert write_report_if_asked(argparse.Namespace(report=str(tmp_path / "no" / "dir.html")), events) == 2
    assert "cannot write report" in capsys.readouterr().err
    assert write_report_if_asked(argparse.Namespace(report=str(target)), None) == 2


DUPLICATED = {  # node-1's REQUEST reaches node-2 twice: the network duplicated it
    "algorithm": "ricart-agrawala",
    "processes": 2,
    "steps": [
        {"op": "request", "pid": 1},
        {"op": "duplicate", "from": 1, "to": 2},
        {"op": "deliver", "from": 1, "to": 2},
        {"op": "deliver", "from": 2, "to": 1},
        {"op": "exit", "pid": 1},
    ],
}


def duplicated_trace(tmp_path: Path) -> list[dict]:
    scenario, trace = tmp_path / "dup.json", tmp_path / "dup.jsonl"
    scenario.write_text(json.dumps(DUPLICATED))
    assert main(["replay", str(scenario), "--trace", str(trace)]) == 0
    events = read_trace(trace)
    assert events[0]["duplicates"] is True
    return events


def test_a_duplicated_message_gets_an_arrow_per_delivery(tmp_path, capsys):
    """Each ``recv`` of a message id is an arrow, the network's copy included: ``msgs`` stays one
    row per send, with its first receipt; every later receipt is a row of ``copies`` naming it."""
    events = duplicated_trace(tmp_path)
    recvs = [e for e in events if e["event"] == "recv"]
    marked = next(e for e in recvs if e.get("copy"))
    first, again = [e for e in recvs if e["id"] == marked["id"]]  # the copy came first here
    model = build_model(events)
    assert len(model["msgs"]) == sends(events)
    original = next(i for i, m in enumerate(model["msgs"]) if m[7] == marked["id"])
    assert model["msgs"][original][5:7] == [first["t"], first["lamport"]]
    assert len(model["copies"]) == len(recvs) - sum(m[5] is not None for m in model["msgs"]) == 1
    row = model["copies"][0]
    assert row[:5] == model["msgs"][original][:5] and row[7] == marked["id"]
    assert row[5:7] == [again["t"], again["lamport"]] and row[10] == original
    assert model["stats"]["copies"] == 1 and model["stats"]["unmatched_recvs"] == 0
    assert model["stats"]["messages"] == sends(events)  # a copy is no new message
    assert row[9] == 0  # declared: the network's copy, no violation
    events[0].pop("duplicates")  # undeclared, the second receipt is a message nobody sent: drawn red
    assert [c[9] for c in build_model(events)["copies"]] == [1]


def test_the_page_draws_the_copy_of_a_duplicated_message(chromium, tmp_path, capsys):
    duplicated_trace(tmp_path)
    page = tmp_path / "dup.html"
    assert main(["report", str(tmp_path / "dup.jsonl"), "-o", str(page)]) == 0
    check = open_in_chromium(chromium, page)
    events = read_trace(tmp_path / "dup.jsonl")
    assert check["errors"] == [] and check["console"] == []
    assert check["messages_total"] == sends(events) and check["copies"] == 1
    assert check["arrows"] == check["arrows_total"] == sends(events) + 1
    assert check["dom"].count('class="msg copy') == 1
    assert f"{sends(events) + 1} of {sends(events) + 1} message arrows drawn" in check["dom"]
