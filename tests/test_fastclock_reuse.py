"""The compiled clock's receive without a copy (``fastclock/merge.c``): a clock reads its own counts
through a view it holds, and when nothing but the clock sees its array and token (``alone``) a
receive with news writes the array in place and gives the token itself the new serial. Held to a
plain Python clock token for token, serials and counts, over streams where most tokens are
dropped as soon as they are made (as a message is once received), so that a clock is often alone;
broken builds of the held view and of the reused token are caught by the same comparison."""

from __future__ import annotations

import random
from array import array
from collections import deque

import pytest
from test_fastclock import a_c_compiler, both, broken_source  # noqa: F401 - the fixture
from test_narrow_counts import START, PlainClock

from mutexlab import fastclock
from mutexlab.protocols.registry import make_setup


def dropping_stream(
    clocks: list, seed: int, how: str = "merge", steps: int = 1500
) -> list[tuple[int, list[int]]]:
    """Every token ``clocks`` return over random ticks and receives by ``Clock.<how>``: (serial,
    counts), read as soon as it is returned. A token is kept (in flight, for a later receive) only
    at random, among the last three of its process; the others are dropped at once, so a clock's
    array and token are often its own alone."""
    rng = random.Random(seed)
    n = len(clocks)
    flying: list[deque] = [deque(maxlen=3) for _ in clocks]
    out = []
    for _ in range(steps):
        p = rng.randrange(n)
        if rng.random() < 0.25:
            token = clocks[p].tick()
        else:
            sender = rng.choice([q for q in range(n) if q != p])
            kept = flying[sender]
            theirs = rng.choice(kept) if kept and rng.random() < 0.7 else clocks[sender].token
            token = getattr(clocks[p], how)(theirs)
            del theirs
        out.append((token[0], [int(c) for c in token[1]]))
        if rng.random() < 0.3:
            flying[p].append(token)
        del token  # nothing but the clock (and maybe a kept message) holds it now
    return out


def check_dropping(module) -> None:
    """Narrow clocks (widening mid-stream: ``START``), clocks wide throughout and clocks from zero,
    by both merges, give the plain clock's tokens."""
    for seed in range(4):
        for start in (START, [0] * 6):
            family = [0]
            plain = dropping_stream([PlainClock(family, i, start) for i in range(len(start))], seed)
            for typecode in ("B", "i"):
                if typecode == "B" and max(start) > 255:
                    continue
                for how in ("merge_unseen", "merge"):
                    built = module.Family(array(typecode, start))
                    clocks = [module.Clock(built, i) for i in range(len(start))]
                    assert dropping_stream(clocks, seed, how) == plain, (seed, start, typecode, how)


def test_a_clock_alone_merges_in_place_as_the_plain_clock_does():
    module = fastclock.compiled()
    assert module is not None
    check_dropping(module)


def test_a_token_held_elsewhere_is_never_changed_by_a_receive():
    """A token returned, then kept (as a message in flight holds it), keeps its serial and counts
    through every later receive of its clock."""
    module = fastclock.compiled()
    assert module is not None
    family = module.Family(array("B", bytes(3)))
    mine, a, b = (module.Clock(family, i) for i in range(3))
    mine.merge(a.tick())  # mine's own array now: later news may be written in place
    held = mine.merge(b.tick())
    before = (held[0], list(held[1]))
    for _ in range(3):
        mine.merge(a.tick())
        mine.merge(b.tick())
    assert (held[0], list(held[1])) == before
    assert list(mine.token[1]) == [0, 4, 4] and mine.token[0] > held[0]


BROKEN = {
    "a receive that compares with the clock's earlier counts (the new token not taken)": (
        "if (token != self->token) Py_SETREF(self->token, token);",
        "if (token != self->token) return (PyObject *)token;",
    ),
    "a reused token that keeps its old serial": (
        "token->serial = ++self->family->serial;",
        "if (token != self->token) token->serial = ++self->family->serial; else ++self->family->serial;",
    ),
    "a token reused while a message still holds it": (
        "return Py_REFCNT(self->token) == 1;",
        "return Py_REFCNT(self->token) >= 1;",
    ),
}


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_receive_without_a_copy_is_caught(name, tmp_path, monkeypatch):
    monkeypatch.setenv("MUTEXLAB_CACHE", str(tmp_path / "cache"))  # the broken builds stay here
    module = fastclock.load(broken_source(tmp_path, *BROKEN[name]))
    assert module is not None
    with pytest.raises(AssertionError):
        check_dropping(module)


def test_the_held_view_is_caught_by_an_audited_run_as_well(tmp_path, monkeypatch):
    """The view not moved shows in an audited run's clocks too (the fast loop drops each token
    once received, as the streams above do)."""
    monkeypatch.setenv("MUTEXLAB_CACHE", str(tmp_path / "cache"))
    module = fastclock.load(broken_source(tmp_path, *next(iter(BROKEN.values()))))
    assert module is not None
    plain, broken = both(
        monkeypatch, lambda: make_setup("bees", 12, {"flowers": 2, "reeds": 4}, 0), 0, module
    )
    assert broken != plain
