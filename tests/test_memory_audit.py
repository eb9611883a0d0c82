"""memory.py predicts what an audited streamed run keeps: the bees' holding intervals (one flower
visit per egg). ``simulate bees --eggs 1000000 --cocoons 1000000`` was predicted at 40 MB and
grew by gigabytes; now its ~3 million intervals are counted up front, and refused where they
do not fit."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mutexlab import memory
from mutexlab.cli import main
from mutexlab.commands import simulate
from mutexlab.protocols.registry import flags_of, spec

GB = 1 << 30


def prediction(options: dict, audit: bool = True) -> memory.Prediction:
    flags = flags_of(spec("bees"))  # its problem's
    assert flags is not None
    return memory.predict(
        memory.messages(spec("bees"), 10, options),
        10,
        audited=False,
        intervals=memory.intervals(flags, 10, options) if audit else 0,
    )


def test_an_audited_million_egg_run_is_refused_up_front_with_its_prediction(monkeypatch, capsys):
    monkeypatch.setattr(memory, "available_bytes", lambda meminfo="/proc/meminfo": 8 * GB)

    def never(*args, **kwargs):
        raise AssertionError("a refused configuration was set up")

    monkeypatch.setattr(simulate, "build_setup", never)
    assert main(["simulate", "bees", "--eggs", "1000000", "--cocoons", "1000000"]) == 2
    err = capsys.readouterr().err
    assert "predicted to need about 11." in err and "~3.0M holding intervals kept for the audit" in err
    assert "but 8.0 GB is available" in err
    # without the audit nothing is kept: the same run fits (and is not refused)
    quiet = prediction({"eggs": 1_000_000, "cocoons": 1_000_000}, audit=False)
    assert quiet.bytes < 100 << 20 < 8 * GB < prediction({"eggs": 1_000_000, "cocoons": 1_000_000}).bytes


@pytest.mark.parametrize("eggs", [1000])
def test_the_prediction_covers_the_measured_peak_of_an_audited_run(eggs):
    argv = ["mutexlab", "simulate", "bees", "--eggs", str(eggs), "--cocoons", str(eggs)]
    # the child's own peak: VmHWM (getrusage's maxrss would carry this test process's over exec)
    measure = (
        "import runpy, sys\n"
        "from mutexlab.check.result import peak_mb\n"
        f"sys.argv = {argv!r}\n"
        "try:\n    runpy.run_module('mutexlab', run_name='__main__')\n"
        "finally:\n    print('peak', peak_mb(), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", measure], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    peak = float(done.stderr.rsplit("peak ", 1)[1]) * 2**20
    predicted = prediction({"eggs": eggs, "cocoons": eggs}).bytes
    assert peak <= predicted <= 1.6 * peak, (peak, predicted)
    assert prediction({"eggs": eggs, "cocoons": eggs}, audit=False).bytes < peak  # the intervals count


def test_many_bees_are_predicted_from_one_reed_stay_each_not_one_per_reed():
    """A bee lays all its eggs on one reed: P bees make at most P reed stays. Counting one stay per
    bee and reed predicted 17.5 GB for ``--bees 1000 --reeds 334`` (measured: 651 MB) and would
    have refused a run that fits."""
    options = {"bees": 300, "reeds": 100, "flowers": 30}
    flags = flags_of(spec("bees"))
    assert flags is not None
    eggs, reed_stays = 5 * 300, 300
    assert memory.intervals(flags, 300, options) == eggs + reed_stays
    argv = ["mutexlab", "simulate", "bees", "--bees", "300", "--reeds", "100", "--flowers", "30"]
    measure = (
        "import runpy, sys\n"
        "from mutexlab.check.result import peak_mb\n"
        f"sys.argv = {argv!r}\n"
        "try:\n    runpy.run_module('mutexlab', run_name='__main__')\n"
        "finally:\n    print('peak', peak_mb(), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", measure], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "entries: reed 300, flower 1500" in done.stdout
    peak = float(done.stderr.rsplit("peak ", 1)[1]) * 2**20
    predicted = memory.predict(
        memory.messages(spec("bees"), 300, options), 300, audited=False, intervals=eggs + reed_stays
    ).bytes
    assert peak <= predicted <= 3 * peak, (peak, predicted)


def test_resident_bytes_reads_statm_and_says_none_when_it_cannot(tmp_path):
    statm = tmp_path / "statm"
    statm.write_text("2500 1200 300 10 0 900 0\n")
    assert memory.resident_bytes(statm) == 1200 * memory._PAGE  # noqa: SLF001 - the page size it multiplies by
    assert memory.resident_bytes(tmp_path / "absent") is None
    statm.write_text("2500\n")
    assert memory.resident_bytes(statm) is None
