"""Your algorithm by file: ``--algorithm`` takes a registered name, a dotted module or a ``.py``
file, in every command and for every family; a file is loaded once, under a stable module name,
and what is wrong with it is said plainly. A trace of an algorithm nobody here declares is never
SAFE. The files live in a temporary directory outside the checkout, written as a user would:
absolute imports, a ``SPEC``, a name of their own."""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap
from pathlib import Path

import pytest

from mutexlab.cli import build_parser, main
from mutexlab.commands import explore
from mutexlab.protocols import registry
from mutexlab.setups import ConfigError
from mutexlab.transport.participant import Participant
from mutexlab.transport.service import roles
from mutexlab.transport.settings import ParticipantSettings

PROTOCOLS = Path(registry.__file__).resolve().parent
NOWHERE = "amqp://127.0.0.1:1/%2F"


def as_user_file(module: str, name: str, new: str) -> str:
    """The built-in protocol ``module`` as a user writes one: absolute imports, named ``new``."""
    text = (PROTOCOLS / f"{module}.py").read_text(encoding="utf-8")
    text = re.sub(r"^(\s*)from \.\.(\w)", r"\1from mutexlab.\2", text, flags=re.M)
    text = re.sub(r"^(\s*)from \.(\w)", r"\1from mutexlab.protocols.\2", text, flags=re.M)
    return text.replace(f'"{name}"', f'"{new}"')


GREEDY = '''
"""ra-copy, greedy: enters without waiting for any REPLY (beside ra_copy.py, imported as in a script)."""
from dataclasses import replace

from ra_copy import SPEC as BASE, RicartAgrawalaNode, make_setup as base_setup


class Greedy(RicartAgrawalaNode):
    def _request(self):
        effects = super()._request()
        if self.state == "WANTED":
            effects += self._enter()
        return effects


def make_setup(processes, options, seed=0):
    setup = base_setup(processes, options, seed)
    setup.algorithm = "ra-greedy"
    setup.protocols = {p: Greedy(p, processes, options.get("requests", 0)) for p in setup.protocols}
    return setup


SPEC = replace(BASE, name="ra-greedy", summary="greedy", make_setup=make_setup)
'''

# A variant of a family's built-in algorithm, under its own name: its traces are audited as its family's.
VARIANT = '''
"""{name}: the built-in {base}, under a name of its own."""
from dataclasses import replace

from mutexlab.protocols import {module}


def make_setup(processes, options, seed=0):
    setup = {module}.make_setup(processes, options, seed)
    setup.algorithm = "{name}"
    return setup


SPEC = replace({module}.SPEC, name="{name}", make_setup=make_setup)
'''


@pytest.fixture
def fresh(monkeypatch):
    """A registry that has loaded no module or file yet (each test's files declare the same names)."""
    monkeypatch.setattr(registry, "_declared", {})


@pytest.fixture
def algos(tmp_path, fresh, monkeypatch) -> Path:
    """A directory outside the checkout holding ``ra_copy.py`` (Ricart–Agrawala as ``ra-copy``),
    ``ra_greedy.py`` (its broken variant) and ``my_bees.py``, ``my_elves.py`` (family variants)."""
    where = tmp_path / "algos"
    where.mkdir()
    (where / "ra_copy.py").write_text(as_user_file("ricart_agrawala", "ricart-agrawala", "ra-copy"))
    (where / "ra_greedy.py").write_text(GREEDY)
    for family in ("bees", "elves"):
        (where / f"my_{family}.py").write_text(
            VARIANT.format(name=f"my-{family}", base=family, module=family)
        )
    monkeypatch.syspath_prepend(str(where))  # removed again at the end: "import ra_copy" is the file's own
    monkeypatch.chdir(tmp_path)
    yield where
    for name in ("ra_copy", "ra_greedy"):
        sys.modules.pop(name, None)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


