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


def test_nodes_built_from_the_order_of_a_set_of_strings_are_named_by_check(cli, tmp_path):
    """o5_roster_central.py elects its coordinator from a frozenset of names. ELECTION = "first"
    takes ``next(iter(names))``: every node of one interpreter agrees, so ``check`` searched and
    said PASS, ``simulate`` SAFE and ``run`` (its processes forked from one) SAFE; processes
    started anew (compose, ``MUTEXLAB_SPAWN=exec``) each elect their own coordinator and two are
    inside at once. Before: exit 0, PASS."""
    path = _copy(tmp_path, "o5_roster_central.py")
    done = cli("check", "mutex", "-a", path, "-N", "3", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    first = edited(
        tmp_path,
        "o5_roster_central.py",
        "o5-roster-central",
        "o5",
        "first",
        ('ELECTION = "sorted"', 'ELECTION = "first"'),
    )
    done = cli("check", "mutex", "-a", first, "-N", "3")
    assert done.returncode == 1, said(done)
    assert "verdict:      VIOLATION — interpreter: node-1's attribute boss is " in done.stdout, said(done)
    assert "in a fresh one (PYTHONHASHSEED=" in done.stdout and "the order of a set of strings" in done.stdout
    done = cli("check", "mutex", "-a", first, "-N", "3", "--json")
    assert done.returncode == 1 and '"kind": "interpreter"' in done.stdout, said(done)


def test_a_node_whose_init_takes_too_little_is_named_with_its_line(cli, tmp_path):
    """An ``__init__(self, pid, n)``: exit 2 naming the file and the line of that ``__init__``,
    with what to write. Before: no line, and no ``def`` to copy for a mutex node."""
    path = edited(
        tmp_path,
        "o5_roster_central.py",
        "o5-roster-central",
        "o5",
        "narrow",
        ("    def __init__(self, pid, n, requests=0, clock=0):", "    def __init__(self, pid, n):"),
        ("super().__init__(pid, n, requests, clock)", "super().__init__(pid, n)"),
    )
    line = path.read_text().splitlines().index("    def __init__(self, pid, n):") + 1
    for command in ("simulate", "check"):
        done = cli(command, "mutex", "-a", path, "-N", "2")
        assert done.returncode == 2 and "Traceback" not in done.stderr, said(done)
        assert f"{path}: a mutex node is built as RosterNode(pid, n, requests, clock)" in done.stderr, said(
            done
        )
        assert (
            f"its __init__ (line {line}) must take them all (def __init__(self, pid, n, requests=0, clock=0))"
            in (done.stderr)
        ), said(done)


BEES = ["-P", "3", "-T", "1", "-K", "1", "--eggs", "1", "--cocoons", "1"]


def test_bees_with_a_queen_are_counted_by_their_final_states(cli, tmp_path):
    """o5_bees_queen.py notes its eggs and nothing else: its bees end DEAD or RETIRED. Before:
    ``bees: 0 dead, 0 retired`` (counted from mutexlab's own bees' notes) where 4 died and 1
    retired."""
    path = _copy(tmp_path, "o5_bees_queen.py")
    done = cli(
        "simulate", "bees", "-a", path, "-P", "5", "-T", "2", "-K", "2", "--eggs", "2", "--cocoons", "4"
    )
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    assert "bees: 4 dead, 1 retired (no room left)" in done.stdout, said(done)
    done = cli("check", "bees", "-a", path, "-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)


def test_a_reed_given_twice_is_found_and_its_counterexample_replays(cli, tmp_path):
    """RECYCLE = True counts a reed's room again when its bee leaves: a second egg on a reed of
    one cocoon. Before: ``replay reproduces it: NO`` although the replay's audit says the very
    sentence (``reed:1 got a 2nd egg``, which names no bee: the check's finding names two)."""
    path = edited(
        tmp_path, "o5_bees_queen.py", "o5-bees-queen", "o5", "recycle", ("RECYCLE = False", "RECYCLE = True")
    )
    ce = tmp_path / "ce.json"
    done = cli("check", "bees", "-a", path, *BEES, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — invariant: [eggs-per-reed] reed:1 got a 2nd egg (at most 1)" in done.stdout, said(
        done
    )
    assert "(replay reproduces it: yes — reed:1 got a 2nd egg (at most 1))" in done.stdout, said(done)
    done = cli("replay", ce, "-a", path)
    assert done.returncode == 1 and "[eggs-per-reed] reed:1 got a 2nd egg" in done.stdout, said(done)


def test_layers_of_super_pass_and_a_list_in_a_base_class_body_is_named_by_that_class(cli, tmp_path):
    """o5_kmutex_layers.py: Ricart–Agrawala for K over three classes; its deferred requests made a
    list in the body of the middle class, appended to, is every node's: named by that class."""
    path = _copy(tmp_path, "o5_kmutex_layers.py")
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)
    shared = edited(
        tmp_path,
        "o5_kmutex_layers.py",
        "o5-kmutex-layers",
        "o5",
        "shared",
        ("    deferred = ()\n", "    deferred = []\n"),
        (
            "self.deferred = self.deferred + ((msg.sender, msg.ts),)",
            "self.deferred.append((msg.sender, msg.ts))",
        ),
    )
    done = cli("check", "kmutex", "-a", shared, "-N", "3", "-k", "2")
    assert done.returncode == 1, said(done)
    assert "Permissions.deferred is an attribute of the class, and a handler changed it" in done.stdout, said(
        done
    )


def test_forks_in_a_namedtuple_pass_and_a_coin_flip_is_not_deterministic(cli, tmp_path):
    """o5_phil_hierarchy.py: forks as tokens asked for lowest first, each hand a NamedTuple
    replaced with ``_replace``; JITTER = True flips ``random.random()`` for the order."""
    path = _copy(tmp_path, "o5_phil_hierarchy.py")
    done = cli("check", "philosophers", "-a", path, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "philosophers", "-a", path, "-M", "2", "--seed", "1")
    assert done.returncode == 0 and "meals eaten: 10 of 10" in done.stdout, said(done)
    jitter = edited(
        tmp_path,
        "o5_phil_hierarchy.py",
        "o5-phil-hierarchy",
        "o5",
        "jitter",
        ("JITTER = False", "JITTER = True"),
    )
    ce = tmp_path / "jitter.json"
    for _ in range(3):  # before: check's probe drew by chance, and stopped later than the replay in
        done = cli("check", "philosophers", "-a", jitter, "--counterexample", ce)  # about half the runs
        assert done.returncode == 1 and "is not deterministic" in done.stdout, said(done)
        assert "path (3 steps)" in done.stdout and "replay reproduces it: yes" in done.stdout, said(done)
