"""What a newcomer meets in the first hour (the thirteenth look): the explorer's exported scenario
portable (no path of this machine in it), files named in errors as one types them, a RabbitMQ
run's stall naming what each stuck participant waits for, and the space-time diagram's names."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_explore_server import _stop
from test_report import chromium, open_in_chromium  # noqa: F401  (a fixture)

from mutexlab.explore.session import Config, Session
from mutexlab.protocols import registry

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "examples" / "solutions" / "kmutex_ricart_agrawala.py"


def _fresh(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    """``mutexlab ARGV`` in a fresh process: this one may have loaded the file already."""
    command = [sys.executable, "-m", "mutexlab", *argv]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


def _exported(tmp_path: Path) -> Path:
    """The explorer's download of a k-mutex path (two requests), saved where a browser saves it:
    a directory of its own, away from the solution's file."""
    session = Session(Config(str(SOLUTION), 3, {"requests": 1}, solution=registry.solution(str(SOLUTION))))
    session.step("request:1")
    session.step("request:2")
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    target = downloads / "scenario.json"
    target.write_text(json.dumps(session.scenario()))
    return target


def test_the_explorers_export_names_no_path_of_this_machine(tmp_path):
    """The export named the solution by its absolute path (``/home/…/x.py``): a path that means
    nothing where the download is saved or on another machine. It names the algorithm its file
    declares, which ``replay`` and ``explore --scenario`` take with ``--algorithm FILE`` from anywhere."""
    scenario = json.loads(_exported(tmp_path).read_text())
    assert scenario["algorithm"] == "k-ricart-agrawala", scenario
    assert "/" not in json.dumps(scenario), scenario


def test_an_exported_scenario_replays_and_opens_with_the_file_from_anywhere(tmp_path):
    saved = _exported(tmp_path)
    elsewhere = tmp_path / "project"
    elsewhere.mkdir()
    shutil.copy(SOLUTION, elsewhere / "mine.py")  # the file moved: the scenario still plays
    out = _fresh(saved.parent, "replay", "scenario.json", "--algorithm", "../project/mine.py")
    assert out.returncode == 3, out.stdout + out.stderr  # two requests, cut short: INCOMPLETE
    assert out.stdout.startswith("k-ricart-agrawala: "), out.stdout
    session = _fresh_session(elsewhere, str(saved))
    assert "serving http://127.0.0.1:" in session.stdout, session.stdout + session.stderr  # it opened
    assert "k-ricart-agrawala, 3 processes" in session.stdout and "2 steps ahead" in session.stdout


def _fresh_session(cwd: Path, scenario: str) -> subprocess.CompletedProcess:
    """``explore kmutex --scenario … --algorithm mine.py --no-browser``, stopped by SIGINT (as
    Ctrl-C) once it says it serves."""
    command = [sys.executable, "-m", "mutexlab", "explore", "kmutex", "--scenario", scenario]
    command += ["--algorithm", "mine.py", "--no-browser"]
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        assert p.stdout is not None
        first = p.stdout.readline()  # the banner, or nothing when it stopped with an error
        if first:
            first += p.stdout.readline()  # "serving http://…"
        rest, err = _stop(p)  # killed if it does not stop: never waited on for ever by the with
    return subprocess.CompletedProcess(command, p.returncode, first + rest, err)


def test_an_exported_scenario_without_its_file_says_to_name_it(tmp_path):
    """Without ``--algorithm`` the refusal says what to pass, not only "unknown algorithm"."""
    saved = _exported(tmp_path)
    out = _fresh(saved.parent, "replay", "scenario.json")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "unknown algorithm 'k-ricart-agrawala'" in out.stderr, out.stderr
    assert "pass --algorithm FILE" in out.stderr, out.stderr


