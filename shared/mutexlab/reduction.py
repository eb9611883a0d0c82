"""What a protocol licenses ``mutexlab check`` to reduce, declared on its spec (``reductions``).

A reduction merges worlds or skips interleavings. It is sound only for code that reads its
fields the way the reduction's argument says, so a declaration is tied to **exact classes**:
``Reductions.covers`` holds when every process is an instance of one of ``classes`` and of no
subclass. A variant (a subclass) is other code: it gets no reduction unless it declares one
itself (``RA_REDUCTIONS.only(MyNode)``, after checking that the reasons still hold for it).
Nothing is inferred from a base class.

The class is not all of the code: a process's **parts** (its attributes) carry code too — a
clock object, a replaced method. A declaration names them (``parts``: attribute → the exact
types its value may have); a process with an attribute not named there, or of another type,
is not covered (``Reductions.strange`` says which), so a node of the right class with another
clock gets no reduction. And since no declaration is proven, ``check`` also samples each
reduction on the worlds it visits (``check/sampling.py``) and refuses one whose twin worlds
behave otherwise.

Each reduction carries ``why``: one line saying why it is sound for this protocol, which
``check`` prints beside the reduction it applied. The machinery is generic
(``check/reductions.py``, ``check/por.py``); partial-order reduction itself needs no
declaration (steps of different processes always commute), only its optional send bound.

Core layer: plain data.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .setups import Setup
from .slots import attributes as slot_attributes

NOTHING_LIVE = 1 << 60  # ``ClockOffsets.low`` of a state that holds no live timestamp

# The names ``check`` reports (``--json``: ``reductions``), in the order it applies them.
CANONICAL = "canonical snapshots"
CLOCKS = "clock-offset normalisation"
RETIRED = "retired clocks"
POR = "partial-order reduction"
SENDS = "send bound"


@dataclass(frozen=True)
class Canonical:
    """Key a process state by what its future reads, instead of ``snapshot()``: two states with
    the same key must behave the same on every input, forever."""

    key: Callable[[Any], Hashable]
    why: str


@dataclass(frozen=True)
class ClockOffsets:
    """Adding one constant to every clock, every stored timestamp and every timestamp in flight
    changes no behaviour (up to the constant), so each world is shifted down until its
    smallest live timestamp is 0. Off with links that reorder or duplicate."""

    low: Callable[[Any], int]  # the state's smallest live timestamp (NOTHING_LIVE: none)
    shift: Callable[[Any, int], Any]  # a copy with every timestamp lowered by d
    why: str
    stamps: tuple[str, ...] = ("ts",)  # the message fields that hold timestamps
    # (message, receiver's state) → the receiver will drop it before reading a timestamp of it,
    # and so until it is delivered: its timestamps are set to 0 and left out of the minimum
    dead: Callable[[Any, Any], bool] | None = None


@dataclass(frozen=True)
class RetiredClocks:
    """Once no process will request again, clocks only feed clocks and timestamps nobody
    compares: such a world gets every clock 0, every message's timestamps 0 but the requests',
    and the request timestamps (kept, in flight) shifted to start at 0."""

    done: Callable[[Any, tuple[str, ...], Setup], bool]  # (state, its pending local decisions)
    requests: Callable[[Any], list[int]]  # the request timestamps a state keeps
    is_request: Callable[[Any], bool]  # a message whose timestamp stays live
    retire: Callable[[Any, int], Any]  # a copy with its clock 0, request timestamps lowered by d
    why: str


@dataclass(frozen=True)
class SendBound:
    """For partial-order reduction: whether process ``q`` (with its pending local decisions and
    the messages in flight from ``x`` to it) may send to ``x`` before ``x`` moves. False must
    be a promise; without a bound every process may send to every other."""

    may_send: Callable[[Any, tuple[str, ...], tuple[Any, ...], Any], bool]  # (q, pending, in flight, x)
    why: str
    reads_receiver: bool = False  # reads x's state, not only its pid


@dataclass(frozen=True)
class Reductions:
    """The reductions licensed for processes of exactly ``classes`` (all processes of a setup
    must be covered; see the module). ``retired`` extends ``clocks`` and needs it."""

    classes: frozenset[type]
    canonical: Canonical | None = None
    clocks: ClockOffsets | None = None
    retired: RetiredClocks | None = None
    sends: SendBound | None = None
    # attribute → the exact types its value may have, for every covered process (``declare_parts``);
    # None: not declared (then only the sampling guards the declaration)
    parts: Mapping[str, tuple[type, ...]] | None = None

    def __post_init__(self) -> None:
        if not self.classes:
            raise ValueError("a reduction declaration covers at least one class")
        if self.retired is not None and self.clocks is None:
            raise ValueError("retired clocks extend clock-offset normalisation: declare both")

    def covers(self, protocols: Iterable[Any]) -> bool:
        """Every one of ``protocols`` is exactly of a declared class (never a subclass)."""
        return all(type(p) in self.classes for p in protocols)

    def strange(
        self, protocols: Mapping[int, Any] | Iterable[Any], names: Mapping[int, str] | None = None
    ) -> str | None:
        """The first part of ``protocols`` these reductions do not cover — an attribute not
        declared, or whose value is not of a declared exact type — in words; None when all are."""
        if self.parts is None:
            return None
        items = protocols.items() if isinstance(protocols, Mapping) else enumerate(protocols)
        for pid, p in items:
            who = (names or {}).get(pid, type(p).__name__)
            why = part_differs(self.parts, p)
            if why is not None:
                return f"{who}'s {why}"
        return None

    def with_parts(self, **more: type | None | tuple[type | None, ...]) -> Reductions:
        """The same declaration with more parts (a variant's own attributes), each argued for."""
        return replace(self, parts={**(self.parts or {}), **declare_parts(**more)})

    def only(self, *classes: type) -> Reductions:
        """The same declaration for other exact classes: for a variant whose code reads every
        field these reductions rely on as the original does (its author says so by calling this)."""
        return replace(self, classes=frozenset(classes))

    def named(self) -> dict[str, str | None]:
        """name → why, None for a reduction not declared (partial-order reduction is generic)."""
        return {
            CANONICAL: self.canonical.why if self.canonical else None,
            CLOCKS: self.clocks.why if self.clocks else None,
            RETIRED: self.retired.why if self.retired else None,
            SENDS: self.sends.why if self.sends else None,
        }

    def normal_form(
        self, protocols: Mapping[int, Any], links: Mapping[tuple[int, int], Sequence[Any]]
    ) -> tuple[Any, ...]:
        """A world (processes by pid, messages in flight per (sender, receiver) link, oldest
        first) as these reductions key it: shifted down to its smallest live timestamp (dead
        messages' timestamps 0), each process by its canonical key. Two worlds with the same
        normal form behave the same from then on, up to a clock offset — which is what a
        replayed loop must come back to (``sim/scripted.py``). Retired clocks are left out:
        a loop never comes back once every process is done requesting."""
        procs = dict(sorted(protocols.items()))
        flight = [(link, list(queue)) for link, queue in sorted(links.items()) if queue]
        clocks = self.clocks
        if clocks is not None:

            def dead(link: tuple[int, int], msg: Any) -> bool:
                return clocks.dead is not None and clocks.dead(msg, procs[link[1]])

            def stamps(msg: Any) -> list[str]:
                return [f for f in clocks.stamps if hasattr(msg, f)]

            lows = [clocks.low(p) for p in procs.values()]
            lows += [getattr(m, f) for link, q in flight for m in q if not dead(link, m) for f in stamps(m)]
            d = min(lows, default=NOTHING_LIVE)
            d = 0 if d == NOTHING_LIVE else d
            procs = {pid: clocks.shift(p, d) if d else p for pid, p in procs.items()}
            flight = [
                (
                    link,
                    [
                        m.model_copy(update={f: 0 if dead(link, m) else getattr(m, f) - d for f in stamps(m)})
                        for m in q
                    ],
                )
                for link, q in flight
            ]
        key = self.canonical.key if self.canonical is not None else (lambda p: p.snapshot())
        return (
            tuple(key(p) for p in procs.values()),
            tuple((link, tuple(m.model_dump_json() for m in q)) for link, q in flight),
        )


MODEL_OWN = "_mutexlab_"  # attributes the world model sets on a state it keeps (rules.SEEN)


def declare_parts(**kinds: type | None | tuple[type | None, ...]) -> dict[str, tuple[type, ...]]:
    """A ``parts`` mapping: attribute → exact types (``None`` stands for ``type(None)``)."""
    out = {}
    for name, kind in kinds.items():
        kinds_ = kind if isinstance(kind, tuple) else (kind,)
        out[name] = tuple(type(None) if k is None else k for k in kinds_)
    return out


def part_differs(declared: Mapping[str, tuple[type, ...]], p: Any) -> str | None:
    """Which attribute of ``p`` ``declared`` does not cover, in words (None: every one is)."""
    attributes = slot_attributes(p)  # its __dict__ and its class's __slots__ (a slot is a part too)
    for name, value in attributes.items():
        if name.startswith(MODEL_OWN):
            continue  # what the world model keeps with a state (rules.SEEN), not the protocol's
        kinds = declared.get(name)
        if kinds is None:
            return f"attribute {name!r} is not among the declared parts"
        if type(value) not in kinds:
            want = " or ".join("None" if k is type(None) else k.__name__ for k in kinds)
            return f"{name} is a {type(value).__name__}, not the declared {want}"
    return None
