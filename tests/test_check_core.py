"""The search core over integer worlds (check/core.py): the compiled core (check/_core.c), its
pure-Python twin and the model's own depth-first search give the same counts, verdicts and
scenarios — on correct protocols of several sizes, and on deliberately broken variants, so that
every kind of finding (capacity, refused input, deadlock, invariant, liveness) is found alike,
without reductions and with them (partial-order reduction, its restart on a reduced cycle, the
clock shift and retired clocks, the sampler's worlds and its refusals: check/core_reduce.py)."""

from __future__ import annotations

import importlib.util
import random
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import broken, missing
from test_check_lamport_reductions import BEFORE

from mutexlab.check import core, core_reduce, engine
from mutexlab.check.engine import CheckConfig, build_model, run_check
from mutexlab.check.search import Search
from mutexlab.protocols import ricart_agrawala_reductions

# (algorithm, processes, options, endless workload, the finding expected or None)
CASES = [
    ("ricart-agrawala", 2, {"requests": 2}, False, None),
    ("ricart-agrawala", 3, {"requests": 1}, False, None),
    ("maekawa", 3, {"requests": 1}, False, None),
    ("raymond", 3, {"requests": 2}, False, None),
    ("suzuki-kasami", 3, {"requests": 1}, False, None),
    ("mutexlab_broken.ricart_agrawala_eager", 3, {"requests": 2}, False, "capacity"),
    ("mutexlab_broken.ricart_agrawala_rejecting", 3, {"requests": 2}, False, "error"),
    ("mutexlab_broken.ricart_agrawala_forgetful", 3, {"requests": 2}, False, "deadlock"),
    ("mutexlab_broken.starving", 2, {"requests": 1}, False, "liveness"),
    ("mutexlab_broken.starving", 3, {"requests": 1}, False, "liveness"),
]
BEES_EXTRA_EGG = ("mutexlab_broken.bees_extra_egg", 2, {}, False, "invariant")
# the declarations the cases above do not reach: Lamport's retired clocks that keep no request
# stamp, the bees' send bound and invariant reads, the elves' dead messages and a send bound that
# reads its receiver (clock offsets alone: test_clock_offsets_alone_run_alike_on_the_cores)
DECLARED = [
    ("lamport", 2, {"requests": 2}, False, None),
    ("bees", 2, {"flowers": 1, "reeds": 1, "eggs": 2, "cocoons": 4}, False, None),
    ("elves", 2, {"pins": 1, "poison": 2, "contracts": 2, "hamsters": [1, 2], "rounds": 1}, False, None),
]


def outcome(result, model=None) -> tuple:
    """Everything a user sees of a result but its times: counts, verdict, each finding whole;
    with the model, the reductions' notes, the worlds reduced and the worlds the sampler saw."""
    findings = [(f.kind, f.message, f.path, f.cycle, f.processes, f.resource) for f in result.findings]
    counts = (result.states, result.transitions, result.depth, result.finals, result.cycles)
    seen = None
    if model is not None:
        por, sampler = model.por, model.sampler
        notes = [n.as_dict() for n in model.notes]
        seen = (notes, por and por.reduced, sampler and (sampler.calls, sampler.samples), len(model.objects))
    return counts, result.complete, result.verdict, result.stopped, findings, seen


def check_on(which: str | None, case, monkeypatch, reductions: bool = False, **kwargs) -> tuple:
    """The check of ``case`` on core ``which`` (None: the model's own search, the core off)."""
    algorithm, n, options, endless, _ = case
    if which is None:
        monkeypatch.setattr(core, "eligible", lambda search: False)
    else:
        monkeypatch.setattr(core, "core_name", lambda: which)
    config = CheckConfig(algorithm, n, options, reductions=reductions, endless=endless, **kwargs)
    result, model = run_check(config)
    monkeypatch.undo()
    return outcome(result, model)


def compiled_or_missing() -> None:
    if core.CCore is None:
        missing("the compiled search core (pip install -e . builds check/_core.c with gcc)")


@pytest.mark.parametrize("reductions", [False, True], ids=["plain", "reduced"])
@pytest.mark.parametrize("case", CASES + [BEES_EXTRA_EGG], ids=lambda c: f"{c[0]}-{c[1]}")
def test_the_twin_and_the_compiled_core_find_what_the_model_search_finds(case, reductions, monkeypatch):
    compiled_or_missing()
    base = check_on(None, case, monkeypatch, reductions)
    twin = check_on("python", case, monkeypatch, reductions)
    compiled = check_on("compiled", case, monkeypatch, reductions)
    assert twin == base
    assert compiled == base
    kind = case[4]
    if kind is None:
        assert base[2] == "pass" and base[0][0] > 50, base[:3]
    else:
        assert [f[0] for f in base[4]] == [kind], base[4]


