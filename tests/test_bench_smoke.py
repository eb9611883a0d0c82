"""The benchmark harness (bench/) runs a tiny configuration and writes well-formed results, and
BENCHMARKS.md and its plots say what the recorded results say.

These check behaviour, never speed: the harness measures, audits and reports; the numbers
themselves belong in BENCHMARKS.md.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from conftest import missing

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import complexity, overrabbit, plots, simspeed  # noqa: E402
from bench.run import main as bench_main  # noqa: E402


def test_part1_cli_writes_json_with_literature_ratios(tmp_path):
    out = tmp_path / "r.json"
    code = bench_main(
        [
            "--quick",
            "--parts",
            "1",
            "--algorithms",
            "ricart-agrawala,suzuki-kasami",
            "--sizes",
            "3",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    data = json.loads(out.read_text())
    assert data["mode"] == "quick" and data["machine"]["nproc"] >= 1
    runs = data["parts"]["1"]["runs"]
    assert {(r["algorithm"], r["load"]) for r in runs} == {
        ("ricart-agrawala", "light"),
        ("ricart-agrawala", "heavy"),
        ("suzuki-kasami", "light"),
        ("suzuki-kasami", "heavy"),
    }
    for r in runs:
        assert r["safe"] and r["complete"]
        assert r["entries"] == 3 * r["requests_per_node"]
        assert r["ratio"] == pytest.approx(r["messages_per_entry"] / r["literature_value"], abs=0.01)
    ra_light = next(r for r in runs if r["algorithm"] == "ricart-agrawala" and r["load"] == "light")
    assert ra_light["messages_per_entry"] == 4.0  # exactly 2(N−1) per entry
    heavy = [r for r in runs if r["load"] == "heavy"]
    assert all(r["sync_delay_T"] is not None and r["handovers_with_waiters"] > 0 for r in heavy)

    page = complexity.render(data["parts"]["1"])
    assert page.count("ricart-agrawala") == 1 and page.count("suzuki-kasami") == 1, (
        "one row per algorithm and N"
    )
    rows = page.splitlines()[2:]
    assert "2(N−1) = 4" in page and len(rows) == 2 and all(row.endswith(" yes |") for row in rows)


def test_part2_case_reports_speed_and_memory():
    case = simspeed.cases(full=False)[0]
    assert case["processes"] == 10 and case["options"] == {"reeds": 4}  # ⌈P/3⌉ reeds: every bee lays
    row = simspeed.measure(case, repeat=1)
    assert row["ok"] and row["messages"] > 0 and row["events"] >= row["messages"]
    assert row["entries"]["reed"] == 10
    assert row["wall_s"] > 0 and row["msgs_per_s"] > 0
    assert row["rss_peak_mib"] >= row["rss_baseline_mib"] > 0
    assert row["cpu_s"] > 0 and row["msgs_per_cpu_s"] == round(row["messages"] / row["cpu_s"])


def test_growth_exponent():
    rows = [{"processes": 10, "messages": 100}, {"processes": 20, "messages": 400}]
    simspeed.growth(rows, "messages")
    assert rows[1]["messages_exponent"] == 2.0


def test_literature_reference_choices():
    # N = 9 has no projective plane: a 3×3 grid, |S| = 5
    assert complexity.literature("maekawa", 9, {}, "light") == ("3(|S|−1) = 12", pytest.approx(12.0))
    assert complexity.literature("maekawa", 9, {}, "heavy") == ("5(|S|−1) = 20", pytest.approx(20.0))
    assert complexity.literature("lamport", 5, {}, "light") == ("3(N−1) = 12", 12.0)  # every REPLY sent
    assert complexity.literature("lamport", 5, {}, "heavy") == ("2(N−1) = 8", 8.0)  # REPLYs suppressed
    assert complexity.literature("suzuki-kasami", 5, {}, "light")[1] == 5.0
    assert complexity.literature("raymond", 31, {}, "heavy")[1] == complexity.RAYMOND_HEAVY


def test_cpu_window_takes_the_samples_around_the_span():
    from bench.common import CpuSampler

    cpu = CpuSampler()
    # (Unix time, busy ticks, total ticks, broker CPU seconds): 10.0 → 12.0 three quarters busy.
    cpu.samples = [
        (9.0, 0, 100, 1.0),
        (10.0, 50, 200, 1.5),
        (11.0, 120, 300, 2.0),
        (12.0, 200, 400, 2.5),
        (13.0, 200, 500, 2.5),
    ]
    assert cpu.window(10.0, 12.0) == {"seconds": 2.0, "machine_busy": 0.75, "broker_cpu_s": 1.0}
    assert cpu.window(10.5, 11.5) == {"seconds": 2.0, "machine_busy": 0.75, "broker_cpu_s": 1.0}
    assert cpu.window(12.5, 14.0) is None, "no sample after the span: nothing to say"
    assert cpu.window(8.0, 9.5) is None, "no sample before the span"


def test_the_broker_is_the_erlang_vm_listening_on_the_amqp_port_not_the_first_beam(monkeypatch):
    """Two Erlang VMs (a broker in a container, a private test node) once made the first ``beam*``
    "the broker", and CPU times read from different VMs gave negative µs per message."""
    from types import SimpleNamespace

    import psutil

    from bench.common import broker_pid

    names = {50: "docker-proxy", 100: "beam.smp", 200: "beam.smp", 300: "beam.smp", 400: "python3"}
    # This namespace's TCP sockets, as psutil sees them: (pid, local port, status). A container's
    # VM listens in its own namespace, so none of its sockets are here.
    sockets = [
        (50, 5672, psutil.CONN_LISTEN),  # forwards a port, but is no Erlang VM
        (None, 5672, psutil.CONN_LISTEN),  # another user's socket: its owner is not known
        (200, 5672, psutil.CONN_ESTABLISHED),  # a connection from 5672, not a listener
        (100, 5673, psutil.CONN_LISTEN),  # a private node on 5673: the first beam
        (300, 5672, psutil.CONN_LISTEN),
        (400, 5672, psutil.CONN_LISTEN),
        (999, 5672, psutil.CONN_LISTEN),  # gone since the sockets were listed
    ]

    class Process:
        def __init__(self, pid: int) -> None:
            if pid not in names:
                raise psutil.NoSuchProcess(pid)
            self.pid = pid

        def name(self) -> str:
            return names[self.pid]

    def net_connections(kind: str) -> list:
        assert kind == "tcp"  # IPv4 and IPv6
        return [
            SimpleNamespace(laddr=SimpleNamespace(ip="::", port=port), status=status, pid=pid)
            for pid, port, status in sockets
        ]

    monkeypatch.setattr(psutil, "Process", Process)
    monkeypatch.setattr(psutil, "net_connections", net_connections)
    assert broker_pid("amqp://guest:guest@127.0.0.1:5672/%2F") == 300
    assert broker_pid("amqp://guest:guest@localhost:5673/%2F") == 100
    assert broker_pid("amqp://127.0.0.1:5674") is None, (
        "nothing listens there: no broker, rather than a guess"
    )
    assert broker_pid("amqp://guest:guest@broker.example.org:5672/%2F") is None, "a remote broker is not ours"


def test_a_listener_that_is_no_erlang_vm_is_no_broker():
    from bench.common import broker_pid

    with socket.socket() as listener:  # this process, a Python, listening on a free port
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert broker_pid(f"amqp://127.0.0.1:{listener.getsockname()[1]}") is None


def test_the_machines_broker_is_found_by_its_port():
    from bench.common import broker_cpu_seconds, broker_pid

    try:
        socket.create_connection(("127.0.0.1", 5672), timeout=2).close()
    except OSError:  # .ci/run starts the machine's broker: under CI its absence is a failure
        missing("no broker listens on 127.0.0.1:5672")
    pid = broker_pid("amqp://guest:guest@127.0.0.1:5672/%2F")
    assert pid is not None
    assert Path(f"/proc/{pid}/comm").read_text().startswith("beam")
    assert broker_cpu_seconds(pid) > 0


def test_contention_summary_catches_overlapping_critical_sections():
    fine = [
        {"who": 1, "cs": [(0, 10), (20, 30)], "start": 0, "end": 30},
        {"who": 2, "cs": [(11, 19)], "start": 0, "end": 40},
    ]
    broken = [
        {"who": 1, "cs": [(0, 10)], "start": 0, "end": 30},
        {"who": 2, "cs": [(5, 12)], "start": 0, "end": 40},
    ]
    ok = overrabbit.summarise_contention("x", 2, 1, fine)
    assert (
        ok["mutual_exclusion_violations"] == 0
        and ok["entries"] == 3
        and ok["longest_streak_one_process"] == 1
    )
    assert overrabbit.summarise_contention("x", 2, 1, broken)["mutual_exclusion_violations"] == 1


@pytest.mark.parametrize("argv", [["--parts", "7"], ["--parts", "x"], ["--sizes", "0"]])
def test_bad_arguments_exit_2(argv, tmp_path):
    with pytest.raises(SystemExit) as exc:
        bench_main(argv + ["--out", str(tmp_path / "r.json")])
    assert exc.value.code == 2


def test_unknown_algorithm_and_bad_out_dir_exit_2(tmp_path):
    assert bench_main(["--parts", "1", "--algorithms", "nope", "--out", str(tmp_path / "r.json")]) == 2
    assert bench_main(["--parts", "1", "--out", str(tmp_path / "missing" / "r.json")]) == 2


def test_documented_command_is_a_module():
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and "--quick" in proc.stdout and "--full" in proc.stdout


def test_the_metrics_cost_bench_prints_what_metrics_adds_per_case(tmp_path, capsys):
    # bench.metrics_cost, one small case beside itself: the ratio (check + figures) ÷ check, and
    # the figures of both trees compared (the same tree: the same figures)
    from bench import metrics_cost

    out = tmp_path / "cost.json"
    assert metrics_cost.main(["--case", "bees-2", "--base", str(ROOT), "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())
    assert row["same_figures"] and row["new_metrics_states"] > row["new_check_states"] > 0
    assert row["new_ratio"] == pytest.approx(1 + row["new_metrics_s"] / row["new_check_s"], rel=0.05)
    assert "bees-2" in capsys.readouterr().out


# -- over the broker -------------------------------------------------------------------------------
@pytest.mark.broker
@pytest.mark.slow
def test_rabbit_yardsticks_and_a_real_run(amqp_url):
    from bench.clients import measure

    for client in ("blocking", "transient"):  # the raw ring of bench/wire.py, confirmed and transient
        hops = measure(amqp_url, client, "ring", 3, 12)
        assert hops["client"] == client and hops["messages"] == 12 and hops["msgs_per_s"] > 0
    with pytest.raises(ValueError, match="no client 'fast'"):
        measure(amqp_url, "fast", "ring", 3, 12)
    with pytest.raises(ValueError, match="ring needs n >= 2"):
        measure(amqp_url, "blocking", "ring", 1, 12)
    from bench.raw_pattern import measure as pattern

    for delivery in ("persistent", "transient"):  # the raw Ricart–Agrawala pattern of bench/wire.py
        raw = pattern(amqp_url, 3, 4, delivery, size=(300, 100))
        assert raw["delivery"] == delivery and raw["messages"] == 2 * 4 * 3 * 2 and raw["entries_per_s"] > 0
    with pytest.raises(ValueError, match="needs N >= 2"):
        pattern(amqp_url, 1, 4, "persistent")
    sem = overrabbit.semaphore(amqp_url, 2, 3)
    assert sem["entries"] == 6 and sem["mutual_exclusion_violations"] == 0

    from bench.overrabbit import mutexlab_run

    run = mutexlab_run(["mutex", "-a", "ricart-agrawala", "-N", "2", "-r", "1"], amqp_url, timeout=300)
    assert run["exit_code"] == 0 and run["safe"] and run["complete"]
    assert run["entries"] == 2 and run["messages"] == 4  # 2(N−1) per entry
    assert run["trace_events"] > run["messages"] and run["entries_per_s"] > 0
    assert run["sync_delay_ms"] is None or run["sync_delay_ms"] > 0
    assert 0 < run["machine_busy"] <= 1, "the machine's CPU is sampled over the run"
    assert run["broker_cpu_us_per_msg"] is not None, "the local broker's CPU is measured"


def _redis_url() -> str | None:
    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 6379), timeout=2):
            return url
    except OSError:
        return None


@pytest.mark.slow
def test_redis_lock_contention():
    url = _redis_url()
    if url is None:
        missing("no Redis on $REDIS_URL or 127.0.0.1:6379 (the benchmark's Redis yardstick needs one)")
    out = overrabbit.redis_lock(url, 2, 3, sleep=0.001)
    assert out["entries"] == 6 and out["mutual_exclusion_violations"] == 0


def _recorded(name: str) -> dict:
    return json.loads((ROOT / "docs" / name).read_text(encoding="utf-8"))


def test_the_committed_plots_are_what_the_recorded_results_give(tmp_path, monkeypatch):
    page = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    for name in plots.PLOTS:
        assert f"](docs/{name})" in page, f"BENCHMARKS.md shows {name}"
    assert plots.main(["--check"]) == 0, "a plot is stale: python -m bench.plots"
    for name in [*plots.PLOTS, "benchmarks-full.json", "benchmarks-scale.json", "benchmarks-check.json"]:
        (tmp_path / name).write_bytes((ROOT / "docs" / name).read_bytes())
    wire = _recorded("benchmarks-wire.json")
    wire["sittings"][0]["rows"][0]["broker_us_per_msg"] += 100  # a figure changed, the plot not redrawn
    (tmp_path / "benchmarks-wire.json").write_text(json.dumps(wire))
    monkeypatch.setattr(plots, "DOCS", tmp_path)
    assert plots.main(["--check"]) == 1


def test_a_bar_is_as_long_as_its_value():
    svg = plots.bars("t", "u", [("a", [100.0]), ("b", [200.0, 50.0]), ("·group", [None])], ["x", "y"])
    widths = [float(w) for w in re.findall(r'width="([\d.]+)" height="\d+" fill="#\w+"><title>', svg)]
    assert len(widths) == 3, "one segment per value, none for a heading"
    assert widths[1] == pytest.approx(2 * widths[0], abs=0.2) and widths[2] == pytest.approx(
        widths[0] / 2, abs=0.2
    )


def test_the_page_shows_the_recorded_figures():
    """BENCHMARKS.md is written by hand from docs/benchmarks-*.json: its figures must be the files'."""
    page = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert len(page.encode()) <= 15 * 1024 and not re.search(r"\bissue \d", page), (
        "short, no internal numbers"
    )
    full = _recorded("benchmarks-full.json")
    assert full["machine"]["git_commit"] in page and full["machine"]["date"][:10] in page
    for case in full["parts"]["2"]["cases"]:
        assert f"{case['msgs_per_s']:,} | {case['msgs_per_s'] / 1e5:.2f} | {case['msgs_per_cpu_s']:,}" in page
    for run in full["parts"]["4"]["runs"]:
        assert f"| {run['messages']:,} | {run['sim_messages']:,} | {run['ratio_to_sim']:.3f} |" in page
    quiet = _recorded("benchmarks-wire.json")["sittings"][0]
    assert quiet["commit"] in page and quiet["command"] in page
    for r in quiet["rows"]:
        if r["kind"] == "mutexlab" and r["n"] == 5:
            assert f"| {r['broker_us_per_msg']} / " in page and f"| {r['python_us_per_msg']:,} / " in page
    check = _recorded("benchmarks-check.json")
    assert check["commit"] in page and check["command"] in page
    for r in check["rows"]:
        assert (
            f"| {r['states']:,} | {r['transitions']:,} | {r['seconds']:.1f} s | {r['states_per_s']:,} |"
            in page
        )
    big = next(r for r in _recorded("benchmarks-scale.json")["table"] if r["P"] == 1000)
    assert f"| audited | {big['audited']['wall']:.1f} s | {big['audited']['cpu']:.1f} |" in page


