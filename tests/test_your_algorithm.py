"""Your algorithm, as docs/your-algorithm.md writes one: the files of examples/protocols/.

Through the library first: each file is one module importing only ``mutexlab.protocols.kit``;
the tutorial shows central.py line for line and its table as the code holds it; in many
simulated runs every step keeps to its table, every run is safe, serves every request and
costs what the literature says; ``check`` passes the correct ones (with and without its
reductions) and finds the broken one, whose counterexample replays.

Then as a user runs them: the files copied to a directory outside the checkout and named by
path in every command (``--algorithm /tmp/…/carvalho_roucairol.py``) — simulate, verify and
report of its trace, compare, check, replay, explore (its JSON API) and, with a broker, run. The
broken one: check finds it, the counterexample replays from elsewhere, simulate and run over
RabbitMQ flag it. That chain, explore and run are one fresh ``python -m mutexlab`` per command
with only this checkout's ``shared`` on PYTHONPATH (nothing of the tests); the other commands run
in this process (the ``cli`` fixture), from the same directory outside the checkout.
"""

from __future__ import annotations

import ast
import http.client
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mutexlab.audit import numbered, verify_events
from mutexlab.check.counterexample import scenario_of
from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.machine import Table
from mutexlab.protocols import classic_audit, kit
from mutexlab.sim import SimConfig, Simulation
from mutexlab.sim.scripted import ScriptedRun, load_scenario
from mutexlab.spec import AlgorithmSpec
from mutexlab.trace import TraceWriter

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "protocols"
TUTORIAL = ROOT / "docs" / "your-algorithm.md"
CORRECT = ["central", "carvalho_roucairol", "naimi_trehel"]
BROKEN = "carvalho_roucairol_broken"
NAMES = {
    "central": "central",
    "carvalho_roucairol": "carvalho-roucairol",
    "naimi_trehel": "naimi-trehel",
    BROKEN: "carvalho-roucairol-broken",
}
# (nodes, requests) that check explores in well under a second each
CHECKED = {"central": [(3, 2)], "carvalho_roucairol": [(2, 2), (3, 1)], "naimi_trehel": [(3, 2), (4, 1)]}


def load(stem: str):
    """The example ``stem`` as its own module (not on sys.path: as a file, like the commands)."""
    path = EXAMPLES / f"{stem}.py"
    spec = importlib.util.spec_from_file_location(f"tutorial_example_{stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def node_class(module) -> type:
    (cls,) = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, kit.ClassicNode) and v is not kit.ClassicNode
    ]
    return cls


def held_to_table(setup) -> list[tuple]:
    """Wrap every node's two inputs so that each step is checked against its class's TABLE
    (``Table.check_step``, on the state the handler leaves, before its effects are applied);
    returns the list of steps checked, growing."""
    checked: list[tuple] = []
    for proto in setup.protocols.values():
        table = type(proto).TABLE
        for attr, key in (("on_message", lambda m: m.type), ("on_local", lambda a: a)):
            inner = getattr(proto, attr)

            def step(arg, inner=inner, key=key, proto=proto, table=table):
                before = proto.state
                effects = inner(arg)
                table.check_step(before, key(arg), proto.state)
                checked.append((proto.pid, before, key(arg), proto.state))
                return effects

            setattr(proto, attr, step)
    return checked


def simulate(module, nodes: int, requests: int, seed: int, **dwell):
    setup = module.SPEC.make_setup(nodes, {"requests": requests}, seed)
    checked = held_to_table(setup)
    with TraceWriter(None, keep=True) as writer:
        result = Simulation(setup, SimConfig(seed=seed, dwell=dwell), writer).run()
    events = numbered(writer.events)
    return result, events, checked


# -- the files, as the tutorial says to write them ------------------------------------------------
@pytest.mark.parametrize("stem", [*CORRECT, BROKEN])
def test_each_example_is_one_file_of_data_and_handlers_importing_only_the_kit(stem):
    path = EXAMPLES / f"{stem}.py"
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    imported = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
    assert imported == {"typing", "mutexlab.protocols.kit"}, imported
    module = load(stem)
    assert isinstance(module.SPEC, AlgorithmSpec) and module.SPEC.name == NAMES[stem]
    assert isinstance(node_class(module).TABLE, Table)
    assert "messages" in module.SPEC.literature and "sync" in module.SPEC.literature
    figure = module.SPEC.literature["messages"]
    assert figure.text in text  # cited in the docstring as the spec gives it


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", markdown, flags=re.S | re.M)


