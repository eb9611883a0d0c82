"""The benchmark harness (bench/, issue 7) runs a tiny configuration and writes well-formed results.

These check behaviour, never speed: the harness measures, audits and reports; the numbers
themselves belong in BENCHMARKS.md.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from conftest import missing

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import baselines, complexity, simspeed  # noqa: E402
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

    from bench.markdown import render

    page = render(data)
    assert "## 1. Message complexity" in page and "## 3." not in page
    assert "ricart-agrawala" in page and "2(N−1) = 4" in page


def test_part2_case_reports_speed_and_memory():
    case = simspeed.bees_case(4)
    assert case["options"] == {"reeds": 2}  # ⌈P/3⌉ reeds: every bee lays
    row = simspeed.measure(case, repeat=1, memory=True)
    assert row["ok"] and row["messages"] > 0 and row["events"] >= row["messages"]
    assert row["entries"]["reed"] == 4
    assert row["wall_s"] > 0 and row["msgs_per_s"] > 0
    assert row["rss_peak_mib"] >= row["rss_baseline_mib"] > 0
    # The run's own allocations (13 KiB here): some, and fewer than the whole process holds at its peak.
    assert 0 < row["tracemalloc_peak_mib"] < row["rss_peak_mib"]


def test_growth_exponent():
    rows = [{"processes": 10, "messages": 100}, {"processes": 20, "messages": 400}]
    simspeed.growth(rows, "messages")
    assert rows[1]["messages_exponent"] == 2.0


def test_literature_reference_choices():
    assert complexity.literature("maekawa", 9, {}, "light")[1] == pytest.approx(9.0)  # 3√N
    assert complexity.literature("maekawa", 9, {}, "heavy")[1] == pytest.approx(15.0)  # 5√N
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


def _fake_proc(root: Path, listening: dict[int, str], processes: dict[int, tuple[str, list[str]]]) -> str:
    """A /proc with ``listening`` {port: socket inode} in net/tcp (plus one established connection
    on 5672) and ``processes`` {pid: (comm, [fd targets])}."""
    (root / "net").mkdir(parents=True)
    rows = [
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
    ]
    for n, (port, inode) in enumerate(listening.items()):
        rows.append(
            f"   {n}: 00000000:{port:04X} 00000000:0000 0A 00000000:00000000 00:00000000 00000000   106"
            f"        0 {inode} 1 0000000000000000 100 0 0 10 0"
        )
    rows.append(
        "   9: 0100007F:1628 0100007F:D431 01 00000000:00000000 00:00000000 00000000   106        0 333 1 "
        "0000000000000000 20 4 30 10 -1"
    )
    (root / "net" / "tcp").write_text("\n".join(rows) + "\n")
    for pid, (comm, targets) in processes.items():
        (root / str(pid) / "fd").mkdir(parents=True)
        (root / str(pid) / "comm").write_text(comm + "\n")
        for fd, target in enumerate(targets, start=3):
            os.symlink(target, root / str(pid) / "fd" / str(fd))
    return str(root)


def test_the_broker_is_the_erlang_vm_listening_on_the_amqp_port_not_the_first_beam(tmp_path):
    """Two Erlang VMs (a broker in a container, a private test node) once made the first ``beam*``
    "the broker", and CPU times read from different VMs gave negative µs per message."""
    from bench.common import broker_pid, find_broker_pid

    proc = _fake_proc(
        tmp_path / "proc",
        {5672: "111", 5673: "222"},
        {
            50: ("docker-proxy", ["socket:[111]"]),  # forwards a port, but is no Erlang VM
            100: ("beam.smp", ["socket:[222]", "/dev/null"]),  # a private node on 5673: the first beam
            200: ("beam.smp", ["socket:[999]"]),  # a container's VM: its sockets are in another namespace
            300: ("beam.smp", ["pipe:[5]", "socket:[333]", "socket:[111]"]),
            400: ("python3", ["socket:[111]"]),
        },
    )
    assert find_broker_pid(5672, proc) == 300
    assert find_broker_pid(5673, proc) == 100
    assert find_broker_pid(5674, proc) is None, "nothing listens there: no broker, rather than a guess"
    assert broker_pid("amqp://guest:guest@broker.example.org:5672/%2F") is None, "a remote broker is not ours"


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
    ok = baselines.summarise_contention("x", 2, 1, fine)
    assert (
        ok["mutual_exclusion_violations"] == 0
        and ok["entries"] == 3
        and ok["longest_streak_one_process"] == 1
    )
    assert baselines.summarise_contention("x", 2, 1, broken)["mutual_exclusion_violations"] == 1


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


# -- over the broker -------------------------------------------------------------------------------
@pytest.mark.broker
@pytest.mark.slow
def test_rabbit_baselines_and_a_real_run(amqp_url):
    for mode in baselines.MODES:
        raw = baselines.throughput(amqp_url, 50, mode)
        assert raw["mode"] == mode and raw["received"] == 50 and raw["msgs_per_s"] > 0
    with pytest.raises(ValueError, match="raw pika mode must be one of"):
        baselines.throughput(amqp_url, 50, "fast")
    from bench.stream import stream

    for traced, tapped, seen in ((False, False, 0), (False, True, 40), (True, True, 120)):
        flow = stream(amqp_url, 40, traced=traced, tapped=tapped)
        assert flow["received"] == 40 and flow["gaps"] == 0 and flow["duplicates"] == 0
        assert flow["tapped"] == seen, "the monitor's tap sees every message (and trace batch)"
        assert flow["audit_events"] == (80 if traced else 0)
        assert flow["left_in_monitor_queue"] == 0, (
            "untapped routes nothing to the monitor; the tap drains the rest"
        )
    for raw in (False, True):  # the transport and its raw pika twin, four messages per input
        flow = stream(amqp_url, 40, per_input=4, raw=raw)
        assert flow["received"] == 40 and flow["tapped"] == 40 and flow["per_input"] == 4
        assert flow["code"] == ("raw pika" if raw else "transport")
    with pytest.raises(ValueError, match="needs the monitor's tap"):
        stream(amqp_url, 40, traced=True, tapped=False)
    with pytest.raises(ValueError, match="twin has no trace"):
        stream(amqp_url, 40, traced=True, raw=True)
    with pytest.raises(ValueError, match="divide the count 40"):
        stream(amqp_url, 40, per_input=3)
    hop = baselines.latency(amqp_url, 10, confirmed=False)
    assert hop["rounds"] == 10 and hop["one_hop_ms_median"] > 0
    sem = baselines.semaphore(amqp_url, 2, 3)
    assert sem["entries"] == 6 and sem["mutual_exclusion_violations"] == 0

    from bench.overrabbit import mutexlab_run

    run = mutexlab_run(["mutex", "-a", "ricart-agrawala", "-N", "2", "-r", "1"], amqp_url, timeout=300)
    assert run["exit_code"] == 0 and run["safe"] and run["complete"]
    assert run["entries"] == 2 and run["messages"] == 4  # 2(N−1) per entry
    assert run["trace_events"] > run["messages"] and run["entries_per_s"] > 0
    assert run["latency_bound_msgs_per_s"] is None or run["latency_bound_msgs_per_s"] > 0
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
    out = baselines.redis_lock(url, 2, 3, sleep=0.001)
    assert out["entries"] == 6 and out["mutual_exclusion_violations"] == 0


def test_benchmarks_page_renders_from_the_committed_results_with_before_and_after(tmp_path):
    """BENCHMARKS.md is generated from docs/benchmarks-full.json (and, with --before, the transport's
    earlier figures): every number on the page comes from the files."""
    from bench.markdown import _load, render
    from bench.markdown import main as markdown_main

    now, before = (
        _load(str(ROOT / "docs/benchmarks-full.json")),
        _load(str(ROOT / "docs/benchmarks-before-transport.json")),
    )
    page = render(now, before)
    for heading in ("## 1.", "## 2.", "## 3.", "## 4.", "Before and after the transport's optimisations"):
        assert heading in page
    run = next(r for r in now["parts"]["3"]["runs"] if r["algorithm"] == "ricart-agrawala" and r["n"] == 5)
    old = next(r for r in before["parts"]["3"]["runs"] if r["algorithm"] == "ricart-agrawala" and r["n"] == 5)
    assert f"×{run['entries_per_s'] / old['entries_per_s']:.1f}" in page
    stream = next(
        s
        for s in now["parts"]["3"]["stream"]
        if (s["code"], s["mode"], s["per_input"]) == ("transport", "messages", 1)
    )
    verdict = "met" if stream["vs_twin"] >= 0.5 else "NOT met"
    assert f"**{stream['vs_twin']:.0%}** ({verdict})" in page, "the target's verdict, against the same work"
    assert f"the transport reaches {stream['vs_raw_transient']:.0%}" in page, "and the ratio to raw transient"
    assert "## 3." in render(before), "an older results file (fewer fields) still renders on its own"
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    assert markdown_main([str(bad)]) == 2


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


@pytest.mark.slow
def test_the_step_handover_bench_runs_every_setting(amqp_url):
    """bench/steps.py: two buses hand a counter over (a step each, with its trace batch to a third
    bus) in the two ways of publishing a step, on both classic queue versions; every handover
    arrives (the run ends only when the last one came back) and the broker's CPU is attributed."""
    from bench.common import broker_pid
    from bench.steps import measure

    samples = measure(amqp_url, hops=30, rounds=1)
    assert sorted(samples) == ["cc v1", "cc v2", "two v1", "two v2"]
    for rows in samples.values():
        (row,) = rows
        assert row["hops_per_s"] > 0 and row["python_us"] > 0
        assert (row["broker_us"] is None) == (broker_pid(amqp_url) is None)


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
