"""``mutexlab simulate mutex``, ``mutexlab compare``, ``replay`` of the classic scenarios, and the
metrics they print."""

import json
import re
from pathlib import Path

import pytest

from mutexlab.cli import main
from mutexlab.metrics import literature, mean_message_delay, measure
from mutexlab.protocols import suzuki_kasami as sk
from mutexlab.protocols.registry import CLASSIC, SPECS, make_setup
from mutexlab.runs import run_classic
from mutexlab.sim import workload
from mutexlab.trace import read_trace

SCENARIOS = Path(__file__).resolve().parents[1] / "examples" / "scenarios"
MINE = ["sanders", "suzuki-kasami", "raymond"]


def _json(capsys, argv):
    code = main(argv)
    out = capsys.readouterr().out
    return code, json.loads(out)


# -- simulate mutex ------------------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", MINE + ["ricart-agrawala"])
def test_simulate_mutex_serves_every_request_and_prints_the_figures(capsys, algorithm):
    code, out = _json(
        capsys,
        [
            "simulate",
            "mutex",
            "--algorithm",
            algorithm,
            "--nodes",
            "5",
            "--requests",
            "3",
            "--seed",
            "4",
            "--json",
        ],
    )
    assert code == 0
    assert out["entries"] == out["requests"] == 15 and out["audit"]["safe"]
    assert out["total_messages"] == sum(out["messages"].values())
    assert out["messages_per_entry"] == pytest.approx(out["total_messages"] / 15, abs=1e-3)
    assert out["literature"]["messages"]["text"] == literature(algorithm)["messages"].text
    assert out["sync_samples"] > 0 and out["response_samples"] == 15
    if algorithm == "ricart-agrawala":
        assert out["messages_per_entry"] == 8  # exactly 2(N−1)