def test_declaring_one_name_twice_names_both_files_as_typed(tmp_path):
    """``compare --algorithms ../a.py,b.py`` of two files declaring one name answered with their
    absolute paths (``/tmp/…/b.py declares the algorithm 'n', as /tmp/…/a.py does``)."""
    text = SOLUTION.read_text().replace('    "k-ricart-agrawala",', '    "n",')
    (tmp_path / "a.py").write_text(text)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text(text)
    out = _fresh(tmp_path, "compare", "--algorithms", "a.py,sub/b.py", "-N", "3")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "algorithm file sub/b.py declares the algorithm 'n', as a.py does: rename one" in out.stderr
    assert str(tmp_path) not in out.stderr, out.stderr


def test_a_scenario_of_another_algorithm_names_the_file_as_typed(tmp_path):
    """``explore kmutex --scenario s.json --algorithm n.py`` said ``but /tmp/…/n.py declares 'n'``."""
    text = SOLUTION.read_text().replace('    "k-ricart-agrawala",', '    "n",')
    (tmp_path / "n.py").write_text(text)
    scenario = {"algorithm": "k-ricart-agrawala", "processes": 2, "options": {"requests": 1}, "steps": []}
    (tmp_path / "s.json").write_text(json.dumps(scenario))
    for argv in (("replay", "s.json"), ("explore", "kmutex", "--scenario", "s.json", "--no-browser")):
        out = _fresh(tmp_path, *argv, "--algorithm", "n.py")
        assert out.returncode == 2, out.stdout + out.stderr
        assert out.stderr.endswith("s.json is of the algorithm 'k-ricart-agrawala', but n.py declares 'n'\n")


def _a_bee_waiting_for_the_reed_another_holds():
    """A world of two bees (one reed, one flower) where one holds the reed and the other waits for
    it: (setup, the waiter's protocol object as its participant would hold it, holder, waiter)."""
    from collections import deque

    from mutexlab.protocols.registry import make_setup
    from mutexlab.sim.stuck import stuck_said
    from mutexlab.sim.world import WorldModel

    setup = make_setup("bees", 2, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1})
    model = WorldModel(setup)
    start, _ = model.initial()
    seen, todo = {start}, deque([start])
    while todo and len(seen) < 5000:
        world = todo.popleft()
        said = stuck_said(model, world)
        if "(holding reed:1" in said and "for reed (held by bee-" in said:
            holder = "bee-1" if said.startswith("bee-1 (holding") else "bee-2"
            waiter = "bee-2" if holder == "bee-1" else "bee-1"
            i = next(i for i in range(model.n) if model.names[model.pids[i]] == waiter)
            return setup, model.objects[world[i]], holder, waiter
        for label in model.steps(world):
            nxt, _, _ = model.step(world, label)
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    raise AssertionError("no world where a bee waits for the reed another holds")


def test_a_bees_run_stall_names_the_reed_a_bee_waits_for_and_its_holder():
    """Over RabbitMQ a stalled bee's line said only ``bee-2 (WAIT_REED) waits for: ACKreed from
    bee-1``: the monitor's copies of the bees hold none of their state, so it could not ask
    ``wants()``. The participant now tells it in its status, and the report names the reed and its
    holder as ``simulate`` does."""
    from types import SimpleNamespace

    from mutexlab.trace import TraceWriter
    from mutexlab.transport.feed import AuditFeed
    from mutexlab.transport.monitor import waiting_to_enter
    from mutexlab.transport.outcome import Outcome, render
    from mutexlab.transport.participant import Participant
    from mutexlab.transport.view import LiveView

    setup, proto, holder, waiter = _a_bee_waiting_for_the_reed_another_holds()
    pid = next(p for p, n in setup.names.items() if n == waiter)
    setup.protocols[pid] = proto  # the participant's own object, in the state it stalled in
    bus = SimpleNamespace(forged=0, forgeries=[], reconnects=0, redelivered=0)
    me = SimpleNamespace(
        _joined=lambda: (setup, None, pid),
        name=waiter,
        pid=pid,
        timers=[],
        inbox=SimpleNamespace(duplicates=0, gaps=0),
        dead_letters=0,
        rejected=0,
        rejections=[],
        bus=bus,
        links=None,
        audit=SimpleNamespace(recorded=0),
        start_time=0.0,
    )
    status = Participant._status_body(me)  # noqa: SLF001 - the status line the participant sends
    assert status["wants"] == ["reed"], status
    import io

    feed = AuditFeed(TraceWriter(None, keep=True), LiveView(io.StringIO()))
    feed.members = (holder, waiter)
    feed.report(waiter, json.loads(json.dumps(status)))  # as it travels, JSON
    stalled = feed.stalled([waiter])
    holding = {"reed:1": [holder]}
    o = Outcome("run-x", "bees", 2, False, stalled, holding, waiting_to_enter(setup, stalled, holding))
    o.states = {waiter: status["state"], holder: "ON_REED"}
    said = render(o)
    assert f"  {waiter} ({status['state']}) waits for reed (held by {holder}): " in said, said


