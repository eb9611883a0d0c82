"""``check --swarm``: randomised bitstate searches on every core for a time budget — never a
pass, and a violation found replays (docs/check.md#swarm)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mutexlab.check.engine import CheckConfig
from mutexlab.check.swarm import run_swarm
from mutexlab.protocols.ricart_agrawala import RicartAgrawalaNode
from mutexlab.sim.scripted import replay_scenario

TESTS = Path(__file__).parent  # the broken variants' package, mutexlab_broken, lives here


def test_a_module_that_cannot_be_imported_is_bad_input_before_any_worker_starts(tmp_path, cli):
    out = cli(
        "check", "mutex", "-a", "no_such_module.variant", "-N", "3", "--swarm", "--time", "5", cwd=tmp_path
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert "no_such_module" in out.stderr and "TOOL ERROR" not in out.stdout


def test_a_broken_variant_is_found_and_its_counterexample_replays(tmp_path, cli):
    out = cli(
        "check", "mutex", "-a", "mutexlab_broken.ricart_agrawala_greedy_quiet", "-N", "3", "--swarm", "--time",
        "20", "--workers", "2", "--counterexample", "cex.json", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    s = json.loads(out.stdout)
    assert s["verdict"] == "violation" and s["findings"][0]["kind"] == "capacity"
    assert s["reproduced"][0] is True
    replay = replay_scenario(json.loads((tmp_path / "cex.json").read_text()))
    assert replay.entered  # the scenario plays: both enter
    played = cli("replay", "cex.json", cwd=tmp_path)
    assert played.returncode == 1 and "cs" in played.stdout


def test_nothing_found_is_never_a_pass(tmp_path, cli):
    # the shortest budget: every second of it costs a second of CPU per worker
    out = cli(
        "check",
        "mutex",
        "-a",
        "ricart-agrawala",
        "-N",
        "2",
        "--swarm",
        "--time",
        "1",
        "--workers",
        "2",
        cwd=tmp_path,
    )
    assert out.returncode == 5, out.stdout + out.stderr
    assert "NO VIOLATION FOUND in" in out.stdout and "nothing is proven" in out.stdout
    assert "PASS" not in out.stdout


def test_a_small_space_is_searched_again_and_again_until_the_budget():
    # the space of RA N=2 is tiny: each worker ends its search and starts a new one, new seed
    result = run_swarm(CheckConfig("ricart-agrawala", 2, {"requests": 1}), 0.5, workers=1)
    assert result.finding is None and result.searches >= 2 and result.finished >= 2
    assert result.seconds >= 0.5


def test_a_deadlock_is_found_too():
    result = run_swarm(
        CheckConfig("mutexlab_broken.ricart_agrawala_forgetful", 3, {"requests": 1}), 20, workers=2
    )
    assert result.finding is not None and result.finding["kind"] == "deadlock"
    assert result.scenario is not None and replay_scenario(result.scenario).deadlock


def test_swarm_flags_are_checked(tmp_path, cli):
    out = cli("check", "mutex", "-a", "ricart-agrawala", "-N", "2", "--swarm", "--metrics", cwd=tmp_path)
    assert out.returncode == 2 and "--metrics" in out.stderr
    out = cli("check", "mutex", "-a", "ricart-agrawala", "-N", "2", "--workers", "2", cwd=tmp_path)
    assert out.returncode == 2 and "--workers needs --swarm" in out.stderr


def test_a_huge_workers_without_swarm_names_the_missing_swarm_first(tmp_path, cli):
    """Both are wrong, exit 2 either way; the first problem is that no swarm was asked for."""
    argv = ("check", "mutex", "-a", "ricart-agrawala", "-N", "2", "--workers", "1000000")
    out = cli(*argv, cwd=tmp_path)
    assert out.returncode == 2 and "--workers needs --swarm" in out.stderr, out.stderr
    assert "per core" not in out.stderr
    out = cli(*argv, "--swarm", cwd=tmp_path)
    assert out.returncode == 2 and "--workers 1,000,000: at most" in out.stderr, out.stderr


@pytest.mark.parametrize(
    "variant, n, requests, kind",
    [
        # comparing stamps as text deadlocks once clocks reach two digits: a deep run
        ("mutexlab_broken.lamport_text_stamps", 3, 3, "deadlock"),
        # a second request before the first one's delivery: a choice depth-first order takes last
        ("mutexlab_broken.ricart_agrawala_assumes_alone", 3, 2, "capacity"),
    ],
)
def test_the_swarm_finds_what_a_bounded_exhaustive_search_does_not(variant, n, requests, kind):
    from mutexlab.check.engine import run_check

    config = CheckConfig(variant, n, {"requests": requests})
    plain, _ = run_check(replace(config, max_states=20_000))
    assert plain.verdict == "incomplete" and not plain.findings
    result = run_swarm(config, 60, workers=2)
    assert result.finding is not None and result.finding["kind"] == kind
    assert result.scenario is not None
    replay = replay_scenario(result.scenario)
    assert replay.deadlock if kind == "deadlock" else replay.entered


class Crashing(RicartAgrawalaNode):
    def snapshot(self):  # read by the search, outside any handler: once past the start
        if self.state != "RELEASED":
            raise RuntimeError("a bug outside the protocol's handlers, not a refusal")
        return super().snapshot()


class Raising(RicartAgrawalaNode):
    def on_local(self, action: str) -> list:
        raise RuntimeError("a bug of the protocol's handler")


def test_a_worker_that_fails_makes_a_tool_error_not_a_pass(monkeypatch):
    from mutexlab.check import swarm
    from mutexlab.protocols.registry import build_setup
    from mutexlab.setups import ConfigError

    config = CheckConfig("ricart-agrawala", 2, {"requests": 1})
    setup = build_setup("ricart-agrawala", 2, {"requests": 1}, 0)
    with monkeypatch.context() as patched:  # mutexlab's own code fails in the (forked) workers
        patched.setattr(swarm, "_work", lambda *args: (_ for _ in ()).throw(RuntimeError("mutexlab's bug")))
        result = run_swarm(config, 5, workers=2, setup=setup)
    assert result.finding is None and result.verdict == "tool-error"
    assert "RuntimeError" in result.errors[0]
    # a snapshot() that raises is the algorithm's code: its state cannot be kept, exit 2, no verdict
    setup.protocols[1].__class__ = Crashing
    with pytest.raises(ConfigError, match="cannot keep the state of node-1 .*RuntimeError: a bug outside"):
        run_swarm(config, 5, workers=2, setup=setup)
    # a handler that raises is the algorithm's bug: a finding (tests/test_handler_raises.py)
    setup = build_setup("ricart-agrawala", 2, {"requests": 1}, 0)
    setup.protocols[1].__class__ = Raising
    result = run_swarm(config, 5, workers=2, setup=setup)
    assert result.verdict != "tool-error" and result.finding is not None, result
    assert result.finding["kind"] == "error" and "raised RuntimeError" in result.finding["message"]


def test_every_worker_still_searching_when_one_finds_is_counted():
    # the finder's report ends the swarm: the others stop and report their worlds too
    result = run_swarm(
        CheckConfig("mutexlab_broken.ricart_agrawala_greedy_quiet", 3, {"requests": 1}), 20, workers=2
    )
    assert result.finding is not None and result.stopped == 0
    assert len(result.per_worker) == 2 and sum(result.per_worker) == result.states


@pytest.mark.slow  # waits out the workers' grace (lowered to 5 s here) on purpose
def test_a_worker_that_does_not_report_in_time_is_counted_as_last_published(monkeypatch):
    import time

    from mutexlab.check import swarm

    real = swarm._search  # noqa: SLF001 - the worker loop is what this test replaces

    def stuck_after_one_search(model, checker, rng, deadline, bits, stats):
        got = real(model, checker, rng, deadline, bits, stats)
        if stats.slot == 1:  # the second worker: one search, published, then busy past the end
            stats.publish()
            time.sleep(60)
        return got

    monkeypatch.setattr(swarm, "_search", stuck_after_one_search)  # inherited by the forked workers
    monkeypatch.setattr(swarm, "GRACE", 5.0)  # the other worker reports within it on a loaded CI (1 s: not)
    result = run_swarm(CheckConfig("ricart-agrawala", 2, {"requests": 1}), 2, workers=2)
    assert result.finding is None and not result.errors
    assert result.stopped == 1 and result.per_worker[1] > 0  # its worlds are in the count
    assert sum(result.per_worker) == result.states
