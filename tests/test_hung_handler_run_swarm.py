"""A solution whose handler never returns, in the two commands whose work runs in other processes:
``mutexlab run`` (the participants) and ``check --swarm`` (the workers). Each process watches its
handlers as ``simulate`` does (``sim.hung``): after ``hung.SECONDS`` the handler is interrupted
and the command ends on the finding, named with the line it was running (exit 1). Before, the run
only STALLED (exit 3) and the swarm found nothing (exit 5), neither naming the handler."""

from __future__ import annotations

import pytest
from outsider_edits import edited

from mutexlab.cli import main
from mutexlab.sim import hung


def _spinning(tmp_path, name: str):
    """o7_central_enum.py, busy-waiting in the coordinator's handler once a request is queued."""
    return edited(
        tmp_path,
        "o7_central_enum.py",
        "o7-central-enum",
        "o7",
        name,
        ("SPIN = False", "SPIN = True"),
        ("while SPIN and len(self.queue) == 2:", "while SPIN and len(self.queue) >= 1:"),
    )


def _main(argv: list[str], capfd) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capfd.readouterr()
    return code, out + err


@pytest.mark.broker
@pytest.mark.slow
def test_a_handler_spinning_over_rabbitmq_is_a_finding_named_by_its_line(
    amqp_url, tmp_path, capfd, monkeypatch
):
    spin = _spinning(tmp_path, "spin_run")
    monkeypatch.setattr(hung, "SECONDS", 1.0)  # the participants are forked: they see it
    monkeypatch.delenv("MUTEXLAB_SPAWN", raising=False)
    argv = ["run", "mutex", "-a", str(spin), "-N", "3", "--amqp-url", amqp_url, "--dwell", "0.3"]
    code, said = _main([*argv, "--stall-timeout", "20"], capfd)
    assert code == 1, said
    assert "handler raised" in said and "HandlerHung: the handler ran for 1 s without returning" in said, said
    assert "spin_run.py:82 (in _on_req)" in said and "STALLED" not in said, said


@pytest.mark.slow
def test_a_handler_spinning_in_a_swarm_worker_is_a_finding_named_by_its_line(tmp_path, capfd, monkeypatch):
    spin = _spinning(tmp_path, "spin_swarm")
    monkeypatch.setattr(hung, "SECONDS", 1.0)  # the workers are forked: they see it
    argv = ["check", "mutex", "-a", str(spin), "-N", "3", "--swarm", "--time", "20", "--workers", "1"]
    code, said = _main(argv, capfd)
    assert code == 1, said
    assert "HandlerHung: the handler ran for 1 s without returning" in said, said
    assert "spin_swarm.py:82 (in _on_req)" in said and "NO VIOLATION FOUND" not in said, said
