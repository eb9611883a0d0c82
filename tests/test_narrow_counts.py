"""The compiled clocks' narrow counts (``fastclock/merge.c``: a byte an entry until a process counts
past 255, then 32 bits): the same tokens, serials and counts as clocks that are wide throughout and
as a plain Python clock, across 255 and with narrow and wide clocks merging each other; audited
runs whose processes count past 255 are the same as with numpy's clocks; broken builds of the
widening are caught by the same comparisons."""

from __future__ import annotations

import random
from array import array

import pytest
from test_fastclock import a_c_compiler, audited_run, both, broken_source  # noqa: F401 - the fixture

from mutexlab import fastclock
from mutexlab.protocols.registry import make_setup


class PlainClock:
    """A local-event clock as plainly as it can be said: a list of counts, a new serial on a tick
    and on a receive that brings news (``family`` holds the family's last serial)."""

    def __init__(self, family: list[int], own: int, start: list[int]) -> None:
        self.family, self.own = family, own
        self.token: tuple = (0, list(start), own)

    def tick(self) -> tuple:
        counts = list(self.token[1])
        counts[self.own] += 1
        return self._take(counts)

    def merge(self, token: tuple) -> tuple:
        mine, theirs = self.token[1], token[1]
        if token[0] == 0 or all(t <= m for t, m in zip(theirs, mine, strict=True)):
            return self.token
        return self._take([max(t, m) for t, m in zip(theirs, mine, strict=True)])

    def _take(self, counts: list[int]) -> tuple:
        self.family[0] += 1
        self.token = (self.family[0], counts, self.own)
        return self.token


def stream(clocks: list, seed: int, how: str = "merge", steps: int = 900) -> list[tuple[int, list[int], str]]:
    """Every token ``clocks`` return over random ticks and receives by ``Clock.<how>`` (each of a
    token given out earlier, the latest or an older one): (serial, counts, typecode or "list")."""
    rng = random.Random(seed)
    n = len(clocks)
    given: list[list[tuple]] = [[clock.token] for clock in clocks]
    out = []
    for _ in range(steps):
        p = rng.randrange(n)
        if rng.random() < 0.3:
            token = clocks[p].tick()
        else:
            older = given[rng.choice([q for q in range(n) if q != p])]
            token = getattr(clocks[p], how)(older[-1] if rng.random() < 0.6 else rng.choice(older))
        given[p].append(token)
        out.append((token[0], [int(c) for c in token[1]], width(token[1])))
    return out


def width(counts) -> str:
    """A token's counts' entry type: "B" (a byte an entry), "i" (32 bits), or "list" (the plain
    clock's); the compiled token's counts are a view of it, an array's are the array."""
    return "list" if isinstance(counts, list) else memoryview(counts).format


def compiled_stream(module, typecode: str, start: list[int], seed: int, how: str = "merge_unseen") -> list:
    family = module.Family(array(typecode, start))
    return stream([module.Clock(family, i) for i in range(len(start))], seed, how)


def plain_stream(start: list[int], seed: int) -> list:
    family = [0]
    return stream([PlainClock(family, i, start) for i in range(len(start))], seed)


def numbers(tokens: list) -> list[tuple[int, list[int]]]:
    return [(serial, counts) for serial, counts, _ in tokens]


START = [250, 247, 253, 240, 0]  # near 255: the clocks widen one after another, mid-stream


def check_across_255(module) -> None:
    """Narrow clocks that widen mid-stream give the plain clock's tokens, and so do clocks wide
    throughout: serials and counts alike, by both merges."""
    for seed in range(4):
        plain = numbers(plain_stream(START, seed))
        for how in ("merge_unseen", "merge"):
            assert numbers(compiled_stream(module, "B", START, seed, how)) == plain, (seed, how)
        assert numbers(compiled_stream(module, "i", START, seed)) == plain, seed