@pytest.mark.parametrize("case", DECLARED, ids=lambda c: f"{c[0]}-{c[1]}")
def test_each_declared_reduction_runs_alike_on_the_cores(case, monkeypatch):
    compiled_or_missing()
    runs = [check_on(which, case, monkeypatch, True) for which in (None, "python", "compiled")]
    assert runs[0] == runs[1] == runs[2]
    assert runs[0][2] == "pass" and "clock-offset normalisation" in str(runs[0][5][0])


def test_clock_offsets_alone_run_alike_on_the_cores(monkeypatch):
    """Lamport's clock shift without the declarations it added in issue 41 (as it was before)."""
    compiled_or_missing()
    runs = []
    for which in (None, "python", "compiled"):
        monkeypatch.setattr(engine, "declared_for", lambda solution: [BEFORE])
        runs.append(check_on(which, DECLARED[0], monkeypatch, True))
    assert runs[0] == runs[1] == runs[2]
    assert runs[0][2] == "pass" and runs[0][0][0] == 467, runs[0][:3]  # Lamport N=2 × 2


@pytest.mark.parametrize("reductions", [False, True], ids=["plain", "reduced"])
def test_the_state_limit_stops_each_core_at_the_same_world(reductions, monkeypatch):
    compiled_or_missing()
    case = CASES[1] if not reductions else ("ricart-agrawala", 3, {"requests": 2}, False, None)
    runs = [
        check_on(which, case, monkeypatch, reductions, max_states=5000)
        for which in (None, "python", "compiled")
    ]
    assert runs[0] == runs[1] == runs[2]
    assert runs[0][0][0] == 5000 and runs[0][2] == "incomplete", runs[0]


def test_a_refusal_by_the_sampler_ends_each_core_alike(monkeypatch):
    """A variant that keeps Ricart–Agrawala's declaration but stamps otherwise: the sampler
    refuses the clock shift in the middle of the core's search, which starts again without it."""
    compiled_or_missing()
    cls = broken("ricart_agrawala_text_stamps").TextStampNode
    declared = [ricart_agrawala_reductions.REDUCTIONS.only(cls)]
    case = (
        "mutexlab_broken.ricart_agrawala_text_stamps",
        3,
        {"requests": 1, "initial_clocks": {"1": 8, "2": 8, "3": 8}},
        False,
        None,
    )
    runs = []
    for which in (None, "python", "compiled"):
        monkeypatch.setattr(engine, "declared_for", lambda algorithm: declared)
        runs.append(check_on(which, case, monkeypatch, True))
    assert runs[0] == runs[1] == runs[2]
    notes = {n["reduction"]: n for n in runs[0][5][0]}
    assert notes["clock-offset normalisation"]["why"].startswith("refused"), notes
    assert runs[0][2] == "violation"


def test_a_broken_ample_set_in_the_core_is_caught(monkeypatch):
    """The twin's persistent sets made unsound (a process's closure is the process alone: steps
    of the processes that may still send to it are dropped): the differential test tells."""
    compiled_or_missing()
    case = CASES[1]
    base = check_on(None, case, monkeypatch, True)

    def alone(self, world, p, mask):
        self.spent += 1
        return 1 << p

    monkeypatch.setattr(core_reduce.Reducer, "closure", alone)
    monkeypatch.setattr(core, "core_name", lambda: "python")
    result, model = run_check(CheckConfig(*case[:3]))
    assert outcome(result, model) != base
    assert result.states < base[0][0], (result.states, base[0][0])


def test_the_compiled_fingerprint_is_pythons_hash_of_the_world():
    compiled_or_missing()
    model = build_model(CheckConfig("ricart-agrawala", 3, {"requests": 1}, reductions=False))
    search = Search(model)
    probe = core.CCore(core.Tables(search), model.n, tuple(model.link_to), False)
    rng = random.Random(7)
    width = 2 * model.n + model.L + 1
    worlds = [
        tuple(rng.randrange(0, 1 << rng.choice((3, 16, 31))) for _ in range(width)) for _ in range(2000)
    ]
    assert [probe.fingerprint(w) for w in worlds] == [hash(w) for w in worlds]


