"""``check --metrics``: exact worst and best cases over every interleaving (docs/check.md#metrics),
the runs reaching them as scenarios that replay, and broken variants whose figures move."""

from __future__ import annotations

import json

import pytest

from mutexlab.check import sampling
from mutexlab.check.engine import CheckConfig, build_model
from mutexlab.check.metrics import search_metrics
from mutexlab.check.witness import trace_figures
from mutexlab.explore.session import session_from_scenario
from mutexlab.sim.scripted import replay_scenario


def figures(algorithm: str, n: int, requests: int = 1) -> dict:
    model = build_model(CheckConfig(algorithm, n, {"requests": requests}, reductions=False))
    result = search_metrics(model)
    assert result.complete and result.defined
    return result.as_dict()


# (algorithm, N, requests) → messages per entry (min, max), its run average (min, max),
# synchronisation delay (longest chain, shortest chain), bypass — each argued in docs/check.md
FIGURES = {
    ("ricart-agrawala", 3, 1): ((4, 4), (4, 4), (2, 1), 2),  # 2(N−1) exactly
    ("ricart-agrawala", 2, 3): ((2, 2), (2, 2), (1, 1), 1),
    ("suzuki-kasami", 3, 1): ((0, 3), (2, 3), (1, 1), 2),  # 0 with the token here, else N
    ("raymond", 3, 1): ((0, 5), (2, 2.667), (2, 2), 2),
    ("maekawa", 3, 1): ((3, 8), (4, 5), (4, 2), 2),
    ("sanders", 2, 1): ((2, 3), (2, 2.5), (1, 1), 1),
    ("lamport", 2, 1): ((1, 4), (2, 3), (1, 1), 1),  # the run's average: 2(N−1) to 3(N−1)
}
# RA N=3 × 1 (43,139 worlds, about 1.3 CPU-s) for the full run only: its messages per entry are
# also test_json_and_witnesses_replay_to_their_figure's, in the quick subset.
QUICK_LEAVES_OUT = {"test_exact_figures_of_the_classic_algorithms[ricart-agrawala-3x1]"}


@pytest.mark.parametrize("key", FIGURES, ids=lambda k: f"{k[0]}-{k[1]}x{k[2]}")
def test_exact_figures_of_the_classic_algorithms(key):
    (lo, hi), (alo, ahi), (sync, shortest), bypass = FIGURES[key]
    got = figures(*key)
    assert got["messages_per_entry"] == {"min": lo, "max": hi}
    assert got["messages_per_entry_run_average"] == {"min": alo, "max": ahi}
    assert got["sync_delay"] == {"max": sync, "max_shortest_chain": shortest}
    assert got["bypass"] == {"max": bypass}


def test_an_extra_message_raises_the_fewest_messages_per_entry():
    # the token holder broadcasting its request anyway: 0 becomes N−1
    assert figures("suzuki-kasami", 3)["messages_per_entry"]["min"] == 0
    assert figures("mutexlab_broken.suzuki_kasami_loud", 3)["messages_per_entry"]["min"] == 2


def test_frozen_clocks_let_a_node_be_bypassed_more_than_once():
    assert figures("ricart-agrawala", 2, 3)["bypass"]["max"] == 1
    assert figures("mutexlab_broken.ricart_agrawala_frozen", 2, 3)["bypass"]["max"] == 2


BEES = {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 2}
ELVES = {"pins": 1, "poison": 2, "contracts": 2, "hamsters": [1, 2], "rounds": 1}  # check's defaults


def search(algorithm: str, n: int, options: dict, reductions: bool = True, setup=None):
    config = CheckConfig(algorithm, n, options, reductions=reductions, partial_order=False)
    result = search_metrics(build_model(config, setup))
    assert result.complete and result.defined
    return result


def kinds(result) -> dict:
    """resource kind → (messages min, max), (sync longest, shortest), bypass."""
    out = {}
    for kind, f in result.as_dict()["resources"].items():
        msg, sync = f["messages_per_entry"], f["sync_delay"]
        out[kind] = ((msg["min"], msg["max"]), (sync["max"], sync["max_shortest_chain"]), f["bypass"]["max"])
    return out


def test_exact_figures_of_the_bees():
    # two bees, one reed of two cocoons, one flower: the second bee waits for the first's reed
    # (REQreed, ACKreed, and the RELEASEreed of its death: 3; nothing once the other is gone: 0)
    assert kinds(search("bees", 2, BEES)) == {
        "reed": ((0, 3), (1, 1), 1),
        "flower": ((0, 3), (None, None), 0),
    }


def test_exact_figures_of_the_elves():
    # two elves, two contracts (1 and 2 hamsters), 1 pin, 2 poison: the pins are contended
    assert kinds(search("elves", 2, ELVES)) == {
        "contract": ((2, 2), (None, None), 1),
        "pins": ((2, 3), (1, 1), 1),
        "poison": ((4, 7), (None, None), 0),
    }