STALLING_BEES = '''"""Bees that wait for ACKreed from all P bees, themselves included: a stall."""

from mutexlab.protocols import bees
from mutexlab_broken import recast
from mutexlab_broken.bees_variants import WaitsForAllP

FAMILY = "bees"


def make_setup(processes, options, seed=0):
    return recast(bees.make_setup(processes, options, seed), WaitsForAllP)
'''


@pytest.mark.broker
def test_a_stalled_bees_run_over_rabbitmq_says_what_each_bee_waits_to_enter(amqp_url, tmp_path):
    """``mutexlab run bees`` of bees that never enter: each stalled line names the reed, as
    ``simulate``'s does; no line says ``RELEASEreed from`` nobody."""
    (tmp_path / "bees_all_p.py").write_text(STALLING_BEES)
    argv = ["run", "bees", "-a", "bees_all_p.py", "-P", "3", "-T", "1", "-K", "1", "--eggs", "1"]
    env = {**os.environ, "AMQP_URL": amqp_url, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-m", "mutexlab", *argv, "--stall-timeout", "3", "--dwell", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert out.returncode == 3, out.stdout + out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("  bee-")]
    waiting = [line for line in lines if "waits for" in line and "waits for nothing" not in line]
    assert waiting and all(" waits for reed: RELEASEreed from bee-" in line for line in waiting), lines
    assert not any(line.rstrip().endswith(" from") for line in out.stdout.splitlines()), out.stdout


ODD_NAMES = [
    "node-1",
    '<b>bold</b> & "q"',
    "ünïcødé-名前",
    "worker on alpha.example.org:5672 (primary replica, rack 3) " * 3,  # cut in the names' column
    "</script><script>alert(1)</script>",
    "🐝" * 120,  # cut between emoji, never inside one
    "tab\tname",
    "שלום-rtl",
    "a",
    "node 10",
    "n\u200bzero-width",
    "node 12",
]


def _odd_trace(path: Path) -> None:
    """A Ricart–Agrawala run of 12 nodes whose names are the ones above (the same run renamed:
    a trace names its processes as it likes)."""
    from mutexlab.sim import SimConfig, Simulation
    from mutexlab.trace import TraceWriter

    setup = registry.make_setup("ricart-agrawala", 12, {"requests": 1})
    with TraceWriter(None, keep=True) as trace:
        Simulation(setup, SimConfig(seed=1), trace=trace).run()
    held: dict[str, float] = {}  # the longest holders get the longest names: their bars are labelled
    for event in trace.events:
        if event["event"] in ("enter", "exit"):
            sign = -1 if event["event"] == "enter" else 1
            held[event["pid"]] = held.get(event["pid"], 0.0) + sign * event["t"]
    longest = sorted(held, key=lambda pid: -held[pid])
    by_length = sorted(ODD_NAMES, key=len, reverse=True)
    names = dict(zip(longest, by_length))
    lines = []
    for event in trace.events:
        event = dict(event)
        if event["event"] == "run":
            event["processes"] = {k: names.get(v, v) for k, v in event["processes"].items()}
        for key in ("pid", "to", "from"):
            if key in event:
                event[key] = names.get(event[key], event[key])
        if "vc" in event:
            event["vc"] = {names.get(k, k): v for k, v in event["vc"].items()}
        if isinstance(event.get("id"), str):
            sender, _, n = event["id"].partition("#")
            event["id"] = f"{names.get(sender, sender)}#{n}"
        lines.append(json.dumps(event, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_diagram_draws_odd_and_long_names_whole_or_cut_cleanly(chromium, tmp_path):  # noqa: F811
    """Twelve processes named with markup, quotes, tabs, RTL text, emoji and very long names: each
    drawn as text (never markup), a name too long for its column cut with "…" between characters
    (an emoji was cut in half: a broken glyph), and a holder's name on an occupancy bar cut to its
    bar (it ran on over the bars after it)."""
    import html

    trace, page = tmp_path / "odd.jsonl", tmp_path / "odd.html"
    _odd_trace(trace)
    out = _fresh(tmp_path, "report", str(trace), "-o", str(page))
    assert out.returncode == 0, out.stdout + out.stderr
    check = open_in_chromium(chromium, page, screenshot="first-hour13-odd-names.png")
    assert check["errors"] == [] and check["console"] == [], check
    assert check["lines"] == 12 and check["status"] == "SAFE", check
    dom = check["dom"]
    drawn = [
        html.unescape(re.sub(r"<title>.*?</title>", "", t, flags=re.S))
        for t in re.findall(r'<text class="proc-name[^"]*"[^>]*>(.*?)</text>', dom, re.S)
    ]
    assert len(drawn) == 12, drawn
    for shown in drawn:
        assert "\ufffd" not in shown and not any(0xD800 <= ord(c) <= 0xDFFF for c in shown), shown
        whole = shown in ODD_NAMES
        assert whole or (shown.endswith("…") and any(n.startswith(shown[:-1]) for n in ODD_NAMES)), shown
    assert '<b>bold</b> & "q"' in drawn and "</script><script>alert(1)</script>" in drawn
    assert "🐝" * 120 not in drawn and any(shown.startswith("🐝🐝") for shown in drawn)  # cut
    bars = [
        html.unescape(t) for t in re.findall(r'<text [^>]*pointer-events="none"[^>]*>([^<]*)</text>', dom)
    ]
    assert bars, "no holder named on an occupancy bar"
    for label in bars:
        assert label in ODD_NAMES or (
            label.endswith("…") and any(n.startswith(label[:-1]) for n in ODD_NAMES)
        )
    assert any(label.endswith("…") for label in bars), bars  # the long names are cut to their bars
    assert check["occupancy_labels_overflowing"] == 0, check


def test_ctrl_c_as_soon_as_the_explorer_serves_stops_it_cleanly(monkeypatch, capsys):
    """Ctrl-C right after ``serving http://…`` (as the docs' test harness sends it) could come
    before the server's own handlers were in: ``interrupted``, exit 130, instead of ``stopped
    (SIGINT)``, exit 0. Here it comes at that instant, every time."""
    from mutexlab.cli import main
    from mutexlab.explore import server

    served = []

    def interrupted_at_once(s):
        served.append(s)
        raise KeyboardInterrupt  # Ctrl-C before serve_until_stopped installed its handlers

    monkeypatch.setattr(server, "serve_until_stopped", interrupted_at_once)
    assert main(["explore", "mutex", "-N", "2", "--no-browser"]) == 0
    out = capsys.readouterr().out
    assert "serving http://127.0.0.1:" in out and out.rstrip().endswith("stopped (SIGINT)"), out
    assert served and served[0].socket.fileno() == -1  # the port is let go