def broken_build(tmp_path: Path, flag: str):
    """The compiled core built with ``-D{flag}`` (a deliberate break), imported."""
    compiled_or_missing()
    cc = shutil.which("cc") or missing("a C compiler (cc), to build a broken compiled core")
    here = Path(core.__file__).parent
    out = tmp_path / f"_core{sysconfig.get_config_var('EXT_SUFFIX')}"
    include = sysconfig.get_paths()["include"]
    flags = ["-O1", "-shared", "-fPIC", f"-D{flag}", f"-I{include}"]
    subprocess.run([cc, *flags, str(here / "_core.c"), "-o", str(out)], check=True, timeout=300)
    spec = importlib.util.spec_from_file_location("_core", out)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_compiled_tables_hold_what_was_put_in_them(tmp_path):
    """The visited set (fingerprints alone, grown a 256th at a time) answers every key put in and
    none left out, and the Tarjan-stack map still finds every key after half of them were
    deleted; a build whose deletion leaves a hole in a probe chain
    (``MUTEXLAB_CORE_BROKEN_DELETE``) fails the same self-test. The same with the visited set's
    parts compact (6-byte slots of quotient and distance) from 64 or 256 slots on — in a search,
    from 2^18 slots a part, past 50 million worlds — and a build that forgets a compact slot's
    distance when its part grows (``MUTEXLAB_CORE_BROKEN_COMPACT``) fails that one."""
    compiled_or_missing()
    from mutexlab.check import _core

    assert all(_core.tables_selftest(n, seed) for n in (10, 1000, 200_000) for seed in (1, 2))
    assert all(
        _core.tables_selftest(n, seed, small) for n in (10, 200_000) for seed in (1, 2) for small in (64, 256)
    )
    holed = broken_build(tmp_path, "MUTEXLAB_CORE_BROKEN_DELETE")
    assert not all(holed.tables_selftest(200_000, seed) for seed in (1, 2))
    (tmp_path / "compact").mkdir()
    forgetful = broken_build(tmp_path / "compact", "MUTEXLAB_CORE_BROKEN_COMPACT")
    assert all(forgetful.tables_selftest(200_000, seed) for seed in (1, 2))  # never compact there
    assert not any(forgetful.tables_selftest(200_000, seed, 256) for seed in (1, 2))
    with pytest.raises(ValueError, match="power of two"):
        _core.tables_selftest(10, 1, 100)


def test_a_broken_ample_set_in_the_compiled_core_is_caught(tmp_path, monkeypatch):
    """The compiled core built with its closures cut to the process alone
    (``MUTEXLAB_CORE_BROKEN_CLOSURE``): the final worlds it loses show, and it parts from the
    model's own search."""
    broken_core = broken_build(tmp_path, "MUTEXLAB_CORE_BROKEN_CLOSURE")
    case = ("maekawa", 3, {"requests": 1}, False, None)
    base = check_on(None, case, monkeypatch, True)
    monkeypatch.setattr(core, "CCore", broken_core.Core)
    cut = check_on("compiled", case, monkeypatch, True)
    assert cut != base
    assert cut[0][3] < base[0][3], (cut[0], base[0])  # fewer final worlds


def test_the_core_serves_only_searches_whose_steps_it_remembers():
    """The plain search and the reduced one run on the core; reordering links, --exact, a
    world-level normalisation other than the clock shift, or a partial-order reduction whose
    closures the model has cached already keep the model's own search."""
    plain = build_model(CheckConfig("ricart-agrawala", 3, {"requests": 1}, reductions=False))
    reduced = build_model(CheckConfig("ricart-agrawala", 3, {"requests": 1}))
    reorder = build_model(CheckConfig("ricart-agrawala", 3, {"requests": 1}, reductions=False, reorder=True))
    assert core.eligible(Search(plain))
    assert not core.eligible(Search(plain, exact=True))
    assert reduced.por is not None and reduced.normalise is not None and core.eligible(Search(reduced))
    assert not core.eligible(Search(reorder))
    other = build_model(CheckConfig("ricart-agrawala", 3, {"requests": 1}, reductions=False))
    other.normalise = lambda world: world
    assert not core.eligible(Search(other))
    bare = build_model(CheckConfig("maekawa", 3, {"requests": 1}))  # no send bound: closures cached
    assert bare.por is not None and core.eligible(Search(bare))
    world, _ = bare.initial()
    bare.por.ample(world, bare.steps(world))
    assert bare.por.closures_used() and not core.eligible(Search(bare))


def check_in_a_child(build: str) -> subprocess.CompletedProcess:
    """RA 3 x 1 checked in a fresh interpreter whose ``mutexlab.check._core`` is ``build`` (an
    expression: None for no build); it prints the core used, the verdict, states, transitions."""
    code = (
        f"import sys, types; sys.modules['mutexlab.check._core'] = {build}\n"
        "from mutexlab.check import core\n"
        "from mutexlab.check.engine import CheckConfig, run_check\n"
        "result, _ = run_check(CheckConfig('ricart-agrawala', 3, {'requests': 1}, reductions=False))\n"
        "print(core.CCore, core.core_name(), result.verdict, result.states, result.transitions)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def test_without_the_compiled_core_check_runs_on_the_twin():
    """A build without a C compiler has no ``_core``: the package imports and checks all the same."""
    done = check_in_a_child("None")
    assert done.stdout.split() == ["None", "python", "pass", "13474", "25492"]


def test_a_compiled_core_older_than_its_source_is_not_used():
    """A `git pull` without `pip install -e .` leaves a build of an older ``_core.c``: its calling
    convention (``INTERFACE``) differs, so the twin runs, with a warning saying how to rebuild."""
    old = "types.SimpleNamespace(Core=object, __file__='old.so')"  # no INTERFACE
    done = check_in_a_child(old)
    assert done.stdout.split() == ["None", "python", "pass", "13474", "25492"]
    assert "older than its source" in done.stderr and "pip install -e ." in done.stderr
