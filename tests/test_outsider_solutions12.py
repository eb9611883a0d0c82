"""Solutions written in other people's styles (tests/outsiders/o12_*.py), and the defects their runs
showed. Small bounds: seconds each."""

from __future__ import annotations

import json
from pathlib import Path

from outsider_edits import said

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RAISES = (
    "    def _grant(self, to: int) -> list:",
    "    def waiting_for(self):\n        raise ValueError('who knows')\n\n    def _grant(self, to: int) -> list:",
)


def central(where: Path, name: str, *edits: tuple[str, str]) -> Path:
    """examples/protocols/central.py named ``central-<name>``, with ``edits`` made."""
    text = (EXAMPLES / "protocols" / "central.py").read_text()
    for old, new in (('"central"', f'"central-{name}"'), *edits):
        assert old in text, old
        text = text.replace(old, new)
    path = where / f"{name}.py"
    path.write_text(text)
    return path


FORGETS = ("return self._grant(self.queue.pop(0)) if self.queue else []", "return []")


def test_simulate_shows_the_run_whose_stall_a_raising_waiting_for_cannot_explain(cli, tmp_path):
    """A coordinator that forgets its queue stalls node-2 and node-3; its waiting_for() raises.
    Before, `simulate` printed the one error line and nothing of the run: not who stalled, in
    which state, after what. Now it shows the run as `run` does — its figures, who has not
    finished, the audit — and ends NOT JUDGED (exit 2, as check and run), naming the process, its
    state, its last event and the seed that reaches it again; --json carries it as well."""
    stuck = central(tmp_path, "wf-forgets", FORGETS, RAISES)
    done = cli("simulate", "mutex", "-a", stuck, "-N", "3", "--requests", "1", "--seed", "0")
    assert done.returncode == 2, said(done)
    out = done.stdout
    assert "entries:            1 of 3 requests" in out, said(done)
    assert "STALLED — node-2 (WANTED) has not finished; what it waits for is unknown" in out, said(done)
    assert "STALLED — node-3 (WANTED) has not finished" in out, said(done)
    assert "audit: INCOMPLETE" in out, said(done)
    assert "NOT JUDGED (exit 2, as check and run say it): the stall cannot be explained: asking node-2" in out
    assert f"its waiting_for() raised ValueError: who knows at {stuck}:" in out, said(done)
    assert "node-2 was WANTED when asked, its last event line " in out, said(done)
    assert "seed 0, at event " in out, said(done)
    done = cli("simulate", "mutex", "-a", stuck, "-N", "3", "--requests", "1", "--json")
    summary = json.loads(done.stdout)
    assert done.returncode == 2 and summary["unexplained"]["process"] == "node-2", said(done)
    assert summary["unexplained"]["unknown"] == ["node-2", "node-3"], summary["unexplained"]
    assert summary["unexplained"]["last_event"].startswith("line "), summary["unexplained"]


def test_simulate_a_violation_is_not_hidden_by_a_raising_waiting_for(cli, tmp_path):
    """node-3 barges past the coordinator's holder (two inside) and the queue is forgotten (a
    stall); waiting_for() raises. Before: exit 2, the error alone, the violation never shown.
    Now the violation stands, exit 1, and the stall is still said unexplained (not NOT JUDGED)."""
    barge = (
        "        if self.holder is None:\n            return self._grant(msg.sender)",
        "        if self.holder is None or msg.sender == 3:\n            return self._grant(msg.sender)",
    )
    both = central(tmp_path, "wf-barge", FORGETS, barge, RAISES)
    done = cli("simulate", "mutex", "-a", both, "-N", "3", "--requests", "1", "--seed", "0")
    assert done.returncode == 1, said(done)
    assert "audit: VIOLATION" in done.stdout and "[capacity]" in done.stdout, said(done)
    assert "the stall cannot be explained: asking node-2" in done.stdout, said(done)
    assert "NOT JUDGED" not in done.stdout, said(done)


def test_simulate_bees_names_the_bee_and_its_last_event_from_the_written_trace(cli, tmp_path):
    """The bees' run is streamed (no trace held): a dying bee that never hands its reed's token on
    leaves the next bee of the reed in WAIT_REED, whose waiting_for() raises. The bee, its state,
    and, with --trace, its last event by line; without, where to find it."""
    text = (EXAMPLES / "solutions" / "bees_reed_tokens.py").read_text()
    for old, new in (
        ("if j == heir:", "if j == heir and False:"),
        (
            "    def waiting_for(self) -> dict[str, list[int]]:\n",
            "    def waiting_for(self) -> dict[str, list[int]]:\n"
            "        if self.state == S.WAIT_REED:\n            raise KeyError(self.pid)\n",
        ),
    ):
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "bees_wf.py"
    path.write_text(text.replace('NAME = "', 'NAME = "wf-'))
    common = ("simulate", "bees", "-a", path, "-P", "3", "-T", "2")
    done = cli(*common)
    assert done.returncode == 2, said(done)
    assert "STALLED — bee-3 (WAIT_REED) has not finished; what it waits for is unknown" in done.stdout
    assert "bee-3 was WAIT_REED when asked, its last event unknown (--trace FILE shows it)" in done.stdout
    trace = tmp_path / "bees.trace"
    done = cli(*common, "--trace", trace)
    assert done.returncode == 2, said(done)
    assert "bee-3 was WAIT_REED when asked, its last event line " in done.stdout, said(done)
    line = int(done.stdout.split("its last event line ")[1].split(":")[0])
    event = json.loads(trace.read_text().splitlines()[line - 1])
    assert event["pid"] == "bee-3" and event["event"] != "state", event