def test_a_loud_bee_pays_for_the_dead():
    from mutexlab_broken import recast
    from mutexlab_broken.bees_loud import LoudBee

    assert kinds(search("bees", 2, BEES))["reed"][0] == (0, 3)
    setup = recast(CheckConfig("bees", 2, BEES).setup(), LoudBee)
    assert kinds(search("bees", 2, BEES, setup=setup))["reed"][0] == (1, 3)


@pytest.mark.parametrize(
    "key",
    [*FIGURES, ("bees", 2, BEES), ("elves", 2, ELVES), ("elves", 2, {**ELVES, "contracts": 1})],
    ids=lambda k: f"{k[0]}-{k[1]}x{k[2]}",
)
def test_the_declared_reductions_keep_every_figure(key):
    algorithm, n, extra = key
    options = extra if isinstance(extra, dict) else {"requests": extra}
    reduced = search(algorithm, n, options)
    plain = search(algorithm, n, options, reductions=False)
    assert reduced.as_dict()["resources"] == plain.as_dict()["resources"]
    assert reduced.states <= plain.states


def test_a_wrongly_declared_reduction_moves_a_figure(monkeypatch):
    # the canonical key that forgets the deferred requests merges worlds whose futures differ:
    # the figures trust the declarations as the verdict does (--cross-check catches this one, and
    # check's sampling of the declarations, switched off here to show what it guards against)
    monkeypatch.setattr(sampling, "FULL", 0)
    monkeypatch.setattr(sampling, "STRIDE", 10**18)
    monkeypatch.setattr(sampling, "MAX_TWINS", 0)
    right = search("ricart-agrawala", 3, {"requests": 1})
    wrong = search("mutexlab_broken.ricart_agrawala_wrong_key", 3, {"requests": 1})
    assert "canonical snapshots" in wrong.reductions
    assert right.as_dict()["messages_per_entry"] == {"min": 4, "max": 4}
    assert wrong.as_dict()["messages_per_entry"] == {"min": 4, "max": 6}


def test_fingerprints_keep_every_figure_and_the_count_of_whole_worlds():
    # the figures' search keeps 64-bit fingerprints of its worlds (as the check), or whole worlds
    for algorithm, n, requests in (("lamport", 2, 2), ("raymond", 3, 1), ("ricart-agrawala", 2, 3)):
        model = build_model(CheckConfig(algorithm, n, {"requests": requests}, partial_order=False))
        whole, hashed = search_metrics(model, exact=True), search_metrics(model)
        assert whole.states == hashed.states and whole.transitions == hashed.transitions
        assert whole.as_dict()["resources"] == hashed.as_dict()["resources"]
        assert hashed.as_dict()["fingerprints"] and not whole.as_dict()["fingerprints"]
        assert 0 < hashed.collision_bound() < 1e-9 and whole.collision_bound() == 0


def test_a_key_that_forgets_the_histories_moves_the_figures(monkeypatch):
    # a broken store: the model's world alone as the key merges paths whose futures' charges
    # differ (which request a message in flight is charged to, which are open)
    from mutexlab.check import metrics

    right = figures("raymond", 3, 2)
    monkeypatch.setattr(metrics, "fingerprint", lambda v: hash(v[0]))
    wrong = figures("raymond", 3, 2)
    assert right["messages_per_entry"] == {"min": 0, "max": 6}
    assert wrong["states"] < right["states"] and wrong["messages_per_entry"] == {"min": 0, "max": 5}


def test_a_charge_that_ignores_who_awaits_a_message_moves_the_figures(monkeypatch):
    # a broken charge: a deferred REPLY sent at an exit charged to the exit, not to the request
    # it serves — Ricart–Agrawala's exact 2(N−1) per entry is lost
    from mutexlab.check.charges import Tracker

    assert figures("ricart-agrawala", 2, 3)["messages_per_entry"] == {"min": 2, "max": 2}
    monkeypatch.setattr(Tracker, "awaits", lambda *_: False)
    assert figures("ricart-agrawala", 2, 3)["messages_per_entry"] != {"min": 2, "max": 2}


def test_the_checks_own_model_gives_the_same_figures_without_its_ample_sets():
    # the figures' search reuses the check's model (its transitions are computed) but takes every
    # step of every world, never the partial-order reduction's ample sets
    model = build_model(CheckConfig("raymond", 4, {"requests": 1}))
    assert model.por is not None
    shared = search_metrics(model)
    own = search("raymond", 4, {"requests": 1})
    assert "partial-order reduction" not in shared.reductions
    assert shared.as_dict()["resources"] == own.as_dict()["resources"] and shared.states == own.states


def test_a_protocol_stating_no_requests_has_no_figures():
    from mutexlab_broken import recast

    from mutexlab.protocol import Protocol
    from mutexlab.protocols.bees import Bee

    class Silent(Bee):
        wants = Protocol.wants

    config = CheckConfig("bees", 2, BEES, partial_order=False)
    result = search_metrics(build_model(config, recast(config.setup(), Silent)))
    assert result.complete and not result.defined
    m = result.as_dict()
    assert "no figures are defined" in m["why"] and "messages_per_entry" not in m


