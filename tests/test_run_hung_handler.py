"""``mutexlab run`` of a solution whose handler never returns: the participant's watchdog
(``sim.hung``, as in ``simulate``) interrupts it after ``hung.SECONDS`` and the run ends on the
finding, named with the line it was running (exit 1); before, the run only STALLED (exit 3) and
said nothing of the handler."""

from __future__ import annotations

import pytest
from outsider_edits import edited

from mutexlab.cli import main
from mutexlab.sim import hung


@pytest.mark.broker
@pytest.mark.slow
def test_a_handler_spinning_over_rabbitmq_is_a_finding_named_by_its_line(
    amqp_url, tmp_path, capfd, monkeypatch
):
    spin = edited(
        tmp_path,
        "o7_central_enum.py",
        "o7-central-enum",
        "o7",
        "spin_run",
        ("SPIN = False", "SPIN = True"),
        ("while SPIN and len(self.queue) == 2:", "while SPIN and len(self.queue) >= 1:"),
    )
    monkeypatch.setattr(hung, "SECONDS", 1.0)  # the participants are forked: they see it
    monkeypatch.delenv("MUTEXLAB_SPAWN", raising=False)
    argv = ["run", "mutex", "-a", str(spin), "-N", "3", "--amqp-url", amqp_url, "--dwell", "0.3"]
    try:
        code = main([*argv, "--stall-timeout", "20"])
    except SystemExit as exc:
        code = exc.code
    out, err = capfd.readouterr()
    said = out + err
    assert code == 1, said
    assert "handler raised" in said and "HandlerHung: the handler ran for 1 s without returning" in said, said
    assert "STALLED" not in said, said
