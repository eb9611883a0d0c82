"""The fault-injection flags of ``mutexlab simulate``: within the model the runs stay safe and
say what was injected; ``--reorder`` leaves the model and the audit says so."""

import pytest

from mutexlab.cli import main

SIMULATIONS = [
    ["simulate", "bees", "-P", "5", "-K", "2", "-T", "2"],
    ["simulate", "elves", "--elves", "3", "--rounds", "1"],
    ["simulate", "mutex", "-a", "maekawa", "-N", "5", "-M", "2"],
]


@pytest.mark.parametrize("command", SIMULATIONS, ids=lambda c: c[1])
def test_duplicates_and_spikes_are_reported_and_the_run_stays_safe(command, capsys):
    assert main(command + ["--seed", "4", "--duplicate", "0.4", "--spike", "0.1"]) == 0
    out = capsys.readouterr().out
    line = next(s for s in out.splitlines() if s.startswith("faults injected:"))
    dropped = int(line.split("(")[1].split()[0])
    assert dropped > 0 and "delay spikes p=0.1" in line
    assert "SAFE" in out


def test_reordering_breaks_the_bees_and_the_audit_names_the_shared_reed(capsys):
    codes = {seed: main(["simulate", "bees", "--reorder", "--seed", str(seed)]) for seed in range(6)}
    out = capsys.readouterr().out
    assert 1 in codes.values()
    assert "links NOT FIFO" in out and "[capacity] reed:" in out
    for seed in (s for s, code in codes.items() if code == 1):  # the same seeds in order are safe
        assert main(["simulate", "bees", "--seed", str(seed)]) == 0


@pytest.mark.parametrize(
    "flags", [["--duplicate", "1.5"], ["--spike", "-0.1"], ["--spike-delay", "-3"], ["--duplicate", "often"]]
)
def test_bad_fault_flags_exit_2(flags, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "bees"] + flags)
    assert exc.value.code == 2
    assert "error: argument" in capsys.readouterr().err
