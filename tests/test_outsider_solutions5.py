"""Solutions written from the docs alone, each in a style of its own (tests/outsiders/o5_*.py),
with the bug each plants (a module constant) found: every command judges both right."""

from __future__ import annotations

import shutil

from outsider_edits import OUTSIDERS, edited, said


def _copy(tmp_path, name):
    path = tmp_path / name
    shutil.copy(OUTSIDERS / name, path)
    return path


def test_a_singledispatchmethod_handler_dispatches_on_the_message(cli, tmp_path):
    """o5_dispatch_ra.py names one ``functools.singledispatchmethod`` in every cell. Before: the
    table took it from the class, so it dispatched on the node, and every REQ fell to the fallback
    (``node-2 cannot take REQ in state RELEASED``, exit 1) although the table accepts it."""
    path = _copy(tmp_path, "o5_dispatch_ra.py")
    done = cli("simulate", "mutex", "-a", path, "-N", "3", "-M", "2", "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    done = cli("check", "mutex", "-a", path, "-N", "3", "--cross-check", "--metrics")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    assert "cs: messages per entry min 4, max 4" in done.stdout, said(done)


def test_a_lazy_map_of_sends_is_a_finding_naming_the_handler(cli, tmp_path):
    """LAZY = True returns ``map(...)``: no list of effects, named by the handler's line."""
    path = edited(
        tmp_path, "o5_dispatch_ra.py", "o5-dispatch-ra", "o5", "lazy", ("LAZY = False", "LAZY = True")
    )
    ce = tmp_path / "lazy.json"
    done = cli("check", "mutex", "-a", path, "-N", "3", "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "the handler returned <map object>, not a list of effects" in done.stdout, said(done)
    assert f"{path}:58 (in _request)" in done.stdout and "replay reproduces it: yes" in done.stdout, said(
        done
    )
    done = cli("replay", ce, "-a", path)
    assert done.returncode == 1 and "RAISED: step 1 (request)" in done.stdout, said(done)
