"""Solutions written from the docs alone (tests/outsiders/o9_*.py), each with the bug a module
constant plants: every command judges both right. Small bounds: the whole file runs in seconds."""

from __future__ import annotations

from collections import Counter, OrderedDict, defaultdict

from outsider_edits import edited, said


def test_a_coordinator_subclass_built_by_a_factory_passes_and_granting_blindly_is_caught(cli, tmp_path):
    """o9_mutex_roles.py: a base Node class, a Coordinator subclass for node 1 (a deque of
    waiters), a factory as classic_algorithm's node. CHECK_HOLDER = False grants every REQUEST."""
    path = edited(tmp_path, "o9_mutex_roles.py", "o9-roles", "o9", "roles")
    done = cli("check", "mutex", "-a", path, "-N", "3", "--requests", "2", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("check", "mutex", "-a", path, "-N", "3", "--metrics")
    assert done.returncode == 0 and "cs: messages per entry min 0, max 3" in done.stdout, said(done)
    done = cli("compare", "--nodes", "3", "--algorithms", f"ricart-agrawala,{path}")
    assert done.returncode == 0 and "o9-roles" in done.stdout, said(done)
    blind = edited(
        tmp_path,
        "o9_mutex_roles.py",
        "o9-roles",
        "o9",
        "blind",
        ("CHECK_HOLDER = True", "CHECK_HOLDER = False"),
    )
    ce = tmp_path / "blind.json"
    done = cli("check", "mutex", "-a", blind, "-N", "2", "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — capacity: cs (capacity 1)" in done.stdout, said(done)
    done = cli("replay", ce, "-a", blind)
    assert done.returncode == 1 and "[capacity] cs (capacity 1)" in done.stdout, said(done)
    done = cli("simulate", "mutex", "-a", blind, "-N", "3", "--seed", "1")
    assert done.returncode == 1 and "[capacity]" in done.stdout, said(done)


def test_counters_and_defaultdicts_are_kept_by_the_default_snapshot(cli, tmp_path):
    """o9_kmutex_closures.py tallies answers in a Counter and owes them in a defaultdict(list).
    Before: check refused it, exit 2 ("cannot snapshot a Counter"), though simulate said SAFE.
    SLACK = 1 enters one answer early: K + 1 inside."""
    path = edited(tmp_path, "o9_kmutex_closures.py", "o9-kclosures", "o9", "kc")
    done = cli("check", "kmutex", "-a", path, "-N", "2", "-k", "1", "--requests", "2", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", path, "-N", "4", "-k", "2", "--requests", "2", "--seed", "5")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    slack = edited(
        tmp_path, "o9_kmutex_closures.py", "o9-kclosures", "o9", "slack", ("SLACK = 0", "SLACK = 1")
    )
    ce = tmp_path / "slack.json"
    done = cli("check", "kmutex", "-a", slack, "-N", "3", "-k", "2", "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — capacity: cs (capacity 2)" in done.stdout, said(done)
    done = cli("replay", ce, "-a", slack)
    assert done.returncode == 1 and "[capacity] cs (capacity 2)" in done.stdout, said(done)


def test_freeze_tells_the_collections_dicts_apart_by_kind_and_items():
    from mutexlab.protocols.kit import freeze

    tally: Counter[int] = Counter({3: 1})
    owed: defaultdict[int, list[int]] = defaultdict(list, {2: [1]})
    assert freeze(tally) == freeze(Counter({3: 1})) != freeze(Counter({3: 2}))
    assert freeze(owed) == ("defaultdict", ((2, (1,)),))
    assert freeze(OrderedDict(a=1)) != freeze({"a": 1})
    hash((freeze(tally), freeze(owed)))


def test_a_nonlocal_request_number_is_named_and_a_pure_closure_is_not(cli, tmp_path):
    """NONLOCAL = True numbers the requests in a closure every copy shares: not deterministic.
    Before, the finding named ``before`` too, a closure over the pid alone that keeps nothing."""
    path = edited(
        tmp_path, "o9_kmutex_closures.py", "o9-kclosures", "o9", "nl", ("NONLOCAL = False", "NONLOCAL = True")
    )
    done = cli("check", "kmutex", "-a", path, "-N", "2", "-k", "1", "--requests", "2")
    assert done.returncode == 1 and "node-1 is not deterministic" in done.stdout, said(done)
    assert "(its attribute numbered holds a function" in done.stdout, said(done)


def test_a_token_ledger_changed_with_replace_passes_and_a_second_token_is_caught(cli, tmp_path):
    """o9_phil_token_ledger.py: one token around the table, its ledger a frozen dataclass changed
    with dataclasses.replace. HOLDERS = (1, 3) puts a second token on the table."""
    path = edited(tmp_path, "o9_phil_token_ledger.py", "o9-token-ledger", "o9", "ledger")
    done = cli("check", "philosophers", "-a", path, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("check", "philosophers", "-a", path, "-N", "4", "--meals", "2", "--metrics")
    assert done.returncode == 0 and "meal: messages per entry min 0, max 1" in done.stdout, said(done)
    done = cli("simulate", "philosophers", "-a", path, "--seed", "2")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    two = edited(
        tmp_path,
        "o9_phil_token_ledger.py",
        "o9-token-ledger",
        "o9",
        "two",
        ("HOLDERS = (1,)", "HOLDERS = (1, 3)"),
    )
    ce = tmp_path / "two.json"
    done = cli("check", "philosophers", "-a", two, "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION" in done.stdout, said(done)
    done = cli("replay", ce, "-a", two)
    assert done.returncode == 1 and "[capacity] fork:" in done.stdout, said(done)


def test_a_generator_in_a_bee_is_refused_by_name_and_the_baton_passes(cli, tmp_path):
    """o9_bees_baton.py numbers its eggs from an iterator kept in the bee. Before, NUMBERS =
    "generator" stopped check with "internal error (a bug in mutexlab)", exit 4 (TypeError:
    cannot pickle 'generator' object); now exit 2 naming the bee and the attribute. RUSH = True
    hands the baton on from the reed: two bees on one reed."""
    from mutexlab.explore.session import Config, Session

    small = ("-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")
    path = edited(tmp_path, "o9_bees_baton.py", "o9-baton", "o9", "baton")
    done = cli("check", "bees", "-a", path, *small, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "bees", "-a", path, "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    gen = edited(
        tmp_path, "o9_bees_baton.py", "o9-baton", "o9", "gen", ('NUMBERS = "iter"', 'NUMBERS = "generator"')
    )
    done = cli("check", "bees", "-a", gen, *small)
    assert done.returncode == 2 and "internal error" not in done.stderr, said(done)
    assert "cannot copy the state of bee-1 (BatonBee" in done.stderr, said(done)
    assert "its attribute 'numbers' holds a generator" in done.stderr, said(done)
    session = Session(Config(str(gen), 3, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}))
    session.run_to_end(seed=0)
    fields = dict(session.state()["procs"][0]["fields"])
    assert fields["numbers"] == "<generator object count_up>", fields
    rush = edited(tmp_path, "o9_bees_baton.py", "o9-baton", "o9", "rush", ("RUSH = False", "RUSH = True"))
    ce = tmp_path / "rush.json"
    done = cli("check", "bees", "-a", rush, *small, "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION" in done.stdout, said(done)
    done = cli("replay", ce, "-a", rush)
    assert done.returncode == 1 and "[capacity] reed:1 (capacity 1)" in done.stdout, said(done)


def test_a_kept_token_changed_in_place_passes_and_random_or_a_default_list_are_findings(cli, tmp_path):
    """o9_mutex_sk_token.py keeps the TOKEN it received and changes its lists in place. PICK =
    "random" serves the queue by random.choice: check and replay stop at the step, not
    deterministic. HISTORY = True appends to a default argument: every process's at once."""
    path = edited(tmp_path, "o9_mutex_sk_token.py", "o9-sk-token", "o9", "sk")
    done = cli("check", "mutex", "-a", path, "-N", "3", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "mutex", "-a", path, "-N", "4", "--requests", "2", "--seed", "7")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    rnd = edited(
        tmp_path, "o9_mutex_sk_token.py", "o9-sk-token", "o9", "rnd", ('PICK = "first"', 'PICK = "random"')
    )
    ce = tmp_path / "rnd.json"
    done = cli("check", "mutex", "-a", rnd, "-N", "3", "--counterexample", ce)
    assert done.returncode == 1 and "node-1 is not deterministic" in done.stdout, said(done)
    done = cli("replay", ce, "-a", rnd)
    assert done.returncode == 1 and "RAISED: step" in done.stdout and "not deterministic" in done.stdout, (
        said(done)
    )
    hist = edited(
        tmp_path, "o9_mutex_sk_token.py", "o9-sk-token", "o9", "hist", ("HISTORY = False", "HISTORY = True")
    )
    named = "the default argument history of SKNode._pass()"
    done = cli("check", "mutex", "-a", hist, "-N", "2")
    assert done.returncode == 1 and named in done.stdout, said(done)
    done = cli("simulate", "mutex", "-a", hist, "-N", "2")
    assert done.returncode == 1 and named in done.stderr, said(done)


def test_a_card_shows_no_memory_address():
    """An attribute holding a partial or a generator was shown with its address (``at 0x7f…``):
    another text in every run."""
    import functools

    from mutexlab.show import fmt

    def numbers():
        yield 1

    class Node:
        def go(self) -> None:
            pass

    assert fmt(numbers()) == "<generator object test_a_card_shows_no_memory_address.<locals>.numbers>"
    assert " at 0x" not in fmt(functools.partial(Node().go))


def test_elves_drawing_contracts_with_their_own_generator_pass_and_the_module_s_is_named(cli, tmp_path):
    """o9_elves_lottery.py: Townsfolk, Mayor and Elf classes; an elf draws the contract it asks for
    with a random.Random of its own, kept in its state. DRAW = "module" draws with random.choice:
    not deterministic, found at the first delivery and replayed to it (simulate, one run, is SAFE:
    any draw is a right one). COUNT_TOOLS = False hands out pins it does not have."""
    path = edited(tmp_path, "o9_elves_lottery.py", "o9-lottery", "o9", "lottery")
    done = cli("check", "elves", "-a", path, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "elves", "-a", path, "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    module = edited(
        tmp_path, "o9_elves_lottery.py", "o9-lottery", "o9", "module", ('DRAW = "own"', 'DRAW = "module"')
    )
    ce = tmp_path / "module.json"
    done = cli("check", "elves", "-a", module, "--contracts", "3", "--counterexample", ce)
    assert done.returncode == 1 and "elf-1 is not deterministic" in done.stdout, said(done)
    done = cli("replay", ce, "-a", module)
    assert done.returncode == 1 and "RAISED: step 1 (deliver): elf-1 is not deterministic" in done.stdout, (
        said(done)
    )
    greedy = edited(
        tmp_path,
        "o9_elves_lottery.py",
        "o9-lottery",
        "o9",
        "greedy",
        ("COUNT_TOOLS = True", "COUNT_TOOLS = False"),
    )
    done = cli("check", "elves", "-a", greedy)
    assert done.returncode == 1 and "VIOLATION — capacity: pins (capacity 1)" in done.stdout, said(done)


def test_compare_given_a_problem_s_name_says_to_name_the_files(cli):
    """``compare --algorithms philosophers,…`` answered "unknown algorithm(s) philosophers; choose
    from lamport, ricart-agrawala, …", the classic algorithms, as if they solved it."""
    done = cli("compare", "--nodes", "3", "--algorithms", "philosophers,examples/solutions/chandy_misra.py")
    assert done.returncode == 2, said(done)
    assert "philosophers: a problem, and mutexlab has no solution of it by that name" in done.stderr, said(
        done
    )
    assert "lamport" not in done.stderr, said(done)


def test_a_sys_exit_in_make_setup_or_snapshot_is_named_not_a_silent_exit(cli, tmp_path):
    """Before: ``raise SystemExit(5)`` in make_setup ended check and simulate with exit 5 and
    nothing said (5: "--swarm found nothing"); one in snapshot() ended check with exit 1, the
    message alone. Now exit 2, each naming the line of the file."""
    small = ("-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")
    setup = edited(
        tmp_path,
        "o9_bees_baton.py",
        "o9-baton",
        "o9",
        "setup",
        ('    flowers = int(options.get("flowers", 3))', "    raise SystemExit(5)\n    flowers = 3"),
    )
    for command in ("check", "simulate"):
        done = cli(command, "bees", "-a", setup, *small)
        assert done.returncode == 2 and "building its setup raised SystemExit: 5 at " in done.stderr, said(
            done
        )
    snap = edited(
        tmp_path,
        "o9_bees_baton.py",
        "o9-baton",
        "o9",
        "snap",
        (
            "        return (self.state, self.clock.time,",
            "        raise SystemExit('no')\n        return (0,",
        ),
    )
    done = cli("check", "bees", "-a", snap, *small)
    assert done.returncode == 2 and "cannot keep the state of bee-1 (BatonBee" in done.stderr, said(done)
    assert "SystemExit: no at " in done.stderr, said(done)


def test_a_slotted_object_built_from_a_set_s_order_is_told_apart_in_a_fresh_interpreter(cli, tmp_path):
    """The coordinator keeps its deputy in an object of a ``__slots__`` class, chosen as the first
    of a set of names. Before: the interpreter check read a nested object's ``__dict__`` only —
    ``Deputy({})`` in every interpreter, check PASS, exit 0, though each process elects its own."""
    path = edited(
        tmp_path,
        "o9_mutex_roles.py",
        "o9-roles",
        "o9",
        "deputy",
        (
            "def make_node(",
            "class Deputy:\n    __slots__ = ('name',)\n\n    def __init__(self) -> None:\n"
            "        self.name = next(iter({'ada', 'grace', 'edsger', 'barbara', 'leslie'}))\n\n\n"
            "def make_node(",
        ),
        (
            "        self.waiting: deque[int] = deque()\n",
            "        self.waiting: deque[int] = deque()\n        self.deputy = Deputy()\n",
        ),
    )
    done = cli("check", "mutex", "-a", path, "-N", "2")
    assert done.returncode == 1 and "VIOLATION — interpreter: node-1's attribute deputy is" in done.stdout, (
        said(done)
    )