def test_text_output_and_trace_file(tmp_path, capsys):
    trace = tmp_path / "sk.jsonl"
    code = main(
        [
            "simulate",
            "mutex",
            "-a",
            "suzuki-kasami",
            "-N",
            "4",
            "-M",
            "2",
            "--seed",
            "1",
            "--trace",
            str(trace),
            "-o",
            "token_holder=3",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "messages per entry:" in out and "literature: 0 or N = 0–4" in out and "audit: SAFE" in out
    events = read_trace(trace)
    assert events[0]["event"] == "run" and events[0]["params"]["token_holder"] == 3
    # The printed figures are the metrics of the written trace.
    m = measure(events)
    assert f"messages per entry: {m.per_entry:.2f}" in out


def test_same_seed_same_run_and_same_workload_across_algorithms(capsys):
    argv = ["simulate", "mutex", "-a", "raymond", "-N", "6", "-M", "2", "--seed", "9", "--json"]
    assert _json(capsys, argv)[1] == _json(capsys, argv)[1]
    # Think and cs times come from per-node streams independent of the algorithm's messages:
    # every node stays inside and thinks for the same durations under both algorithms.
    runs = {a: run_classic(a, 4, 3, 9) for a in ("raymond", "suzuki-kasami")}

    def dwells(run, pid):
        times = [
            (e["event"], e["t"])
            for e in run.events
            if e["pid"] == pid and e["event"] in ("enter", "exit", "request")
        ]
        inside = [round(b[1] - a[1], 9) for a, b in zip(times, times[1:]) if a[0] == "enter"]
        thinking = [round(b[1] - a[1], 9) for a, b in zip(times, times[1:]) if a[0] == "exit"]
        return inside, thinking

    for pid in ("node-1", "node-2", "node-3", "node-4"):
        assert dwells(runs["raymond"], pid) == dwells(runs["suzuki-kasami"], pid)
    assert runs["raymond"].metrics.total_messages != runs["suzuki-kasami"].metrics.total_messages


def test_options_file_and_repeated_options(tmp_path, capsys):
    options = tmp_path / "tree.json"
    options.write_text(json.dumps({"parents": {"2": 1, "3": 2, "4": 3}}))
    code, out = _json(
        capsys,
        [
            "simulate",
            "mutex",
            "-a",
            "raymond",
            "-N",
            "4",
            "-M",
            "1",
            "--options",
            str(options),
            "--option",
            "token_holder=4",
            "--json",
        ],
    )
    assert (
        code == 0
        and out["params"]["token_holder"] == 4
        and out["params"]["parents"] == {"2": 1, "3": 2, "4": 3}
    )
    sets = {
        "request_sets": {"1": [1, 2, 3], "2": [1, 2, 3], "3": [2, 3]},
        "inform_sets": {"1": [1, 3], "2": [2], "3": [3]},
    }
    code, out = _json(
        capsys,
        [
            "simulate",
            "mutex",
            "-a",
            "sanders",
            "-N",
            "3",
            "-M",
            "2",
            "-o",
            "request_sets=" + json.dumps(sets["request_sets"]),
            "-o",
            "inform_sets=" + json.dumps(sets["inform_sets"]),
            "--json",
        ],
    )
    assert code == 0 and out["params"]["inform_sets"] == sets["inform_sets"]


@pytest.mark.parametrize(
    "argv, words",
    [
        (["-a", "raymond", "-N", "3", "-o", 'parents={"2": 3, "3": 2}'], "not a tree"),
        (["-a", "suzuki-kasami", "-N", "3", "-o", "token_holder=7"], "token_holder"),
        (
            ["-a", "sanders", "-N", "3", "-o", 'request_sets={"1": [1], "2": [2], "3": [3]}'],
            "processes 1 and 2",
        ),
        (["-a", "raymond", "-N", "3", "-o", 'colour="red"'], "does not take option(s) colour"),
        (["-a", "raymond", "-N", "3", "-o", "requests=4"], "--requests"),
        (["-a", "raymond", "-N", "3", "--options", "/nonexistent/x.json"], "cannot read options file"),
    ],
)
def test_bad_options_exit_2_with_a_clear_message(capsys, argv, words):
    assert main(["simulate", "mutex"] + argv) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, words",
    [
        (["-a", "dekker", "-N", "3"], "invalid choice: 'dekker'"),
        (["-a", "raymond", "-N", "0"], "must be at least 1"),
        (["-a", "raymond", "-N", "three"], "not a whole number"),
        (["-a", "raymond"], "--nodes"),
        (["-a", "raymond", "-N", "3", "-o", "token_holder"], "expected key=JSON"),
        (["-a", "raymond", "-N", "3", "--delay", "gauss"], "invalid choice"),
        (["-a", "raymond", "-N", "3", "--think", "-1"], "must be ≥ 0"),
    ],
)
def test_bad_arguments_exit_2(capsys, argv, words):
    with pytest.raises(SystemExit) as stop:
        main(["simulate", "mutex"] + argv)
    assert stop.value.code == 2
    assert words in capsys.readouterr().err


def test_options_file_that_is_not_an_object(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    assert main(["simulate", "mutex", "-a", "raymond", "-N", "3", "--options", str(bad)]) == 2
    assert "must hold a JSON object" in capsys.readouterr().err


def test_a_broken_algorithm_exits_1_with_the_violation(monkeypatch, capsys):
    from mutexlab_broken.suzuki_kasami_variants import Generous

    def broken(name, n, options, seed):
        setup = make_setup("suzuki-kasami", n, options, seed)
        setup.protocols = {p: Generous(p, n, p == 1, options["requests"]) for p in range(1, n + 1)}
        return setup

    monkeypatch.setattr(workload, "build_setup", broken)
    caught = next(
        (
            seed
            for seed in range(10)
            if main(["simulate", "mutex", "-a", "suzuki-kasami", "-N", "4", "-M", "3", "--seed", str(seed)])
            == 1
        ),
        None,
    )
    out = capsys.readouterr().out
    assert caught is not None and "VIOLATION" in out and "cs (capacity 1)" in out


def test_a_stalled_run_exits_3_naming_who_waits(monkeypatch, capsys):
    from mutexlab_broken.sanders_variants import NotesOnly

    from mutexlab.protocols import sanders

    def literal(name, n, options, seed):
        setup = make_setup("sanders", n, options, seed)
        setup.protocols = {
            i: NotesOnly(i, n, set(range(1, n + 1)), {i}, {i}, options["requests"]) for i in range(1, n + 1)
        }
        return setup

    assert sanders  # the real module stays untouched
    monkeypatch.setattr(workload, "build_setup", literal)
    codes = [
        main(["simulate", "mutex", "-a", "sanders", "-N", "4", "-M", "3", "--seed", str(s), "--think", "0.1"])
        for s in range(5)
    ]
    out = capsys.readouterr().out
    # Stalled without a safety violation: 3 (INCOMPLETE), never 1 (VIOLATION).
    assert 3 in codes and 1 not in codes and "STALLED — stalled:" in out
    assert "audit: INCOMPLETE" in out and "audit: VIOLATION" not in out
    assert re.search(r"node-\d \(\w+\) waits for cs( \(held by [^)]*\))?: GRANT from node-\d", out)


# -- compare -------------------------------------------------------------------------------------
def test_compare_runs_every_available_algorithm_on_one_table(capsys):
    code, out = _json(capsys, ["compare", "--nodes", "4", "--requests", "2", "--seed", "3", "--json"])
    assert code == 0
    rows = {r["algorithm"]: r for r in out["runs"]}
    assert list(rows) == CLASSIC
    for name in MINE + ["ricart-agrawala"]:
        assert rows[name]["verdict"] == "ok" and rows[name]["entries"] == 8
    assert rows["ricart-agrawala"]["messages_per_entry"] == 6
    code = main(["compare", "-N", "3", "-M", "1", "--algorithms", "raymond,suzuki-kasami"])
    text = capsys.readouterr().out
    assert code == 0 and "raymond" in text and "O(log N)" in text and "lamport" not in text


def test_compare_refuses_unknown_algorithms(capsys):
    assert main(["compare", "-N", "3", "--algorithms", "raymond,dekker"]) == 2
    assert "unknown algorithm(s) dekker" in capsys.readouterr().err


# -- replay of the scenarios ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, order",
    [
        ("sanders-notes", ["node-3", "node-1"]),
        ("suzuki-kasami-notes", ["node-1", "node-3"]),
        ("raymond-tree", ["node-3", "node-4", "node-5"]),
    ],
)
def test_replay_of_the_scenarios(capsys, tmp_path, name, order):
    code, out = _json(
        capsys, ["replay", str(SCENARIOS / f"{name}.json"), "--json", "--trace", str(tmp_path / "t.jsonl")]
    )
    assert code == 0 and out["safe"] and out["entered"] == order and out["in_flight"] == 0
    assert set(out["states"].values()) == {"RELEASED"}


def test_replay_of_a_scenario_with_bad_options_exits_2(capsys, tmp_path):
    scenario = json.loads((SCENARIOS / "suzuki-kasami-notes.json").read_text())
    scenario["options"]["token_holder"] = 5
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(scenario))
    assert main(["replay", str(path)]) == 2
    assert "token_holder" in capsys.readouterr().err