def test_the_wire_table_puts_each_run_beside_the_ring_and_distalgo():
    from bench.wire import render

    def runs(**figures):
        return {**figures, "repeats": [figures, figures]}

    result = {
        "sizes": [5],
        "requests_per_node": 40,
        "ring_hops": 1000,
        "failures": ["/x raymond N=5: timed out"],
        "distalgo_skipped": None,
        "rows": [
            {"kind": "mutexlab", "what": "/x", "algorithm": "raymond", "n": 5}
            | runs(entries_per_s=300.0, token_passes_per_s=500, broker_us_per_msg=700),
            {"kind": "mutexlab", "what": "/x", "algorithm": "ricart-agrawala", "n": 5}
            | runs(entries_per_s=200.0, broker_us_per_msg=600),
            {"kind": "ring", "what": "confirmed", "algorithm": "", "n": 5}
            | runs(token_passes_per_s=1000, broker_us_per_msg=450),
            {"kind": "distalgo", "what": "ramutex", "algorithm": "ricart-agrawala", "n": 5}
            | runs(entries_per_s=800.0, python_us_per_msg=300),
            {"kind": "mutexlab", "what": "/x transient", "algorithm": "ricart-agrawala", "n": 5}
            | runs(entries_per_s=240.0, broker_us_per_msg=300),
            {"kind": "raw", "what": "persistent", "algorithm": "ricart-agrawala", "n": 5}
            | runs(entries_per_s=400.0, broker_us_per_msg=250),
            {"kind": "raw", "what": "transient", "algorithm": "ricart-agrawala", "n": 5}
            | runs(entries_per_s=300.0, broker_us_per_msg=90),
        ],
    }
    lines = render(result).splitlines()
    ra_transient = next(line for line in lines if "ricart-agrawala (x, transient)" in line).split("|")
    assert ra_transient[7].strip() == "0.80", "entries ÷ the raw pattern in the same delivery mode"
    assert next(line for line in lines if "pattern, transient" in line).split("|")[2].strip() == "300.00"
    raymond = next(line for line in lines if "raymond (x)" in line).split("|")
    assert raymond[3].strip() == "300/300" and raymond[5].strip() == "0.50", "passes ÷ the confirmed ring"
    ra = next(line for line in lines if "ricart-agrawala (x)" in line).split("|")
    assert ra[6].strip() == "0.25", "entries ÷ DistAlgo's ramutex"
    assert ra[7].strip() == "0.50", "entries ÷ the raw pattern, persistent"
    assert raymond[7].strip() == "–", "only Ricart–Agrawala is set beside its pattern"
    assert lines[-1] == "FAILED (not in the medians): /x raymond N=5: timed out"