def test_a_clock_counts_in_bytes_then_in_32_bits_past_255():
    module = fastclock.compiled()
    assert module is not None
    family = module.Family(array("B", bytes(3)))
    clock, other = module.Clock(family, 1), module.Clock(family, 2)
    other.tick()
    clock.merge(other.token)
    for _ in range(255):
        token = clock.tick()
    assert width(token[1]) == "B" and list(token[1]) == [0, 255, 1]
    token = clock.tick()
    assert width(token[1]) == "i" and list(token[1]) == [0, 256, 1]
    merged = other.merge(token)  # a narrow clock taking a wide token's news: wide from then on
    assert width(merged[1]) == "i" and list(merged[1]) == [0, 256, 1]
    assert width(other.tick()[1]) == "i" and list(other.token[1]) == [0, 256, 2]
    assert width(clock.merge(other.token)[1]) == "i"


def test_narrow_clocks_give_the_plain_tokens_across_255():
    module = fastclock.compiled()
    assert module is not None
    check_across_255(module)
    kinds = {typecode for _, _, typecode in compiled_stream(module, "B", START, 0)}
    assert kinds == {"B", "i"}, "the stream mixes narrow and wide clocks"


def test_a_run_counting_past_255_is_the_same_with_either_clocks(monkeypatch):
    """Ricart–Agrawala, 3 nodes, 50 requests each: 300 local events a process, so every clock
    widens mid-run; every token the audit reads, the verdict and its findings as with numpy's."""
    module = fastclock.compiled()
    assert module is not None
    for seed in (0, 1):
        plain, compiled = both(monkeypatch, long_run(seed), seed, module)
        assert compiled == plain
        assert sum('"event": "enter"' in line for line in plain[0]) == 150
    kinds = {width(counts) for counts in run_counts(module)}
    assert kinds == {"B", "i"}, "the run starts narrow and widens"


def long_run(seed: int):
    return lambda: make_setup("ricart-agrawala", 3, {"requests": 50}, seed)


def run_counts(module) -> list:
    """The counts arrays of every enter's token in one compiled run that counts past 255."""
    from mutexlab.audit.stream import StreamAudit
    from mutexlab.sim import SimConfig, Simulation
    from mutexlab.trace import TraceWriter

    setup = long_run(0)()
    audit, counts = StreamAudit(), []

    def feed(event: dict) -> None:
        if event["event"] == "enter":
            counts.append(event["vc"][1])
        audit.feed(event)

    trace = TraceWriter(sink=feed, local_clocks=[setup.names[p] for p in sorted(setup.names)], tally=audit)
    audit.index = trace.clocks.index
    Simulation(setup, SimConfig(seed=0, max_events=200_000), trace, trace_bodies=False).run()
    assert audit.verdict().as_dict()["verdict"] == "SAFE"
    return counts


BROKEN = {
    "a narrow count that wraps past 255 instead of widening": (
        "== NARROW_MAX; /* one more needs 32 bits */",
        "== NARROW_MAX + 1; /* one more needs 32 bits */",
    ),
    "a narrow clock's and a wide token's equal entry taken for news": (
        "entry_at(theirs, theirs_wide, i) <= entry_at(mine, mine_wide, i)",
        "entry_at(theirs, theirs_wide, i) < entry_at(mine, mine_wide, i)",
    ),
    "a wide clock taking a narrow token's minimum": (
        "if (t > counts[i]) counts[i] = t;",
        "if (t < counts[i]) counts[i] = t;",
    ),
    "a wide token's news cut to a narrow clock's bytes": (
        "int keeps_width = mine_wide || !theirs_wide;",
        "int keeps_width = 1;",
    ),
}


# the variants the long audited run shows as well (an equal entry taken for news only takes a
# needless serial, on a mixed merge without news, which that run happens not to make)
SHOWN_BY_THE_RUN = set(BROKEN) - {"a narrow clock's and a wide token's equal entry taken for news"}


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_widening_is_caught(name, tmp_path, monkeypatch):
    monkeypatch.setenv("MUTEXLAB_CACHE", str(tmp_path / "cache"))  # the broken builds stay here
    module = fastclock.load(broken_source(tmp_path, *BROKEN[name]))
    assert module is not None
    with pytest.raises(AssertionError):
        check_across_255(module)
    if name in SHOWN_BY_THE_RUN:
        try:
            plain, broken = both(monkeypatch, long_run(0), 0, module)
        except (KeyError, ValueError):  # the audit refuses what the broken clocks say
            return
        assert broken != plain, f"the audited run missed the broken build ({name})"