def test_the_tutorial_shows_central_py_line_for_line_and_its_table_as_the_code_has_it():
    doc = TUTORIAL.read_text(encoding="utf-8")
    shown = [line for block in python_blocks(doc) for line in block.splitlines() if line.strip()]
    code = [
        line for line in (EXAMPLES / "central.py").read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    assert shown == code
    assert load("central").CentralNode.TABLE.markdown() in doc


def test_the_minimal_example_needs_six_names_and_the_tutorial_lists_them():
    """The concepts a user learns: the names central.py imports, its node's three states counted
    as one (they are ClassicNode's), and exactly the names of the tutorial's table."""
    tree = ast.parse((EXAMPLES / "central.py").read_text(encoding="utf-8"))
    (kit_import,) = [
        n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "mutexlab.protocols.kit"
    ]
    names = {alias.name for alias in kit_import.names} - {"RELEASED", "WANTED", "HELD"}
    assert len(names) <= 6
    section = TUTORIAL.read_text(encoding="utf-8").split("## The six things to learn")[1].split("\n## ")[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", section, flags=re.M))
    assert listed == names == {"Message", "ClassicNode", "classic_table", "on", "Send", "classic_algorithm"}
    assert all(hasattr(kit, name) for name in names | {"RELEASED", "WANTED", "HELD", "ignore", "Note"})


# -- through the library ---------------------------------------------------------------------------
@pytest.mark.parametrize("stem", CORRECT)
def test_simulated_runs_keep_to_the_table_are_safe_and_cost_what_the_literature_says(stem):
    module = load(stem)
    figure = module.SPEC.literature["messages"]
    for nodes in (1, 2, 3, 5):
        for seed, think in enumerate((0.0, 1.0, 4.0)):
            result, events, checked = simulate(module, nodes, 3, seed, think=think, cs=1.0)
            verdict = verify_events(events)
            assert verdict.safe and result.ok, (nodes, seed, verdict.head())
            assert classic_audit.check(events, events[0]) == [], (nodes, seed)
            assert result.entries["cs"] == 3 * nodes
            low, high = figure.range(nodes)
            per_entry = sum(result.messages.values()) / result.entries["cs"]
            assert low - 1e-9 <= per_entry <= high + 1e-9, (nodes, seed, per_entry, figure.text)
            # every input a node took was checked against its table
            inputs = sum(1 for e in events if e["event"] in ("recv",)) + 2 * 3 * nodes
            assert len(checked) >= inputs


def test_the_table_check_catches_a_handler_that_leaves_its_table():
    """The differential check above is not vacuous: a coordinator that takes the critical section
    itself on a RELEASE (a move its table does not allow) is caught at that step."""
    module = load("central")

    class Grabbing(module.CentralNode):
        def _on_release(self, msg):
            effects = super()._on_release(msg)
            self.state = kit.HELD
            return effects

    setup = module.SPEC.make_setup(3, {"requests": 1}, 0)
    setup.protocols = {pid: Grabbing(pid, 3, 1) for pid in setup.protocols}
    held_to_table(setup)
    with pytest.raises(
        AssertionError, match="RELEASE in (RELEASED|WANTED) moved to HELD; the table allows no move"
    ):
        Simulation(setup, SimConfig(seed=0), TraceWriter(None, keep=True)).run()


def test_the_broken_variant_keeps_to_its_table_and_the_simulator_flags_it_in_every_seed():
    module = load(BROKEN)
    for seed in range(10):
        result, events, checked = simulate(module, 3, 3, seed)
        verdict = verify_events(events)
        assert not verdict.safe, seed
        assert any(v.rule == "capacity" and "cs (capacity 1)" in v.message for v in verdict.safety)
        assert checked


@pytest.mark.parametrize("stem", CORRECT)
def test_check_passes_the_correct_ones_with_and_without_reductions(stem):
    module = load(stem)
    for nodes, requests in CHECKED[stem]:
        config = CheckConfig(NAMES[stem], nodes, {"requests": requests})
        counts = []
        for reductions in (True, False):
            config.reductions = reductions
            setup = module.SPEC.make_setup(nodes, {"requests": requests}, 0)
            result, _ = run_check(config, setup=setup)
            assert result.verdict == "pass" and result.complete, (nodes, requests, reductions)
            counts.append(result.states)
        assert 0 < counts[0] <= counts[1]


def test_check_finds_the_broken_one_with_the_default_settings_and_its_path_replays():
    module = load(BROKEN)
    setup = module.SPEC.make_setup(2, {"requests": 2}, 0)
    result, model = run_check(CheckConfig(NAMES[BROKEN], 2, {"requests": 2}), setup=setup)
    assert result.verdict == "violation"
    finding = result.findings[0]
    assert finding.kind == "capacity" and "cs (capacity 1)" in finding.message
    scenario = scenario_of(model, finding, NAMES[BROKEN], 2, {"requests": 2}, 0)
    # Replayed step by step on a fresh setup: the same two nodes inside at once.
    run = ScriptedRun(module.SPEC.make_setup(2, {"requests": 2}, 0), TraceWriter(None, keep=True))
    run.start_all()
    for number, step in enumerate(load_scenario(scenario).steps, 1):
        run.play(step, number)
    verdict = verify_events(numbered(run.writer.events))
    assert [v.rule for v in verdict.safety] == ["capacity"]
    assert "node-1" in verdict.safety[0].message and "node-2" in verdict.safety[0].message


# -- as a user runs them: by file path, outside the checkout ------------------------------------------
@pytest.fixture(scope="module")
def algos(tmp_path_factory) -> Path:
    """The example files, copied to a fresh directory outside the checkout."""
    where = tmp_path_factory.mktemp("my-algorithms")
    assert not where.resolve().is_relative_to(ROOT)
    for stem in [*CORRECT, BROKEN]:
        shutil.copy(EXAMPLES / f"{stem}.py", where / f"{stem}.py")
    return where


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("RUN_", "MUTEXLAB_", "AMQP_"))}
    out["PYTHONPATH"] = str(ROOT / "shared")  # this checkout's mutexlab, nothing of the tests
    return out


