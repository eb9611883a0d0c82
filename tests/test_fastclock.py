"""The compiled local-event clocks (``mutexlab/fastclock``) against numpy's plain ones: their
comparison and maximum give the same answer on every small pair of clocks, and audited runs are the
same — every enter's clock, every token's serial, the verdict and its findings — with either;
broken builds (each compiled from an edited source) are caught by the same comparisons."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import missing
from test_bees_broken import VARIANTS
from test_stream_audit import broken_bees

from mutexlab import fastclock
from mutexlab.audit.stream import StreamAudit
from mutexlab.clock import LocalEventClocks
from mutexlab.protocols.registry import make_setup
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceWriter


@pytest.fixture(autouse=True)
def a_c_compiler():
    """The compiled merge needs ``cc``: without it only the plain merge runs, and these tests say so
    (a skip elsewhere, a failure under CI, which installs one)."""
    if shutil.which("cc") is None:
        missing("no C compiler (cc): the compiled merge cannot be built, only the plain one runs")


def test_the_compiled_clocks_are_built_and_used():
    module = fastclock.compiled()
    assert module is not None and fastclock.merge() is module.merge
    setup = make_setup("bees", 3, {"flowers": 1, "reeds": 1}, 0)
    trace = TraceWriter(sink=lambda e: None, local_clocks=[setup.names[p] for p in sorted(setup.names)])
    assert (
        trace.clocks is not None and type(trace.clocks.clock(setup.names[min(setup.names)])) is module.Clock
    )


def plain_merge(mine, theirs, spare) -> bool:
    """What ``clock.LocalEventClock.merge`` does with numpy, in the compiled merge's terms (on
    numpy arrays or ``array("i")``, as the clocks hold them)."""
    mine, theirs, spare = (np.frombuffer(x, dtype=np.int32) for x in (mine, theirs, spare))
    if not (theirs > mine).any():
        return False
    np.maximum(mine, theirs, out=spare)
    return True


def check_pairs(merge) -> None:
    """Every pair of clocks of 3 entries, each 0..2, and some long random ones: the same result and,
    on news, the same maximum; the inputs never written."""
    pairs = [
        (np.array(a, dtype=np.int32), np.array(b, dtype=np.int32))
        for a in itertools.product(range(3), repeat=3)
        for b in itertools.product(range(3), repeat=3)
    ]
    rng = np.random.default_rng(0)
    for n in (1, 7, 200, 1001):
        mine = rng.integers(0, 50, n, dtype=np.int32)
        pairs += [
            (mine, mine.copy()),
            (mine, np.maximum(mine - 1, 0)),
            (mine, rng.integers(0, 50, n, dtype=np.int32)),
        ]
        last = mine.copy()
        last[-1] += 1
        pairs.append((mine, last))
    for mine, theirs in pairs:
        before = (mine.copy(), theirs.copy())
        spare, expected = np.full_like(mine, -7), np.full_like(mine, -7)
        news = merge(mine, theirs, spare)
        assert news == plain_merge(mine, theirs, expected), (mine, theirs)
        if news:
            assert spare.tolist() == expected.tolist(), (mine, theirs)
        assert mine.tolist() == before[0].tolist() and theirs.tolist() == before[1].tolist()


def test_the_compiled_merge_is_numpys_on_every_small_pair():
    check_pairs(fastclock.merge())


def test_the_compiled_merge_refuses_buffers_that_do_not_fit():
    merge = fastclock.merge()
    with pytest.raises(ValueError, match="one length"):
        merge(np.zeros(3, np.int32), np.zeros(4, np.int32), np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="one length"):
        merge(np.zeros(6, np.int32), np.zeros(6, np.int32), np.zeros(3, np.int64))  # 24 bytes each
    with pytest.raises(BufferError):
        merge(np.zeros(3, np.int32), np.zeros(3, np.int32), b"\0" * 12)  # not writable


def audited_run(build, seed: int) -> tuple[list[str], dict]:
    """A run audited as it goes, its sends and receives tallied (the simulator's inline path):
    every event the audit reads, with its local-event clock token (serial, counts, owner), and
    the verdict with its findings."""
    setup = build()
    audit = StreamAudit()
    seen: list[str] = []

    def feed(event: dict) -> None:
        seen.append(json.dumps(event, default=lambda v: v.tolist(), sort_keys=True))
        audit.feed(event)

    names = [setup.names[p] for p in sorted(setup.names)]
    trace = TraceWriter(sink=feed, local_clocks=names, tally=audit)
    audit.index = trace.clocks.index
    Simulation(setup, SimConfig(seed=seed, max_events=200_000), trace, trace_bodies=False).run()
    verdict = audit.verdict()
    return seen, {"render": verdict.render(), "as_dict": verdict.as_dict()}


RUNS = [
    ("bees-12", lambda s: lambda: make_setup("bees", 12, {"flowers": 2, "reeds": 4}, s)),
    ("bees-40", lambda s: lambda: make_setup("bees", 40, {"flowers": 4, "reeds": 14}, s)),
    ("ricart-agrawala-6", lambda s: lambda: make_setup("ricart-agrawala", 6, {"requests": 4}, s)),
    ("raymond-7", lambda s: lambda: make_setup("raymond", 7, {"requests": 3}, s)),
    *(  # broken bees whose runs the audit finds unsafe: the same findings, on the same lines
        (f"broken-{v[0].__name__}-P{v[1]}", lambda s, v=v: broken_bees(*v[:4], s))
        for v in (VARIANTS[0], VARIANTS[2], VARIANTS[5])
    ),
]


def both(monkeypatch, build, seed, module):
    """The run with numpy's clocks, then with ``module``'s."""
    monkeypatch.setattr(fastclock, "compiled", lambda: None)
    plain = audited_run(build, seed)
    monkeypatch.setattr(fastclock, "compiled", lambda: module)
    return plain, audited_run(build, seed)


@pytest.mark.parametrize("name,make", RUNS, ids=[r[0] for r in RUNS])
def test_audited_runs_are_the_same_with_either_merge(name, make, monkeypatch):
    for seed in (0, 1):
        plain, compiled = both(monkeypatch, make(seed), seed, fastclock.load(fastclock.SOURCE))
        assert compiled == plain
        assert any('"event": "enter"' in line for line in plain[0])


def broken_source(tmp_path: Path, old: str, new: str) -> Path:
    text = fastclock.SOURCE.read_text()
    assert text.count(old) == 1, f"the broken variant no longer applies: {old!r}"
    path = tmp_path / "merge.c"
    path.write_text(text.replace(old, new))
    return path


BROKEN_C = {
    "an equal entry taken for news": ("theirs[i] <= mine[i]", "theirs[i] < mine[i]"),
    "a block counted only when all of it is news": ("news |= t > m", "news &= t > m"),
    "the maximum taken as the minimum": ("(t & greater) | (c & ~greater)", "(c & greater) | (t & ~greater)"),
    "the last entry never compared": ("while (i < n &&", "while (i < n - 1 &&"),
    "a change that takes no new serial": (
        "token->serial = ++self->family->serial;",
        "token->serial = self->family->serial;",
    ),
    "a tick that writes the token it shares": (
        "Token *t = alone(self) && !widens ? mine",
        "Token *t = !widens ? mine",
    ),
    "news written into a token a message or an event still holds (the merge not asking)": (
        "Token *t = alone(self) && keeps_width ? mine",
        "Token *t = keeps_width ? mine",
    ),
    "a token taken for its clock's alone while a message or an event still holds it": (
        "return Py_REFCNT(self->token) == 1;",
        "return Py_REFCNT(self->token) >= 1;",
    ),
}


BROKEN_C["a receive skipped when the sender's own entry brings nothing (merge_unseen)"] = (
    "Py_ssize_t first = mine_wide != theirs_wide ?",
    "Py_ssize_t first = !seen && entry_at(p.buf, theirs_wide, p.sender) <= entry_at(counts, mine_wide, p.sender) ? n"
    " : mine_wide != theirs_wide ?",
)

BROKEN_C["the clock called without merging (the fast loop's call)"] = (
    "    return merge_token((Clock *)self, args[0], 0);\n}",
    "    return Py_NewRef((PyObject *)((Clock *)self)->token);\n}",
)


KERNEL = set(list(BROKEN_C)[:4])  # broken in the comparison or the maximum: ``merge`` shows it too


@pytest.mark.parametrize("name", BROKEN_C)
def test_a_broken_build_is_caught(name, tmp_path, monkeypatch):
    monkeypatch.setenv("MUTEXLAB_CACHE", str(tmp_path / "cache"))  # the broken builds stay here
    module = fastclock.load(broken_source(tmp_path, *BROKEN_C[name]))
    assert module is not None
    caught = []
    try:
        check_pairs(module.merge)
    except AssertionError:
        caught.append("pairs")
    for run_name, make in RUNS[:3]:
        plain, broken = both(monkeypatch, make(0), 0, module)
        if broken != plain:
            caught.append(run_name)
    runs = [c for c in caught if c != "pairs"]
    assert runs, f"no audited run caught the broken build ({name}); caught by {caught}"
    assert name not in KERNEL or "pairs" in caught, f"the pairs missed the broken merge ({name})"


def token_stream(module, how: str, seed: int, n: int = 5, steps: int = 600) -> list[tuple[int, list[int]]]:
    """Every token a family of ``n`` clocks returns over ``steps`` random ticks and receives, each
    receive of a token given out earlier (the latest or an older one, so a sender's token often
    comes again, as over a link): (serial, counts). ``module``: a compiled one, its receives by
    ``Clock.<how>``; None: numpy's clocks (``merge``)."""
    import random
    from array import array

    rng = random.Random(seed)
    if module is None:
        family = LocalEventClocks([f"p{i}" for i in range(n)], compiled=False)
        clocks = [family.clock(f"p{i}") for i in range(n)]
    else:
        zero = module.Family(array("i", bytes(4 * n)))
        clocks = [module.Clock(zero, i) for i in range(n)]
    given: list[list[tuple]] = [[clock.token] for clock in clocks]
    out = []
    for _ in range(steps):
        p = rng.randrange(n)
        if rng.random() < 0.25:
            token = clocks[p].tick()
        else:
            sender = rng.choice([q for q in range(n) if q != p])
            older = given[sender]
            theirs = older[-1] if rng.random() < 0.6 else rng.choice(older)
            token = getattr(clocks[p], how)(theirs) if module is not None else clocks[p].merge(theirs)
        given[p].append(token)
        out.append((token[0], [int(c) for c in token[1]]))
    return out


@pytest.mark.parametrize("how", ["merge", "merge_unseen", "__call__"])
def test_merge_unseen_gives_merges_tokens(how):
    """``merge_unseen`` (the fast loop's, without the table of serials last read), and the clock
    called (``clock(token)``: the same, as the fast loop calls it), return what ``merge`` and
    numpy's clocks return, token for token, serials included, also for a token it took before
    (compared again: no news, the same token back)."""
    module = fastclock.compiled()
    assert module is not None
    for seed in range(4):
        assert token_stream(module, how, seed) == token_stream(None, "merge", seed)


def test_a_broken_merge_unseen_is_caught_by_the_token_stream(tmp_path, monkeypatch):
    monkeypatch.setenv("MUTEXLAB_CACHE", str(tmp_path / "cache"))
    name = "a receive skipped when the sender's own entry brings nothing (merge_unseen)"
    module = fastclock.load(broken_source(tmp_path, *BROKEN_C[name]))
    assert module is not None
    assert token_stream(module, "merge", 0) == token_stream(None, "merge", 0)  # merge is not broken
    assert any(token_stream(module, "merge_unseen", s) != token_stream(None, "merge", s) for s in range(4))


def test_the_fast_loop_merges_with_merge_unseen():
    """The tallied fast loop binds each compiled clock itself, whose call is its ``merge_unseen``
    (merge.c: it skips the table of serials last read, the P = 400 merge's costliest load, and a
    receive touches no bound method); a run rebinding ``merge`` would be the same run, only
    slower, which no other test sees."""
    setup = make_setup("bees", 6, {"flowers": 1, "reeds": 2}, 0)
    audit = StreamAudit()
    names = [setup.names[p] for p in sorted(setup.names)]
    trace = TraceWriter(sink=audit.feed, local_clocks=names, tally=audit)
    audit.index = trace.clocks.index
    sim = Simulation(setup, SimConfig(seed=0), trace, trace_bodies=False)
    sim.run()
    clocks, merges = sim._fast_clocks  # noqa: SLF001 - what the fast loop bound
    assert merges and all(merges[pid][0] is clocks[pid] for pid in clocks)


def test_a_refused_token_is_read_again_when_it_comes_back():
    """A token whose counts do not fit is refused; its serial is not remembered as read, so the
    same token with fitting counts still merges (a serial is kept only once the token was read)."""
    module = fastclock.compiled()
    assert module is not None
    from array import array

    family = module.Family(array("i", [0, 0, 0]))
    mine = module.Clock(family, 0)
    serial = family.next_serial()
    with pytest.raises(ValueError):
        mine.merge((serial, array("i", [0, 5]), 1))  # two entries for a family of three
    merged = mine.merge((serial, array("i", [0, 5, 0]), 1))
    assert list(merged[1]) == [0, 5, 0]


def check_wide_serials(module, start: int) -> None:
    """The serial last taken from each sender is kept in 32 bits: a serial beyond them is never
    taken for one already read (its news is merged), and one within them still skips."""
    from array import array

    family = module.Family(array("i", [0, 0, 0]), start)
    sender, mine = module.Clock(family, 1), module.Clock(family, 0)
    for k in range(1, 4):  # across 2**32 for start = 2**32 - 2
        token = sender.tick()
        assert token[0] > start  # the family counts on from start (a merge with news takes one too)
        assert list(mine.merge(token)[1]) == [0, k, 0]
        before = mine.token
        assert mine.merge(token) is before  # the same token again: no news, the same token back


def test_a_family_refuses_serials_below_zero():
    module = fastclock.compiled()
    assert module is not None
    from array import array

    with pytest.raises(ValueError, match="0 or above"):
        module.Family(array("i", [0]), -1)


def test_a_family_and_a_clock_are_initialised_once():
    """A second ``__init__`` of a family with another length left its clocks' ``last[]`` sized by
    the first: reads and writes past its end. Both refuse it and stay as they were."""
    module = fastclock.compiled()
    assert module is not None
    from array import array

    family = module.Family(array("i", [0, 0]))
    clock = module.Clock(family, 1)
    with pytest.raises(TypeError, match="initialised once"):
        family.__init__(array("i", [0] * 5))
    with pytest.raises(TypeError, match="initialised once"):
        clock.__init__(family, 0)
    assert len(family.zero) == 2 and clock.token[2] == 1


@pytest.mark.parametrize("compiled", [False, True], ids=["plain", "compiled"])
@pytest.mark.parametrize("serial", [-1, -(2**40)])
def test_a_token_with_a_serial_below_zero_is_refused_alike_by_both_clocks(compiled, serial):
    """No family gives out a serial below 0. The compiled clock took one in (cut to 32 bits, -1
    passed for the serial 2**32 - 1 last read from that sender, and its news was skipped): both
    clocks now refuse it, naming the serial, and the clock is unchanged."""
    clocks = LocalEventClocks(["a", "b", "c"], compiled=compiled)
    assert (clocks._fast is not None) == compiled  # noqa: SLF001 - which clock is under test
    mine, sender = clocks.clock("a"), clocks.clock("b")
    token = sender.tick()
    before = mine.token
    with pytest.raises(ValueError, match="serial below 0"):
        mine.merge((serial, token[1], token[2]))
    assert mine.token is before
    assert list(mine.merge(token)[1]) == [0, 1, 0], "the genuine token still merges"


@pytest.mark.parametrize("start", [0, 2**32 - 2, 2**32, 2**33 + 7])
def test_serials_beyond_32_bits_still_merge_and_skip(start):
    module = fastclock.compiled()
    assert module is not None
    check_wide_serials(module, start)


def test_a_serial_beyond_32_bits_taken_for_one_read_is_caught(tmp_path, monkeypatch):
    """The broken build compares the cut serial: the first token beyond 32 bits (kept as 0, like
    none read) is taken for one read and its news lost."""
    monkeypatch.setenv("MUTEXLAB_CACHE", str(tmp_path / "cache"))
    old = "p.serial <= UINT32_MAX && self->last[p.sender] == (uint32_t)p.serial"
    module = fastclock.load(broken_source(tmp_path, old, "self->last[p.sender] == kept(p.serial)"))
    assert module is not None
    check_wide_serials(module, 0)  # within 32 bits the broken build is right
    with pytest.raises(AssertionError):
        check_wide_serials(module, 2**32)