# -- the metrics on hand-made traces -------------------------------------------------------------
def _ev(kind, pid, t, **extra):
    return {"event": kind, "pid": pid, "t": t, "vc": {}, **extra}


def test_metrics_response_time_sync_delay_and_unit():
    events = [
        _ev("request", "a", 0.0, resource="cs"),
        _ev("send", "a", 0.0, type="REQ", id="a#1", to="b"),
        _ev("recv", "b", 2.0, type="REQ", id="a#1", **{"from": "a"}),
        _ev("enter", "a", 1.0, resource="cs"),
        _ev("request", "b", 3.0, resource="cs"),
        _ev("exit", "a", 5.0, resource="cs"),  # b waits: a handover
        _ev("enter", "b", 9.0, resource="cs"),
        _ev("exit", "b", 10.0, resource="cs"),  # nobody waits: no handover
        _ev("request", "a", 20.0, resource="cs"),
        _ev("enter", "a", 21.0, resource="cs"),
        _ev("exit", "a", 22.0, resource="cs"),
    ]
    assert mean_message_delay(events) == 2.0
    m = measure(events)
    assert m.entries == m.requests == 3 and m.messages == {"REQ": 1} and m.per_entry == pytest.approx(1 / 3)
    assert m.response_times == [0.5, 3.0, 0.5]  # (1, 6, 1) in units of T = 2
    assert m.sync_delays == [2.0]  # (9 − 5) / 2, once
    assert measure(events, unit=1.0).sync_delays == [4.0]


def test_literature_figures():
    assert literature("ricart-agrawala")["messages"].render(5) == "2(N−1) = 8"
    assert literature("suzuki-kasami")["messages"].range(13) == (0, 13)
    assert literature("maekawa")["messages"].render(4) == "3(|S|−1) to 5(|S|−1) = 6–10"
    params = make_setup(
        "sanders",
        3,
        {
            "request_sets": {"1": [1, 2, 3], "2": [1, 2, 3], "3": [2, 3]},
            "inform_sets": {"1": [1, 3], "2": [2], "3": [3]},
        },
    ).params
    # R∖i: 2, 2, 1 others; I∖i: 1, 0, 0 → (5 + 4 + 2) / 3
    assert literature("sanders")["messages"].range(3, params) == pytest.approx((11 / 3, 11 / 3))
    assert [name for name in SPECS if literature(name)] == CLASSIC


def test_suzuki_kasami_entries_cost_exactly_0_or_n_in_the_metrics():
    run = run_classic("suzuki-kasami", 6, 3, 2)
    assert run.ok
    needed = sum(1 for e in run.events if e["event"] == "send" and e["type"] == "TOKEN")
    assert run.metrics.total_messages == 6 * needed
    assert isinstance(run.setup.protocols[1], sk.SuzukiKasamiNode)


def test_literature_figures_for_the_token_algorithms():
    """Raymond's synchronization delay is (T·log N)/2 (Kshemkalyani & Singhal), his messages O(log N);
    Suzuki–Kasami needs 0 or N messages and one hop."""
    assert literature("raymond")["sync"].range(8) == (1.5, 1.5)
    assert literature("raymond")["sync"].render(16) == "(T·log N)/2 = 2"
    assert literature("raymond")["messages"].range(8) == (3.0, 3.0)
    assert literature("suzuki-kasami")["messages"].range(5) == (0, 5)
    assert literature("suzuki-kasami")["sync"].range(5) == (1, 1)
