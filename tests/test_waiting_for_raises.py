"""A solution's ``waiting_for()`` that raises (a ``sys.exit()`` too) is named with its line, exit 2:
never "internal error (a bug in mutexlab, not in your algorithm)", which it said before (exit 4).
It is asked only to explain a stall, so the stall below (a coordinator that never grants again)
is what makes every command ask it."""

from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "protocols" / "central.py"


def stuck(tmp_path: Path, raising: str) -> Path:
    """central.py whose coordinator forgets its queue on RELEASE, and whose waiting_for() raises."""
    text = EXAMPLE.read_text()
    for old, new in (
        ('"central"', f'"central-wf-{len(raising)}"'),
        ("return self._grant(self.queue.pop(0)) if self.queue else []", "return []"),
        (
            "    def _grant(self, to: int) -> list:",
            f"    def waiting_for(self):\n        {raising}\n\n    def _grant(self, to: int) -> list:",
        ),
    ):
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "central_wf.py"
    path.write_text("import sys\n" + text)
    return path


@pytest.mark.parametrize(
    ("raising", "named"),
    (('raise ValueError("who knows")', "ValueError: who knows"), ("sys.exit(3)", "SystemExit: 3")),
)
@pytest.mark.parametrize(
    "command",
    (("check", "mutex", "-N", "2", "--requests", "1"), ("simulate", "mutex", "-N", "3", "--requests", "1")),
)
def test_waiting_for_raising_is_named_with_its_line(cli, tmp_path, raising, named, command):
    path = stuck(tmp_path, raising)
    done = cli(*command, "-a", path)
    said = f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert done.returncode == 2, said
    # both show the run or the path it stalled, and the error with it (test_outsider_solutions12/13.py)
    shown = done.stdout
    assert f"its waiting_for() raised {named} at {path}:" in shown, said
    assert "internal error" not in done.stdout + done.stderr, said