def mutexlab(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mutexlab", *args],
        cwd=cwd,
        env=env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def said(done: subprocess.CompletedProcess) -> str:
    return f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("stem", CORRECT)
def test_simulate_then_verify_and_report_its_trace_by_file(algos, stem, tmp_path, cli):
    path, name = str(algos / f"{stem}.py"), NAMES[stem]
    done = cli(
        "simulate", "mutex", "--algorithm", path, "-N", "3", "-M", "2", "--trace", "t.jsonl", cwd=tmp_path
    )
    assert done.returncode == 0, said(done)
    assert done.stdout.startswith(f"{name}: N=3, 2 requests per node"), said(done)
    assert "entries:            6 of 6 requests" in done.stdout and "literature: " in done.stdout
    assert "audit: SAFE" in done.stdout
    done = cli("verify", "--algorithm", path, "t.jsonl", cwd=tmp_path)
    assert done.returncode == 0, said(done)
    assert done.stdout.startswith(f"{name}: SAFE") and "every request served" in done.stdout
    done = cli("report", "--algorithm", path, "t.jsonl", "-o", "t.html", cwd=tmp_path)
    assert done.returncode == 0, said(done)
    page = (tmp_path / "t.html").read_text(encoding="utf-8")
    assert name in page and "algorithm-unknown" not in page


def test_compare_runs_the_files_beside_a_built_in_algorithm(algos, tmp_path, cli):
    files = [str(algos / f"{stem}.py") for stem in CORRECT]
    done = cli(
        "compare", "-N", "4", "--algorithms", ",".join(["ricart-agrawala", *files]), "--json", cwd=tmp_path
    )
    assert done.returncode == 0, said(done)
    runs = json.loads(done.stdout)["runs"]
    assert [r["algorithm"] for r in runs] == ["ricart-agrawala", *(NAMES[s] for s in CORRECT)]
    assert all(r["verdict"] == "ok" and r["entries"] == r["requests"] == 12 for r in runs)
    assert all(r["literature_messages"] for r in runs)


@pytest.mark.parametrize("stem", CORRECT)
def test_check_passes_each_correct_file(algos, stem, tmp_path, cli):
    for nodes, requests in CHECKED[stem]:
        args = [
            "check",
            "mutex",
            "--algorithm",
            str(algos / f"{stem}.py"),
            "-N",
            str(nodes),
            "-M",
            str(requests),
        ]
        done = cli(*args, "--json", cwd=tmp_path)
        assert done.returncode == 0, said(done)
        outcome = json.loads(done.stdout)
        assert outcome["verdict"] == "pass" and outcome["complete"] and outcome["states"] > 0


def test_the_broken_file_is_found_by_check_and_its_counterexample_replays_from_elsewhere(algos, tmp_path):
    path = str(algos / f"{BROKEN}.py")
    done = mutexlab(
        tmp_path, "check", "mutex", "--algorithm", path, "-N", "2", "-M", "2", "--counterexample", "ce.json"
    )
    assert done.returncode == 1, said(done)
    assert "verdict:      VIOLATION — capacity: cs (capacity 1) held by node-1×1, node-2×1" in done.stdout
    assert "replay reproduces it: yes" in done.stdout
    scenario = json.loads((tmp_path / "ce.json").read_text(encoding="utf-8"))
    assert scenario["algorithm"] == path
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = mutexlab(
        elsewhere, "replay", str(tmp_path / "ce.json"), "--trace", "ce.jsonl", "--algorithm", path
    )
    assert done.returncode == 1, said(done)
    assert (
        "carvalho-roucairol-broken: VIOLATION" in done.stdout and "[capacity] cs (capacity 1)" in done.stdout
    )
    done = mutexlab(elsewhere, "verify", "--algorithm", path, "ce.jsonl")
    assert done.returncode == 1 and "[capacity] cs (capacity 1)" in done.stdout, said(done)
    done = mutexlab(elsewhere, "simulate", "mutex", "--algorithm", path, "-N", "3")
    assert done.returncode == 1 and "audit: VIOLATION" in done.stdout, said(done)


class Explorer:
    """``mutexlab explore … --no-browser --port 0`` in its own process, driven over its JSON API."""

    def __init__(self, cwd: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mutexlab", "explore", "mutex", *args, "--no-browser", "--port", "0"],
            cwd=cwd,
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.banner = self.proc.stdout.readline()
        serving = self.proc.stdout.readline()
        assert serving.startswith("serving http://"), self.banner + serving + self.proc.stderr.read()
        self.host, port = serving.split()[1][len("http://") :].rstrip("/").split(":")
        self.port = int(port)

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        response = conn.getresponse()
        payload = json.loads(response.read())
        conn.close()
        assert response.status == 200, payload
        return payload

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        self.proc.communicate(timeout=60)
        return self.proc.returncode


@pytest.mark.parametrize("stem", CORRECT)
def test_explore_serves_each_file_and_its_path_replays(algos, stem, tmp_path, cli):
    path = str(algos / f"{stem}.py")
    explorer = Explorer(tmp_path, "--algorithm", path, "-N", "3", "-M", "1")
    try:
        # the page's name, the file beside it (absolute: it is outside the working directory)
        assert explorer.banner.startswith(f"mutexlab explore: {NAMES[stem]} ({path}), 3 processes"), (
            explorer.banner
        )
        state = explorer.call("GET", "/api/state")
        assert [s["id"] for s in state["steps"]] == ["request:1", "request:2", "request:3"]
        assert len(state["procs"]) == 3
        state = explorer.call("POST", "/api/run", {"seed": 1})
        findings = state["findings"]
        assert findings["status"] == "end", findings
        assert findings["entered"] and not findings.get("violations")
        scenario = explorer.call("GET", "/api/scenario")
    finally:
        assert explorer.stop() == 0
    (tmp_path / "path.json").write_text(json.dumps(scenario), encoding="utf-8")
    # it names the algorithm, not the file (the page cannot know where the download is saved): run
    # only with --algorithm (a fresh process: this one may have loaded the file)
    done = subprocess.run(
        [sys.executable, "-m", "mutexlab", "replay", "path.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert scenario["algorithm"] == NAMES[stem], scenario["algorithm"]
    assert done.returncode == 2 and "pass --algorithm FILE" in done.stderr, done.stdout + done.stderr
    done = cli("replay", "path.json", "--algorithm", path, cwd=tmp_path)
    assert done.returncode == 0 and f"{NAMES[stem]}: SAFE" in done.stdout, said(done)


def test_explore_names_a_file_as_typed_here_without_dot_dot(algos):
    # before: "mutexlab explore: /…/my-algorithms0/../my-algorithms0/central.py, 3 processes", and
    # the exported scenario named the file with its ".." too (now: the algorithm's name alone)
    typed = f"{algos.name}/../{algos.name}/central.py"
    explorer = Explorer(algos.parent, "--algorithm", typed, "-N", "3", "-M", "1")
    try:
        assert explorer.banner.startswith(
            f"mutexlab explore: central ({algos.name}/central.py), 3 processes"
        ), explorer.banner
        assert explorer.call("GET", "/api/scenario")["algorithm"] == "central"
    finally:
        assert explorer.stop() == 0


def test_explore_opens_the_broken_files_counterexample_and_shows_the_violation(algos, tmp_path, cli):
    path = str(algos / f"{BROKEN}.py")
    done = cli(
        "check",
        "mutex",
        "--algorithm",
        path,
        "-N",
        "2",
        "-M",
        "2",
        "--counterexample",
        "ce.json",
        cwd=tmp_path,
    )
    assert done.returncode == 1, said(done)
    steps = len(json.loads((tmp_path / "ce.json").read_text(encoding="utf-8"))["steps"])
    explorer = Explorer(tmp_path, "--scenario", "ce.json", "--algorithm", path)
    try:
        state = explorer.call("GET", "/api/state")
        assert state["position"] == 0 and len(state["redo"]) == steps
        assert state["findings"]["status"] != "violation"
        state = explorer.call("POST", "/api/jump", {"to": steps})
        findings = state["findings"]
        assert findings["status"] == "violation", findings
        assert any(
            v["rule"] == "capacity" and "cs (capacity 1)" in v["message"] for v in findings["violations"]
        )
    finally:
        assert explorer.stop() == 0


# -- over RabbitMQ -----------------------------------------------------------------------------------
RUN = ["--dwell", "0.05", "--stall-timeout", "10"]


@pytest.mark.broker
@pytest.mark.parametrize("stem", CORRECT)
def test_run_over_rabbitmq_each_file(algos, stem, tmp_path, amqp_url):
    path = str(algos / f"{stem}.py")
    args = ["run", "mutex", "--algorithm", path, "-N", "3", "-M", "2", "--amqp-url", amqp_url, *RUN]
    done = mutexlab(tmp_path, *args, "--trace", "run.jsonl")
    assert done.returncode == 0, said(done)
    assert f"{NAMES[stem]}: SAFE" in done.stdout and "entries: cs 6" in done.stdout
    assert "final states: node-1=RELEASED, node-2=RELEASED, node-3=RELEASED" in done.stdout
    done = mutexlab(tmp_path, "verify", "--algorithm", path, "run.jsonl")
    assert done.returncode == 0 and done.stdout.startswith(f"{NAMES[stem]}: SAFE"), said(done)


@pytest.mark.broker
def test_run_over_rabbitmq_flags_the_broken_file(algos, tmp_path, amqp_url):
    """Two nodes starting together: one defers the other's request, keeps the permission it sends
    back on exit, and its next entry is not ordered after the other's by happened-before."""
    path = str(algos / f"{BROKEN}.py")
    args = ["run", "mutex", "--algorithm", path, "-N", "2", "-M", "3", "--amqp-url", amqp_url, *RUN]
    done = mutexlab(tmp_path, *args)
    assert done.returncode == 1, said(done)
    assert "carvalho-roucairol-broken: VIOLATION" in done.stdout
    assert "[capacity] cs (capacity 1)" in done.stdout