@pytest.mark.parametrize("family", ["bees", "elves"])
def test_the_families_witnesses_replay(family, tmp_path, cli):
    out = cli("check", family, "--metrics", "--metrics-witness", "w", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)["metrics"]
    assert m["complete"] and "why" not in m and m["reductions"]
    assert m["witnesses"] and all(w["reproduced"][0] for w in m["witnesses"]), m["witnesses"]


def test_json_and_witnesses_replay_to_their_figure(tmp_path, cli):
    out = cli(
        "check",
        "mutex",
        "-a",
        "ricart-agrawala",
        "-N",
        "3",
        "--metrics",
        "--metrics-witness",
        "w",
        "--json",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)["metrics"]
    assert m["complete"] and m["messages_per_entry"] == {"min": 4, "max": 4}
    assert {w["figure"] for w in m["witnesses"]} == {"messages-max", "messages-min", "sync-max", "bypass-max"}
    for w in m["witnesses"]:
        assert w["reproduced"][0], w
        scenario = json.loads((tmp_path / w["file"]).read_text())
        replay = replay_scenario(scenario)
        assert not replay.refused and not replay.deadlock and replay.in_flight == 0
        if w["figure"] in ("sync-max", "bypass-max"):
            assert trace_figures(replay.events, "cs")[w["figure"]] == w["value"]
        session = session_from_scenario(tmp_path / w["file"])  # explore --scenario opens it
        session.jump(len(session.state()["redo"]))
        assert session.state()["findings"]["status"] == "end"
        played = cli("replay", w["file"], cwd=tmp_path)
        assert played.returncode == 0, played.stdout + played.stderr


def test_the_trace_measure_sees_a_longer_bypass():
    # the measure the witnesses are confirmed by is not blind: two entries by others while waiting
    events = [
        {"event": "request", "pid": "a", "resource": "cs"},
        {"event": "enter", "pid": "b", "resource": "cs"},
        {"event": "exit", "pid": "b", "resource": "cs"},
        {"event": "send", "pid": "b", "to": "c", "id": "b#1"},
        {"event": "recv", "pid": "c", "from": "b", "id": "b#1"},
        {"event": "enter", "pid": "c", "resource": "cs"},
        {"event": "exit", "pid": "c", "resource": "cs"},
        {"event": "enter", "pid": "a", "resource": "cs"},
    ]
    assert trace_figures(events, "cs") == {"bypass-max": 2, "sync-max": 1}


def test_metrics_refuse_what_they_cannot_measure(tmp_path, cli):
    out = cli("check", "mutex", "-a", "ricart-agrawala", "-N", "2", "--metrics", "--reorder", cwd=tmp_path)
    assert out.returncode == 2 and "--reorder" in out.stderr
    out = cli("check", "mutex", "-a", "ricart-agrawala", "-N", "2", "--metrics-witness", "w", cwd=tmp_path)
    assert out.returncode == 2 and "needs --metrics" in out.stderr
    assert not (tmp_path / "w").exists()


def test_a_state_limit_leaves_the_figures_unproven(tmp_path, cli):
    out = cli(
        "check",
        "mutex",
        "-a",
        "ricart-agrawala",
        "-N",
        "3",
        "--metrics",
        "--max-states",
        "2000",
        "--json",
        cwd=tmp_path,
    )
    # the plain check (1,690 worlds) completes; the figures' search (3,487) does not
    assert out.returncode == 3, out.stderr
    m = json.loads(out.stdout)["metrics"]
    assert not m["complete"] and "state limit" in m["stopped"] and "messages_per_entry" not in m


def test_the_visited_tables_next_doubling_is_foreseen(monkeypatch):
    """The figures' search looks at its memory every CHECK_EVERY worlds; the visited dict's next
    reallocation (a whole table at once) counts before it happens, not after the limit is passed."""
    from mutexlab.check import metrics

    grown: dict = {}
    foreseen = []
    for i in range(200_000):
        grown[i] = None
        foreseen.append(metrics.doubling_mb(grown, metrics.CHECK_EVERY))
    # just after a reallocation nothing is foreseen; within CHECK_EVERY of the next, its size is
    assert any(mb > 1.0 for mb in foreseen) and foreseen.count(0.0) > len(foreseen) // 2
    # and the search stops on it: a table foreseen past the limit ends it as a memory limit
    model = build_model(CheckConfig("raymond", 3, {"requests": 2}, partial_order=False))
    whole = search_metrics(model, max_memory=10_000)
    assert whole.stopped is None and whole.states > metrics.CHECK_EVERY
    monkeypatch.setattr(metrics, "doubling_mb", lambda known, every: 1e9)  # a table too big to come
    assert search_metrics(model, max_memory=10_000).stopped == "memory limit 10000 MB reached"
