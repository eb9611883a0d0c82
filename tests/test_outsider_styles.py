"""tests/outsiders/ra_match.py: Ricart–Agrawala on a base class of its author's own, every message
taken by one handler with ``match``, requests as ``NamedTuple`` tickets, frozensets in its
state, no ``waiting_for()`` of its own. Every command takes it, and ``check --metrics`` gives
the textbook's figures."""

from __future__ import annotations

import shutil

from outsider_edits import OUTSIDERS, said


def test_ricart_agrawala_in_its_own_style_passes_and_its_figures_are_the_textbooks(cli, tmp_path):
    """Before: messages per entry min 2, max 6 (a deferred OK, sent at the exit, was charged to
    the leaver's request: the kit's default ``waiting_for()`` named no message), where the
    built-in Ricart–Agrawala reads 4 to 4, 2(N−1)."""
    path = tmp_path / "ra_match.py"
    shutil.copy(OUTSIDERS / "ra_match.py", path)
    done = cli("check", "mutex", "-a", path, "-N", "3", "--metrics", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    assert "cs: messages per entry min 4, max 4 (a run's average: 4 to 4)" in done.stdout, said(done)
    done = cli("simulate", "mutex", "-a", path, "-N", "4", "-M", "2")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    broken = tmp_path / "ra_match_eager.py"  # answers every request while wanting: two inside
    broken.write_text(
        path.read_text()
        .replace(
            "self.state is HELD or (self.state is WANTED", "self.state is HELD and (self.state is WANTED"
        )
        .replace('"ra-match"', '"ra-match-eager"')
    )
    done = cli("check", "mutex", "-a", broken, "-N", "2")
    assert done.returncode == 1 and "VIOLATION — capacity: cs (capacity 1)" in done.stdout, said(done)
