"""A lost participant (issue 8 item 3, issue 6 item 4 over RabbitMQ): a bee and a node killed with
SIGKILL mid-run, through ``mutexlab run``'s own code (``execute``).

What must hold: the monitor declares the stall ``STALL_TIMEOUT`` seconds after the last trace
event (not earlier, not much later), its stall text is the simulator's (``explain_stall``) and
names the killed process as the one the others wait for; nothing else crashes (every other
process exits 0, no traceback in any log); the exit code is 3 (stalled), the trace stays
capacity-safe, and ``mutexlab run`` names the killed process among the failed participants.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mutexlab.commands.run import Plan, execute

pytestmark = pytest.mark.broker
STALL = 6.0
INSTANCE = re.compile(r"-(\d+)-[0-9a-f]{6}: admitted as (\S+) ")


def last_state(text: str) -> str | None:
    states = re.findall(r" state (\S+) lamport", text)
    return states[-1] if states else None


def kill_mid_run(plan: Plan, victim_state: str) -> dict:
    """Run ``plan``; SIGKILL the first participant seen in ``victim_state``; the run's results."""
    out = io.StringIO()
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(execute, plan, True, out)
        logs = Path(plan.logs)
        victim = None
        deadline = time.monotonic() + 120
        while victim is None and time.monotonic() < deadline and not future.done():
            for log in sorted(logs.glob("*-*.log")):
                text = log.read_text()
                match = INSTANCE.search(text)
                if match and last_state(text) == victim_state:
                    os.kill(int(match.group(1)), signal.SIGKILL)   # a participant this test started
                    victim = (match.group(2), log)
                    break
            time.sleep(0.02)
        killed_at = time.monotonic()
        code = future.result(timeout=300)
        ended_at = time.monotonic()
    assert victim is not None, f"no participant reached {victim_state}"
    return {"code": code, "summary": json.loads(out.getvalue()), "victim": victim[0], "victim_log": victim[1],
            "monitor": (logs / "monitor.out").read_text(), "logs": logs, "after_kill": ended_at - killed_at}


def test_a_killed_bee_and_a_killed_node_are_named_and_nothing_else_crashes(amqp_url, tmp_path, capfd):
    plans = {
        # One flower: every waiting bee needs an ACKflower from the bee on the flower, which never comes.
        "bees": (Plan("bees", 4, {"flowers": 1, "reeds": 2}, seed=1, amqp_url=amqp_url, dwell=0.1,
                      dwell_times={"flower": 1.5}, stall_timeout=STALL, join_timeout=120,
                      trace=str(tmp_path / "bees.jsonl"), logs=str(tmp_path / "bees")), "ON_FLOWER"),
        "mutex": (Plan("ricart-agrawala", 3, {"requests": 20}, seed=1, amqp_url=amqp_url, dwell=0.1,
                       dwell_times={"cs": 1.5}, stall_timeout=STALL, join_timeout=120,
                       trace=str(tmp_path / "mutex.jsonl"), logs=str(tmp_path / "mutex")), "HELD"),
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(plans, pool.map(lambda item: kill_mid_run(*item), plans.values())))
    stderr = capfd.readouterr().err
    for family, r in results.items():
        victim, summary, text = r["victim"], r["summary"], r["monitor"]
        print(f"\n{family}: killed {victim}; exit {r['code']}; monitor ended {r['after_kill']:.1f}s after the kill\n"
              + text[text.find("stalled:"):text.find("the run stalled")])
        assert r["code"] == 3, text
        assert not summary["complete"] and summary["safe"] and victim in summary["stalled"], summary
        # The simulator's explanation: the others wait for the victim, the victim is the one blocking.
        waiting = "ACKflower" if family == "bees" else "REPLY"
        assert re.search(rf"^  \S+ \((?:WANTED|WAIT_\w+)\) waits for {waiting} from [^\n]*\b{victim}\b", text, re.M), text
        assert re.search(rf"^blocked on {victim}: ", text, re.M), text
        assert re.search(rf"stalled: {victim} in {plans[family][1]} .*silent for", text), text
        # Declared STALL seconds after the last trace event (the monitor polls every 0.2 s).
        events = [json.loads(line) for line in Path(plans[family][0].trace).read_text().splitlines()[1:]]
        gap = summary["duration"] - max(e["t"] for e in events)
        assert STALL <= gap < STALL + 2.0, gap
        # Nothing else crashed: only the victim failed, no traceback anywhere.
        failed = re.search(rf"participants that failed: ([^\n]*{r['victim_log'].stem}[^\n]*)", stderr)
        assert failed and failed.group(1).split(", ") == [r["victim_log"].stem], stderr
        for log in r["logs"].glob("*.log"):
            assert "Traceback" not in log.read_text(), log