def test_repeated_algorithm_runs_report_the_median_and_never_hide_a_failure():
    from bench.overrabbit import _median_run

    def run(rate, safe=True, complete=True):
        return {"entries_per_s": rate, "safe": safe, "complete": complete}

    assert _median_run([run(30.0), run(90.0), run(60.0)]) == dict(
        run(60.0), repeats_entries_per_s=[30.0, 90.0, 60.0]
    )
    assert _median_run([run(30.0), run(90.0)])["entries_per_s"] == 30.0, "of two, the lower"
    assert _median_run([run(90.0), run(10.0, safe=False), run(60.0)])["safe"] is False
    assert _median_run([run(90.0), run(60.0), run(95.0, complete=False)])["complete"] is False


def test_the_client_benchs_ricart_agrawala_members_finish_with_every_message_counted():
    """bench/clients.py's workload without a broker: members exchanging over FIFO links in a
    random order all finish, with R entries each and 2·R·(N − 1) messages received each."""
    import random
    from collections import deque

    from bench.clients import RicartAgrawala

    n, requests = 4, 3
    members = [RicartAgrawala(i, n, requests) for i in range(n)]
    links: dict[tuple[int, int], deque] = {}
    for m in members:
        for dest, body in m.start():
            links.setdefault((m.me, dest), deque()).append(body)
    rng = random.Random(0)
    while any(links.values()):
        src, dest = rng.choice([k for k, q in links.items() if q])
        for to, body in members[dest].handle(links[src, dest].popleft()):
            links.setdefault((dest, to), deque()).append(body)
    assert all(m.done and m.entries == requests and m.got == 2 * requests * (n - 1) for m in members)


