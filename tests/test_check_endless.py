"""``mutexlab check mutex --endless``: every node requests forever, so starvation can be checked
without a variant that re-requests or freezes its clocks by hand; an endless workload whose
worlds are infinite is refused up front, saying why; a lasso found under clock-offset
normalisation replays (its loop comes back to the same world up to the clocks)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import broken
from test_check_lamport_reductions import BEFORE

from mutexlab.check import engine
from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.check.reductions import notes_of
from mutexlab.cli import main
from mutexlab.setups import ConfigError

NEWEST_FIRST = ["mutex", "-a", "mutexlab_broken.raymond_newest_first", "--endless"]


def run_json(argv, capsys) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_endless_ricart_agrawala_is_finite_under_its_clock_shift_and_passes():
    result, model = run_check(CheckConfig("ricart-agrawala", 2, {"requests": 0}, endless=True))
    assert result.verdict == "pass" and result.cycles and result.finals == 0  # nobody ever finishes
    assert result.states == 44
    why = {n.name: (n.applied, n.why) for n in notes_of(model)}
    assert why["clock-offset normalisation"][0] and why["canonical snapshots"][0]
    assert why["retired clocks"] == (False, why["send bound"][1]) and "--endless" in why["retired clocks"][1]
    assert why["partial-order reduction"][1].startswith("off with --endless")


@pytest.mark.parametrize(
    "algorithm, why",
    [
        ("maekawa", "does not apply (not declared by MaekawaNode)"),
        ("raymond", "does not apply (not declared by RaymondNode)"),
        # Lamport's clock shift alone (as before issue 41): declared, but an idle node's own
        # RELEASE entry keeps the smallest timestamp at 0
        ("lamport", "applies (declared by LamportNode) but a timestamp that stays put"),
    ],
)
def test_an_endless_workload_whose_clocks_grow_without_bound_is_refused_up_front(
    algorithm, why, capsys, monkeypatch
):
    if algorithm == "lamport":
        monkeypatch.setattr(engine, "declared_for", lambda solution: [BEFORE])
    assert main(["check", "mutex", "-a", algorithm, "-N", "2", "--endless"]) == 2
    err = capsys.readouterr().err
    assert "--endless: the worlds of this workload are infinite" in err and why in err, err
    with pytest.raises(ConfigError, match="infinite"):
        run_check(CheckConfig(algorithm, 2, {"requests": 0}, endless=True))


def test_endless_lamport_is_finite_under_its_canonical_key_and_passes():
    """Since issue 41 Lamport's key keeps of its array only what its future reads (no stale
    stamp), and its lowest live timestamp is the clock or the request: its worlds are finite."""
    result, model = run_check(CheckConfig("lamport", 2, {"requests": 0}, endless=True))
    assert result.verdict == "pass" and result.cycles and result.finals == 0
    assert result.states == 168
    applied = {n.name for n in notes_of(model) if n.applied}
    assert applied == {"canonical snapshots", "clock-offset normalisation"}


def test_endless_without_reductions_says_so_and_is_no_internal_error(capsys):
    """--no-reduction leaves the model no reduction notes: the refusal says why, exit 2 (was exit 4,
    a StopIteration looking for the clock note)."""
    assert main(["check", "mutex", "-a", "ricart-agrawala", "-N", "2", "--endless", "--no-reduction"]) == 2
    err = capsys.readouterr().err
    assert "infinite" in err and "does not apply (--no-reduction turns every reduction off)" in err, err
    assert "internal error" not in err


@pytest.mark.parametrize("nodes", [3, 4])
def test_starvation_under_an_endless_workload_is_a_lasso_that_replays(nodes, tmp_path, capsys):
    """Raymond serving its queue newest first: two nodes pass the token between them forever.
    Bounded workloads cannot show it (every run ends); the variant declares what makes its
    endless worlds finite (its clock is never read), and the replay's loop comes back to the
    same world up to what it declares."""
    scenario = tmp_path / "starve.json"
    code, out = run_json(
        ["check", *NEWEST_FIRST, "-N", str(nodes), "--counterexample", str(scenario)], capsys
    )
    finding = out["findings"][0]
    assert code == 1 and finding["kind"] == "liveness" and finding["cycle"], finding
    assert out["reproduced"][0] and "up to the clock offsets and canonical key" in out["reproduced"][1]
    written = json.loads(scenario.read_text())
    assert written["options"]["requests"] == 0 and written["loop"] == len(finding["steps"])
    code, replayed = run_json(["replay", str(scenario)], capsys)
    assert (
        code == 1
        and replayed["loop"]["closes"]
        and set(finding["processes"]) <= set(replayed["loop"]["waiting"])
    )
    bounded, _ = run_json(["check", *NEWEST_FIRST[:3], "-N", str(nodes), "--requests", "2"], capsys)
    assert bounded == 0  # with a budget every run ends: no starvation to see


def test_a_loop_that_comes_back_only_up_to_an_undeclared_offset_does_not_close(monkeypatch, tmp_path, capsys):
    """The replay accepts a loop up to the clocks only where the protocol declares it: the same
    scenario with the variant's declaration taken away comes back with higher clocks — not a
    cycle (exit 2)."""
    scenario = tmp_path / "starve.json"
    assert main(["check", *NEWEST_FIRST, "-N", "3", "--counterexample", str(scenario)]) == 1
    capsys.readouterr()
    variant = broken("raymond_newest_first")
    monkeypatch.setattr(variant, "SPEC", replace(variant.SPEC, reductions=None))
    assert main(["replay", str(scenario), "--json"]) == 2
    assert "not a cycle" in capsys.readouterr().err


def test_the_endless_option_is_shown_and_carried(capsys):
    code, out = run_json(["check", "mutex", "-a", "ricart-agrawala", "-N", "2", "--endless"], capsys)
    assert code == 0 and out["endless"] is True and out["options"]["requests"] == 0
    assert main(["check", "mutex", "-a", "ricart-agrawala", "-N", "2", "--endless"]) == 0
    assert "seed 0, endless requests —" in capsys.readouterr().out