# -- the resolver --------------------------------------------------------------------------------
def test_a_name_a_module_and_a_file_resolve_to_their_specs(algos):
    assert registry.resolve("lamport") is registry.SPECS["lamport"]
    variant = registry.resolve("mutexlab_broken.bees")  # a module offering make_setup, FAMILY bees
    assert variant.family == "bees" and variant.name == "mutexlab_broken.bees"
    # A dotted module may be a variant of a built-in under its name (its traces are the built-in's).
    newest = registry.resolve("mutexlab_broken.raymond_newest_first")
    assert newest.name == "raymond" and newest is not registry.SPECS["raymond"]
    assert registry.lookup("raymond") is registry.SPECS["raymond"]
    path = algos / "ra_copy.py"
    found = registry.resolve(str(path))
    assert found.name == "ra-copy" and found.family == "classic" and found.literature
    # Loaded once, under a name that depends only on the file's resolved path.
    assert registry.resolve(f"{algos}/../algos/ra_copy.py") is found
    module = sys.modules[registry.module_name(path.resolve())]
    assert module.SPEC is found and registry.module_name(path.resolve()) == registry.module_name(path)
    assert registry.lookup("ra-copy") is found and registry.resolve("ra-copy") is found
    assert registry.canonical("ra_copy.py") == str(Path.cwd() / "ra_copy.py")
    assert registry.canonical("ricart-agrawala") == "ricart-agrawala"
    setup = registry.build_setup(str(path), 3, {"requests": 1}, 0)
    assert setup.algorithm == "ra-copy" and len(setup.protocols) == 3


BAD_FILES = [
    ("missing.py", None, "algorithm file {path} does not exist"),
    ("notes.txt", "x = 1\n", "algorithm file {path} is not a Python file (.py)"),
    ("plain.py", "x = 1\n", "algorithm file {path} declares no SPEC = AlgorithmSpec(...)"),
    ("wrong.py", "SPEC = 3\n", "algorithm file {path}: SPEC must be an AlgorithmSpec, got int"),
    (
        "boom.py",
        '"""doc"""\nimport os\n\nratio = 1 / 0\n',
        "cannot load algorithm file {path}: line 4 `ratio = 1 / 0`: ZeroDivisionError: division by zero",
    ),
    (
        "deps.py",
        "import os\nimport no_such_module_here\n",
        "cannot load algorithm file {path}: line 2 `import no_such_module_here`: ModuleNotFoundError: "
        "No module named 'no_such_module_here'",
    ),
    ("typo.py", "def f(:\n    pass\n", "cannot load algorithm file {path}: line 1 `def f(:`: SyntaxError:"),
    (
        "clash.py",
        "from dataclasses import replace\nfrom mutexlab.protocols.lamport import SPEC as L\n\nSPEC = replace(L, summary='mine')\n",
        "algorithm file {path} declares the algorithm 'lamport', the name of a built-in algorithm",
    ),
]