@pytest.mark.broker
@pytest.mark.slow
def test_the_client_bench_runs_every_client_on_both_workloads(amqp_url):
    """bench/clients.py: the confirmed ring and Ricart–Agrawala on every client; every hop and
    message arrives (a member that misses one never finishes) and the CPU is attributed."""
    from bench.clients import CLIENTS, measure

    for client in CLIENTS:
        ring = measure(amqp_url, client, "ring", 3, 12)
        assert ring["messages"] == 12 and ring["msgs_per_s"] > 0 and ring["client_cpu_us_per_msg"] > 0
        ra = measure(amqp_url, client, "ricart-agrawala", 3, 2)
        assert ra["messages"] == 2 * 2 * 3 * 2 and ra["entries_per_s"] > 0


def test_the_documented_mac_cost_command_runs():
    """docs/rabbitmq.md times a message's MAC with the standard library's timeit: the command, as
    written there, still names the transport's signer and prints a time per loop."""
    doc = (ROOT / "docs" / "rabbitmq.md").read_text()
    line = next(ln for ln in doc.splitlines() if ln.startswith("python -m timeit"))
    args = shlex.split(line)[1:]
    proc = subprocess.run(
        [sys.executable, *args[:2], "-n", "200", "-r", "1", *args[2:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert any(f"{unit} per loop" in proc.stdout for unit in ("nsec", "usec", "msec")), proc.stdout


def test_the_cpu_split_cuts_between_the_samples_around_a_time():
    """``bench.startup --split`` (bench/phases.py): a phase's cut lies between the two samples
    around it, linear in time, and before the first or after the last sample it is that sample."""
    from bench.phases import Sampler

    sampler = Sampler.__new__(Sampler)  # no process to watch: the samples alone
    sampler.samples = [(10.0, 0.0, 1.0, 0.0, 0.0, 5.0), (12.0, 0.2, 3.0, 0.4, 0.0, 7.0)]
    assert sampler.at(11.5) == pytest.approx((0.15, 2.5, 0.3, 0.0, 6.5))
    assert sampler.at(9.0) == sampler.samples[0][1:] and sampler.at(13.0) == sampler.samples[1][1:]
