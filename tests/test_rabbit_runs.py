"""Full runs over real RabbitMQ: every participant its own OS process, the monitor deciding.

All runs of this module start at once (one thread each, distinct run ids) to keep the suite
short; each must end with the monitor's verdict, and each safe trace must pass ``mutexlab
verify``. The deliberately broken variants (tests/mutexlab_broken) must be flagged, exit 1.
"""

from __future__ import annotations

import importlib
import io
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mutexlab.cli import main as cli
from mutexlab.commands.run import Plan, execute
from mutexlab.protocols.registry import ALGORITHMS, CLASSIC

pytestmark = pytest.mark.broker
TESTS = Path(__file__).resolve().parent


def _available(name: str) -> bool:
    try:
        importlib.import_module(ALGORITHMS[name])
        return True
    except ImportError:
        return False


CLASSIC_HERE = [a for a in CLASSIC if _available(a)]

PLANS = {
    **{f"mutex-{a}": dict(algorithm=a, processes=5, options={"requests": 2}) for a in CLASSIC_HERE},
    "bees": dict(algorithm="bees", processes=6, options={"flowers": 2, "reeds": 2}),
    "elves": dict(algorithm="elves", processes=4, options={"rounds": 2}),
    "broken-node": dict(algorithm="mutexlab_broken.ricart_agrawala", processes=4, options={"requests": 2},
                        dwell_times={"cs": 0.3}),
    "broken-bee": dict(algorithm="mutexlab_broken.bees", processes=3, options={"flowers": 1, "reeds": 3},
                       dwell_times={"flower": 0.3}),
}
if not _available("elves"):
    PLANS.pop("elves")
if not _available("bees"):
    PLANS.pop("bees")
    PLANS.pop("broken-bee")


@pytest.fixture(scope="module")
def runs(amqp_url, tmp_path_factory):
    """name -> (exit code, summary, trace path) for every plan, run concurrently."""
    base = tmp_path_factory.mktemp("runs")
    path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = str(TESTS) + (os.pathsep + path if path else "")   # the broken variants

    def one(name: str):
        spec = dict(PLANS[name])
        plan = Plan(spec.pop("algorithm"), spec.pop("processes"), spec.pop("options"), seed=3, amqp_url=amqp_url,
                    dwell=0.0, stall_timeout=20, join_timeout=120, trace=str(base / f"{name}.jsonl"),
                    logs=str(base / f"{name}-logs"), **spec)
        out = io.StringIO()
        code = execute(plan, json_out=True, out=out)
        return code, json.loads(out.getvalue() or "{}"), plan.trace

    try:
        with ThreadPoolExecutor(max_workers=len(PLANS)) as pool:
            results = dict(zip(PLANS, pool.map(one, PLANS)))
    finally:
        os.environ["PYTHONPATH"] = path
    return results


SAFE = [n for n in PLANS if not n.startswith("broken")]


@pytest.mark.parametrize("name", SAFE)
def test_run_over_rabbitmq_is_complete_and_safe(runs, name):
    code, summary, trace = runs[name]
    assert summary, f"{name}: the monitor wrote no summary (exit {code})"
    assert summary["complete"] and summary["safe"], summary
    assert code == 0
    assert sum(summary["messages"].values()) > 0
    assert summary["tapped"] >= sum(summary["messages"].values()), "the monitor taps every protocol message"
    assert cli(["verify", trace]) == 0, "the monitor's trace passes mutexlab verify"
    header = json.loads(Path(trace).read_text().splitlines()[0])
    assert header["event"] == "run" and header["transport"] == "rabbitmq"


def test_bees_lay_every_egg(runs):
    if "bees" not in runs:
        pytest.skip("bees not available")
    _, summary, _ = runs["bees"]
    assert summary["notes"]["egg"] == 6 * 5 and summary["notes"]["death"] == 6
    assert set(summary["states"].values()) == {"DEAD"}


@pytest.mark.parametrize("name", [n for n in PLANS if n.startswith("broken")])
def test_broken_variant_is_flagged_by_the_monitor(runs, name):
    code, summary, trace = runs[name]
    assert code == 1, f"{name}: exit {code}, summary {summary}"
    assert not summary["safe"]
    assert any("capacity" in v for v in summary["violations"])
    assert cli(["verify", trace]) == 1