@pytest.mark.parametrize("name, text, words", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_a_bad_file_is_refused_with_what_is_wrong(tmp_path, fresh, name, text, words, capsys):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        registry.resolve(str(path))
    assert str(exc.value).startswith(words.format(path=path)), exc.value
    assert registry.module_name(path.resolve()) not in sys.modules  # a failed load leaves nothing
    # The commands say the same, exit 2, without a traceback.
    code, out, err = run(capsys, "simulate", "mutex", "-N", "2", "-a", str(path))
    assert code == 2 and out == "" and err == f"mutexlab: error: {exc.value}\n"


def test_two_files_declaring_one_name_and_a_setup_of_another_name_are_refused(algos):
    twin = algos / "twin" / "ra_copy.py"
    twin.parent.mkdir()
    twin.write_text((algos / "ra_copy.py").read_text())
    registry.resolve(str(algos / "ra_copy.py"))
    with pytest.raises(
        # named as typed here (the fixture works in tmp_path), not by their absolute paths
        ConfigError,
        match="algos/twin/ra_copy.py declares the algorithm 'ra-copy', as algos/ra_copy.py does",
    ):
        registry.resolve(str(twin))
    liar = algos / "liar.py"
    # a spec named "liar" whose make_setup still builds "ra-copy"
    liar.write_text(
        (algos / "ra_copy.py").read_text()
        + '\nimport dataclasses\nSPEC = dataclasses.replace(SPEC, name="liar")\n'
    )
    with pytest.raises(
        ConfigError, match="make_setup names its setup 'ra-copy', but SPEC names the algorithm 'liar'"
    ):
        registry.build_setup(str(liar), 2, {}, 0)


def test_a_file_of_another_family_is_sent_to_its_subcommand(algos, capsys):
    code, _, err = run(capsys, "simulate", "bees", "-a", str(algos / "ra_copy.py"))
    assert code == 2
    # the file named as typed here (the working directory is algos' parent), not by its absolute path
    assert (
        "declares ra-copy, a classic algorithm: run it with `mutexlab simulate mutex --algorithm algos/ra_copy.py`"
        in err
    )
    own = algos / "own_flags.py"
    own.write_text(
        "from dataclasses import replace\nfrom ra_copy import SPEC as BASE, make_setup as base\n\n\n"
        "def make_setup(p, o, s=0):\n    setup = base(p, o, s)\n    setup.algorithm = 'own'\n    return setup\n\n\n"
        "SPEC = replace(BASE, name='own', make_setup=make_setup, flags=replace(BASE.flags, command='mine'))\n"
    )
    code, _, err = run(capsys, "simulate", "mutex", "-N", "2", "-a", str(own))
    assert code == 2 and "declares own with flags of its own (`mine`), which no command presents" in err


# -- every command, every family -------------------------------------------------------------------
def test_simulate_compare_check_replay_and_verify_take_a_file(algos, tmp_path, capsys, monkeypatch):
    ra = str(algos / "ra_copy.py")
    code, out, _ = run(
        capsys, "simulate", "mutex", "-a", ra, "-N", "3", "-M", "2", "--seed", "1", "--trace", "ra.jsonl"
    )
    assert (
        code == 0 and out.startswith("ra-copy: N=3, 2 requests per node") and "literature: 2(N−1) = 4" in out
    )
    # The copy runs exactly as the built-in it was copied from.
    code, builtin, _ = run(
        capsys, "simulate", "mutex", "-a", "ricart-agrawala", "-N", "3", "-M", "2", "--seed", "1"
    )
    assert builtin.replace("ricart-agrawala", "ra-copy") == out.replace("trace written to ra.jsonl\n", "")
    code, out, _ = run(capsys, "compare", "-N", "3", "--algorithms", f"ricart-agrawala,{ra}", "--json")
    rows = json.loads(out)["runs"]
    assert code == 0 and [r["algorithm"] for r in rows] == ["ricart-agrawala", "ra-copy"]
    assert rows[0]["total_messages"] == rows[1]["total_messages"]
    code, out, _ = run(capsys, "check", "mutex", "-a", ra, "-N", "2", "--json")
    assert code == 0 and json.loads(out)["verdict"] == "pass"
    # The broken variant beside it (it imports ra_copy as a script would): found, and its
    # counterexample names the file below it relative to itself, so it replays from anywhere.
    code, out, _ = run(
        capsys, "check", "mutex", "-a", str(algos / "ra_greedy.py"), "-N", "2", "--counterexample", "ce.json"
    )
    assert code == 1 and "replay reproduces it: yes" in out
    scenario = json.loads(Path("ce.json").read_text())
    assert scenario["algorithm"] == "algos/ra_greedy.py"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    # (in this process the file is loaded already; a fresh one runs it only when --algorithm names it)
    code, out, _ = run(capsys, "replay", str(tmp_path / "ce.json"), "-a", str(algos / "ra_greedy.py"))
    assert code == 1 and "REFUSED" in out


PLANTED = """
from pathlib import Path
Path({marker!r}).write_text("ran")  # a scenario must never make replay run this
raise SystemExit(9)
"""


@pytest.mark.parametrize("how", ["absolute", "relative", "module"])
def test_replay_never_runs_code_a_scenario_names(how, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "marker"
    (tmp_path / "planted.py").write_text(PLANTED.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(tmp_path))
    named = {"absolute": str(tmp_path / "planted.py"), "relative": "planted.py", "module": "planted.mod"}[how]
    steps = [{"op": "request", "pid": 1}, {"op": "drain"}]
    Path("s.json").write_text(json.dumps({"algorithm": named, "processes": 2, "steps": steps}))
    code, out, err = run(capsys, "replay", "s.json")
    assert code == 2 and not marker.exists(), (code, out, err)
    kind = "module" if how == "module" else "file"
    said = "planted.mod" if how == "module" else "planted.py"  # a file as one types it here
    assert f"s.json names the algorithm {kind} {said}:" in err and f"pass --algorithm {said}" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_trace_of_an_algorithm_nobody_declares_is_never_safe(algos, capsys, monkeypatch):
    ra = str(algos / "ra_copy.py")
    assert run(capsys, "simulate", "mutex", "-a", ra, "-N", "3", "--trace", "ra.jsonl")[0] == 0
    monkeypatch.setattr(registry, "_declared", {})  # as a fresh process: nobody declares ra-copy
    code, out, _ = run(capsys, "verify", "ra.jsonl")
    assert code == 3 and out.startswith("ra-copy: INCOMPLETE (1)")
    assert (
        "[algorithm-unknown] the run header names the algorithm 'ra-copy', which this mutexlab does not know"
        in out
    )
    assert "(--algorithm names the module or .py file that declares it)" in out
    code, out, _ = run(capsys, "verify", "ra.jsonl", "--json")
    assert json.loads(out)["verdict"] == "INCOMPLETE"
    assert run(capsys, "report", "ra.jsonl", "-o", "unknown.html")[0] == 0
    assert "algorithm-unknown" in Path("unknown.html").read_text()
    code, out, _ = run(capsys, "verify", "ra.jsonl", "--algorithm", ra)
    assert code == 0 and out.startswith("ra-copy: SAFE") and "every request served" in out
    code, out, _ = run(capsys, "report", "ra.jsonl", "-o", "known.html", "-a", ra)
    assert code == 0 and "algorithm-unknown" not in Path("known.html").read_text()
    code, _, err = run(capsys, "verify", "ra.jsonl", "--algorithm", "lamport")
    assert code == 2 and "ra.jsonl is of the algorithm 'ra-copy', but lamport declares 'lamport'" in err
    code, _, err = run(capsys, "replay", "ce.json", "--algorithm", ra)  # no such scenario
    assert code == 2 and "cannot read scenario ce.json" in err
    # A scenario naming the algorithm (not its file) replays once --algorithm loads the file.
    steps = [{"op": "request", "pid": 1}, {"op": "drain"}, {"op": "exit", "pid": 1}, {"op": "drain"}]
    Path("named.json").write_text(json.dumps({"algorithm": "ra-copy", "processes": 2, "steps": steps}))
    monkeypatch.setattr(registry, "_declared", {})
    code, _, err = run(capsys, "replay", "named.json")
    assert code == 2 and "unknown algorithm 'ra-copy'" in err
    code, out, _ = run(capsys, "replay", "named.json", "-a", ra)
    assert code == 0 and "entered, in order: node-1" in out and "ra-copy: SAFE" in out
    code, _, err = run(capsys, "replay", "named.json", "-a", "lamport")
    assert code == 2 and "named.json is of the algorithm 'ra-copy', but lamport declares 'lamport'" in err


@pytest.mark.parametrize("family", ["bees", "elves"])
def test_a_family_variant_by_file_is_simulated_checked_explored_and_audited_as_its_family(
    algos, family, capsys
):
    path = str(algos / f"my_{family}.py")
    small = ["--bees", "3"] if family == "bees" else ["--elves", "2", "--rounds", "1"]
    code, out, _ = run(capsys, "simulate", family, "-a", path, *small, "--trace", "t.jsonl")
    builtin = run(capsys, "simulate", family, *small)[1]
    assert code == 0 and out.replace("trace written to t.jsonl\n", "") == builtin
    first = json.loads(Path("t.jsonl").read_text().splitlines()[0])
    assert first["algorithm"] == f"my-{family}"
    code, out, _ = run(capsys, "verify", "t.jsonl")  # loaded in this process: its family's invariants
    assert code == 0 and out.startswith(f"my-{family}: SAFE")
    code, out, _ = run(capsys, "check", family, "-a", path, "--json", "--max-states", "200")
    assert code in (0, 3) and json.loads(out)["algorithm"] == path
    args = build_parser().parse_args(["explore", family, "-a", path, "--no-browser"])
    session = explore.build_session(args)
    assert session.config.algorithm == path and session.world.setup.algorithm == f"my-{family}"


# -- RabbitMQ: the participants reach the file ---------------------------------------------------------
def test_a_participant_loads_only_the_file_its_own_environment_names(algos, monkeypatch):
    ra = str(algos / "ra_copy.py")
    base = {"amqp_url": NOWHERE, "run_id": "r"}
    welcome = {"name": "node-1", "pid": 1, "algorithm": ra, "processes": 2, "options": {"requests": 1}}
    with pytest.raises(
        ConfigError, match="the monitor runs the file .*: name it in this participant's ALGORITHM"
    ):
        Participant("node", ParticipantSettings(**base))._welcome(dict(welcome))  # noqa: SLF001 - the welcome step alone, without a broker
    with pytest.raises(
        ConfigError, match="the monitor runs .*ra_copy.py, but this participant was started for lamport"
    ):
        Participant("node", ParticipantSettings(**base, algorithm="lamport"))._welcome(dict(welcome))  # noqa: SLF001 - the welcome step alone, without a broker
    with pytest.raises(ConfigError, match="does not exist"):  # loaded up front: a bad file is exit 2
        Participant("node", ParticipantSettings(**base, algorithm=str(algos / "gone.py")))
    started = Participant("node", ParticipantSettings(**base, algorithm=ra))
    started._welcome(dict(welcome))  # noqa: SLF001 - the welcome step alone, without a broker
    assert started.setup is not None and started.setup.algorithm == "ra-copy"


def test_a_file_may_bring_a_role_of_its_own(algos):
    worker = algos / "workers.py"
    worker.write_text(
        textwrap.dedent(
            """
            from dataclasses import replace
            from ra_copy import SPEC as BASE, make_setup as base


            def make_setup(processes, options, seed=0):
                setup = base(processes, options, seed)
                setup.algorithm = "workers"
                setup.names = {pid: f"worker-{pid}" for pid in setup.names}
                return setup


            SPEC = replace(BASE, name="workers", role="worker", make_setup=make_setup)
            """
        )
    )
    assert "worker" not in roles() and "worker" in roles(str(worker))


@pytest.mark.broker
@pytest.mark.parametrize("spawn", ["fork", "exec"])
def test_run_starts_a_file_algorithm_over_rabbitmq(algos, amqp_url, spawn, capfd, monkeypatch):
    """``mutexlab run``: the monitor and every participant (forked, or fresh interpreters that load
    the file themselves) run the user's file; its broken variant is flagged."""
    if spawn == "exec":
        monkeypatch.setenv("MUTEXLAB_SPAWN", "exec")
        # Fresh interpreters import this checkout's mutexlab (the sibling import needs nothing).
        here = str(Path(__file__).resolve().parents[1] / "shared")
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
    common = ["--amqp-url", amqp_url, "-N", "3", "--dwell", "0.02", "--stall-timeout", "5"]
    ra = str(algos / "ra_copy.py")
    code, out, _ = run(capfd, "run", "mutex", "-a", ra, *common, "--trace", "run.jsonl")
    assert code == 0, out
    assert "monitor: run run-" in out and "ra-copy: SAFE" in out and "final states: node-1=RELEASED" in out
    assert run(capfd, "verify", "run.jsonl", "-a", ra)[0] == 0
    code, out, _ = run(capfd, "run", "mutex", "-a", str(algos / "ra_greedy.py"), *common)
    assert code == 1 and "ra-greedy: VIOLATION" in out and "[capacity] cs (capacity 1)" in out
