"""The speed shortcuts (``mutexlab/fastpath.py``, ``mutexlab/sim/fastpath.py``) against their plain
twins: the simulator's fast loop against the plain loop on the same seeded configurations (every
algorithm, with and without faults, untraced and with an audit's tally), compared byte for byte;
broken variants of the fast loop are caught. The message and ``Send`` constructors and the bound
table dispatch build what, and do what, the plain code does. The wire's clock comparisons give
what the entry-by-entry ones give, on every small pair of clocks; broken ones are caught."""

from __future__ import annotations

import dataclasses
import inspect
import json
import types
from collections import Counter
from enum import StrEnum
from typing import Any, Literal

import pytest
from pydantic import ValidationError

from mutexlab import fastpath
from mutexlab.machine import Table, on
from mutexlab.messages import Message
from mutexlab.protocol import Protocol, ProtocolError, Send
from mutexlab.protocols import bees, elves, ricart_agrawala
from mutexlab.protocols.registry import SPECS, make_setup
from mutexlab.sim import SimConfig, Simulation, engine
from mutexlab.sim import fastpath as sim_fastpath
from mutexlab.trace import TraceWriter

FAULTS = (
    {},
    {"delay": "uniform"},
    {"delay": "fixed"},
    {"duplicate": 0.2},
    {"spike": 0.1, "spike_delay": 20.0},
    {"reorder": True},
)
SIZES = {"bees": (5, {"flowers": 2, "reeds": 2}), "elves": (3, {})}
CONFIGS = [
    (algorithm, *SIZES.get(algorithm, (4, {"requests": 3})), seed, faults)
    for algorithm in SPECS
    for seed in (0, 1)
    for faults in FAULTS
]


class PlainSimulation(Simulation):
    """The simulator with its plain loop only: every effect through ``Driver.apply``."""

    fast = False


class RecordingTally:
    """An audit's stand-in fed as the run goes: reads every event but sends and receives, and
    keeps what it is given as JSON lines, each read event after the count of sends and receives
    before it (written or skipped: an audit numbers both alike, and they may come gathered)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.unread: Counter[str] = Counter()

    def reads(self, kind: str) -> bool:
        return kind not in ("send", "recv")

    def skip(self, kind: str, count: int = 1) -> None:
        self.unread[kind] += count

    def feed(self, event: dict) -> None:
        if not self.reads(event["event"]):
            self.skip(event["event"])
            return
        self.lines.append(json.dumps(dict(sorted(self.unread.items()))))
        self.lines.append(json.dumps(event, default=lambda value: value.tolist()))
        self.unread.clear()

    def end(self) -> list[str]:
        return [*self.lines, json.dumps(dict(sorted(self.unread.items())))]


def record_inputs(sim: Simulation, lines: list[str]) -> None:
    """Log every input each process takes: when, what, the effects it returned, its state after."""
    for proto in sim.protocols.values():
        for method in ("start", "on_message", "on_local"):
            setattr(proto, method, _recorded(sim, proto, getattr(proto, method), lines))


def _recorded(sim: Simulation, proto: Protocol, step: Any, lines: list[str]) -> Any:
    name = sim.names[proto.pid]

    def recorded(*args: Any) -> Any:
        effects = step(*args)
        shown = [a.model_dump_json() if isinstance(a, Message) else repr(a) for a in args]
        lines.append(f"{sim.now!r} {name} {shown} -> {effects!r} {proto.state} {proto.clock.time}")
        return effects

    return recorded


def observe(cls: type[Simulation], config: tuple, how: Literal["untraced", "tallied"]) -> bytes:
    """One run of ``config`` by ``cls``: its inputs log, the tally's lines and its result, as bytes."""
    algorithm, processes, options, seed, faults = config
    setup = make_setup(algorithm, processes, options, seed)
    trace = None
    if how == "tallied":
        tally = RecordingTally()
        names = [setup.names[p] for p in sorted(setup.names)]
        trace = TraceWriter(sink=tally.feed, local_clocks=names, tally=tally)
    sim = cls(setup, SimConfig(seed=seed, max_events=20_000, **faults), trace, trace_bodies=False)
    inputs: list[str] = []
    record_inputs(sim, inputs)
    try:
        result = sim.run()
    except Exception as exc:  # noqa: BLE001 - a run that stops with an error is part of the behaviour
        outcome: dict = {"raised": f"{type(exc).__name__}: {exc}", "events": sim.events}
    else:
        outcome = {
            f.name: getattr(result, f.name) for f in dataclasses.fields(result) if f.name != "protocols"
        }
    lines = inputs + (tally.end() if how == "tallied" else []) + [json.dumps(outcome, sort_keys=True)]
    return "\n".join(lines).encode()


@pytest.fixture
def fast_runs(monkeypatch) -> list[str]:
    """The mode of every call of the fast loop (to show it ran)."""
    calls: list[str] = []
    run = sim_fastpath.run

    def counted(sim, limit, how):
        calls.append(how)
        return run(sim, limit, how)

    monkeypatch.setattr(sim_fastpath, "run", counted)
    return calls


@pytest.mark.parametrize("how", ["untraced", "tallied"])
@pytest.mark.parametrize(
    "config", CONFIGS, ids=lambda c: f"{c[0]}-s{c[3]}-{'-'.join(map(str, c[4])) or 'plain'}"
)
def test_the_fast_loop_is_the_plain_loop(config, how, fast_runs):
    plain = observe(PlainSimulation, config, how)
    assert not fast_runs
    assert observe(Simulation, config, how) == plain
    faults = config[-1]
    with_faults = any(key in faults for key in ("duplicate", "spike", "reorder"))
    assert fast_runs == ([] if with_faults else [how])  # the fast loop ran exactly where it applies


class Widened(Simulation):
    """The simulator with its event queue's buckets ``width`` units of virtual time wide."""

    width = 1.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._scale = 1.0 / self.width


@pytest.mark.parametrize("width", [1 / 64, 1 / 8, 4.0])
@pytest.mark.parametrize("how", ["untraced", "tallied"])
def test_the_event_queue_gives_one_order_whatever_its_bucket_width(width, how, fast_runs):
    # Narrow buckets: most pushes land in a later bucket; wide ones: in the bucket being drained.
    wide = type("Wide", (Widened,), {"width": width})
    plain = type("PlainWide", (Widened,), {"width": width, "fast": False})
    configs = [
        c
        for c in CONFIGS
        if c[3] == 0 and c[4] in ({}, {"delay": "fixed"}, {"spike": 0.1, "spike_delay": 20.0})
    ]
    for config in configs:
        expected = observe(PlainSimulation, config, how)
        assert observe(wide, config, how) == expected, config
        assert observe(plain, config, how) == expected, config
    assert fast_runs


def test_sparse_pids_keep_their_links_in_dicts_with_the_same_run(monkeypatch):
    assert engine.link_table([1, 2, 3]) == {p: [0.0] * 4 for p in (1, 2, 3)}
    sparse = engine.link_table([0, 10**9])
    assert sparse[0][10**9] == 0.0 and sparse[0] == {}  # read as unused, nothing stored
    configs = [c for c in CONFIGS if c[3] == 1 and c[4] in ({}, {"duplicate": 0.2})]
    dense = [(c, observe(Simulation, c, "untraced")) for c in configs]
    monkeypatch.setattr(engine, "DENSE_LINKS", 0)  # every table a dict per sender
    table = Simulation(make_setup("bees", 5, {}, 0))._link_last  # noqa: SLF001 - the table under test
    assert all(type(links) is engine._Unsent for links in table.values())  # noqa: SLF001 - see above
    for config, seen in dense:
        assert observe(Simulation, config, "untraced") == seen, config


# Broken variants of the fast loop: each a one-place edit of its source that must be caught.
BROKEN = {
    "a push into the drained bucket queued for later": ("untraced", "if slot > bucket:", "if True:"),
    "ties in the drained bucket taken last first": (
        "untraced",
        "drained.insert(bisect_left(drained, -when, key=latest_first), entry)",
        "drained.insert(bisect_left(drained, -when, key=latest_first) + 1 if drained else 0, entry)",
    ),
    "FIFO per link dropped": ("untraced", "if when < last:", "if False:"),
    "a send to oneself goes over the network": (
        "untraced",
        "if not to == pid and type(to) is int",
        "if type(to) is int",
    ),
    "counted twice": ("untraced", "messages[kind] += 1", "messages[kind] += 2"),
    "the recv skip not counted": ("tallied", "recvs += 1", "pass"),
    "a state event before the skips it follows": (
        "tallied",
        "if recvs or sends:\n                        recvs, sends = _flush(skip, recvs, sends)\n                    trace.write",
        "trace.write",
    ),
    "the state read from the attributes as they were when the loop began": (
        "tallied",
        "state_source(protocols[pid]), ",
        "dict(vars(protocols[pid])), ",
    ),
    "the input handled by another process than the one it reaches": (
        "tallied",
        "state_source(protocols[pid]), protocols[pid])",
        "state_source(protocols[pid]), protocols[min(protocols)])",
    ),
}


def broken_run(old: str, new: str):
    source = inspect.getsource(sim_fastpath.run)
    assert source.count(old) == 1, f"the broken variant no longer applies: {old!r}"
    namespace = dict(vars(sim_fastpath))
    exec(compile(source.replace(old, new), sim_fastpath.__file__, "exec"), namespace)  # noqa: S102
    return namespace["run"]


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_fast_loop_is_caught(name, monkeypatch):
    how, old, new = BROKEN[name]
    monkeypatch.setattr(sim_fastpath, "run", broken_run(old, new))
    caught = [
        config[0]
        for config in CONFIGS
        if not config[-1]
        and config[3] == 0
        and observe(Simulation, config, how) != observe(PlainSimulation, config, how)
    ]
    assert caught, f"no configuration told the broken fast loop ({name}) from the plain one"


def test_the_fast_loop_runs_only_where_it_is_the_same_run():
    setup = make_setup("ricart-agrawala", 3, {"requests": 1}, 0)
    assert sim_fastpath.mode(Simulation(setup)) == "untraced"
    assert sim_fastpath.mode(Simulation(setup, SimConfig(duplicate=0.1))) is None
    assert sim_fastpath.mode(Simulation(setup, trace=TraceWriter(None, keep=True))) is None

    class Overridden(Simulation):
        def transmit(self, *args: Any) -> None:
            super().transmit(*args)

    assert sim_fastpath.mode(Overridden(setup)) is None


# -- the core's shortcuts -----------------------------------------------------------------------
def test_send_is_what_its_generated_init_builds():
    msg = ricart_agrawala.Reply(sender=1, ts=2)
    made = Send(3, msg)
    plain = object.__new__(Send)
    Send.__init__.__wrapped__(plain, 3, msg)
    assert (made.to, made.msg) == (plain.to, plain.msg) == (3, msg)
    assert made == plain and hash(made) == hash(plain) and repr(made) == repr(plain)

    @dataclasses.dataclass(frozen=True, slots=True)
    class PlainSend:
        to: int
        msg: Message

    assert (
        str(inspect.signature(Send))
        == str(inspect.signature(PlainSend))
        == "(to: 'int', msg: 'Message') -> None"
    )
    assert Send.__slots__ == PlainSend.__slots__
    assert Send(to=3, msg=msg) == made
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.to = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        Send(3)  # type: ignore[call-arg]


def test_slot_init_refuses_what_it_cannot_build_alike():
    @dataclasses.dataclass(frozen=True, slots=True)
    class WithDefault:
        a: int = 1

    @dataclasses.dataclass(slots=True)
    class NotFrozen:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:  # its check would be skipped
        a: int

        def __post_init__(self) -> None:
            assert self.a > 0

    for cls in (WithDefault, NotFrozen, Checked):
        with pytest.raises(TypeError):
            fastpath.slot_init(cls)


MODELS = [
    (bees.ACKflower, {"sender": 3, "ts": 17, "req_ts": 9}),
    (bees.ACKreed, {"sender": 1, "ts": 0, "req_ts": 0}),
    (bees.REQreed, {"sender": 2, "ts": 5}),
    (bees.RELEASEreed, {"sender": 2, "ts": 40, "reed": 3, "status": "FULL", "cocoons": 15}),
    (ricart_agrawala.Reply, {"sender": 4, "ts": 8}),
    (elves.ContractRequest, {"sender": 1, "ts": 2, "round": 3, "units": 1}),  # `type` not third
]


def same_message(made: Message, valid: Message) -> bool:
    return (
        type(made) is type(valid)
        and made == valid
        and hash(made) == hash(valid)
        and list(made.__dict__.items()) == list(valid.__dict__.items())
        and made.model_fields_set == valid.model_fields_set
        and repr(made) == repr(valid)
        and made.model_dump_json() == valid.model_dump_json()
    )


@pytest.mark.parametrize("model, fields", MODELS, ids=[m.__name__ for m, _ in MODELS])
def test_trusted_builds_what_validation_builds(model, fields):
    assert same_message(fastpath.trusted(model)(*fields.values()), model(**fields))


def test_trusted_refuses_a_wrong_number_of_fields():
    with pytest.raises(TypeError):
        fastpath.trusted(bees.ACKflower)(1, 2)
    with pytest.raises(TypeError, match="sender, ts, reed, status, cocoons"):
        fastpath.trusted(bees.RELEASEreed)(1, 2, 3)
    assert not hasattr(Message, "trusted")  # the constructor is fastpath's, not the models'


def test_a_trusted_builder_that_differs_from_validation_is_told_apart():
    sender, ts, req_ts = 3, 17, 9
    valid = bees.ACKflower(sender=sender, ts=ts, req_ts=req_ts)
    wrong = bees.ACKflower.model_construct(sender=sender, ts=ts, req_ts=req_ts, type="ACKflower")
    assert valid == wrong and not same_message(wrong, valid)  # equal, but the type tag counts as set


def test_trusted_validates_a_model_without_a_type_tag():
    class Untagged(Message):
        n: int

    build = fastpath.trusted(Untagged)
    assert build(1, 2, 3) == Untagged(sender=1, ts=2, n=3)
    with pytest.raises(ValidationError):
        build(-1, 2, 3)


class Ping(Message):
    type: Literal["PING"] = "PING"


class On(StrEnum):
    ON = "ON"


def dispatch_problems() -> list[str]:
    """What goes wrong with table dispatch for classes made now: a base, a subclass overriding its
    handler, a subclass dispatching by hand; each against the plain ``Protocol.on_message``."""

    class Base(Protocol):
        TABLE = Table(On, {On.ON: {"PING": on("log", "_ping")}})

        def __init__(self) -> None:
            self.pid, self.state, self.log = 1, On.ON, []

        def _ping(self, msg: Any) -> list:
            self.log.append("base")
            return []

    class Override(Base):
        def _ping(self, msg: Any) -> list:
            self.log.append("override")
            return []

    class ByHand(Base):
        def on_message(self, msg: Any) -> list:
            self.log.append("by hand")
            return []

    ping, problems = Ping(sender=2, ts=0), []
    for cls, expected in ((Base, "base"), (Override, "override"), (ByHand, "by hand")):
        proto, plain = cls(), cls()
        proto.on_message(ping)
        Protocol.on_message(plain, ping)
        if proto.log != [expected] or plain.log != [expected if cls is not ByHand else "base"]:
            problems.append(f"{cls.__name__}: {proto.log} (plain {plain.log})")
    proto = Base()
    proto.state = "OFF"  # type: ignore[assignment]
    with pytest.raises(ProtocolError, match="cannot take PING in state OFF"):
        proto.on_message(ping)
    return problems


def test_table_dispatch_runs_a_subclass_override_and_keeps_a_handwritten_on_message():
    assert dispatch_problems() == []


def test_a_table_dispatch_bound_once_per_table_is_caught(monkeypatch):
    # broken: the bound dispatch cached per table, so a subclass (same TABLE) runs its base's handler
    bound: dict[int, Any] = {}
    bind = fastpath.bind_table_dispatch

    def cached(cls: Any, plain: Any) -> None:
        if id(cls.TABLE) in bound and cls.on_message is bound[id(cls.TABLE)]:
            return
        bind(cls, plain)
        bound[id(cls.TABLE)] = cls.on_message

    monkeypatch.setattr(fastpath, "bind_table_dispatch", cached)
    assert dispatch_problems() == ["Override: ['base'] (plain ['override'])"]


def test_bound_table_dispatch_is_the_plain_dispatch():
    """A whole run with every process's ``on_message`` the plain ``Protocol.on_message`` (reading
    ``self._transitions``) takes the same inputs and gives the same effects as the bound one, for
    every algorithm whose protocols dispatch through their table."""

    def unbind(setup) -> int:
        count = 0
        for proto in setup.protocols.values():
            if getattr(type(proto).on_message, "table_dispatch", False):
                proto.on_message = types.MethodType(Protocol.on_message, proto)
                count += 1
        return count

    class Unbound(Simulation):
        def __init__(self, setup, *args: Any, **kwargs: Any) -> None:
            assert unbind(setup)
            super().__init__(setup, *args, **kwargs)

    checked = []
    for algorithm in SPECS:
        config = (algorithm, *SIZES.get(algorithm, (4, {"requests": 3})), 0, {})
        if unbind(make_setup(*config[:4])):
            assert observe(Unbound, config, "untraced") == observe(Simulation, config, "untraced")
            checked.append(algorithm)
    assert "ricart-agrawala" in checked


# -- clock comparisons (the wire's step frames and trace batches) ---------------------------------
def same_but_plain(vc: dict, other: dict, own: str) -> bool:
    """Entry by entry, both ways."""
    return len(vc) == len(other) and all(
        k == own or (k in b and b[k] == v) for a, b in ((vc, other), (other, vc)) for k, v in a.items()
    )


def changed_entries_plain(vc: dict, prev: dict) -> dict:
    return {k: v for k, v in vc.items() if prev.get(k) != v}


def _small_clocks() -> list[dict]:
    """Every clock over the keys a, b, c (absent, or 0, 1, True or None), keys in two orders."""
    import itertools

    clocks = []
    for values in itertools.product((..., 0, 1, True, None), repeat=3):
        clock = {k: v for k, v in zip("abc", values) if v is not ...}
        clocks += [clock, dict(reversed(list(clock.items())))]
    return clocks


def _matches_plain(same_but, changed_entries) -> bool:
    clocks = _small_clocks()
    for vc in clocks:
        for other in clocks:
            if list(changed_entries(vc, other).items()) != list(changed_entries_plain(vc, other).items()):
                return False
            if any(same_but(vc, other, own) != same_but_plain(vc, other, own) for own in "ab"):
                return False
    return True


def test_the_clock_comparisons_give_what_entry_by_entry_ones_give_on_every_small_pair():
    assert _matches_plain(fastpath.same_but, fastpath.changed_entries)


def test_broken_clock_comparisons_are_caught():
    def one_way(vc, other, own):  # the transport's comparison before: a clock without its own
        return len(vc) == len(other) and all(other.get(k) == v or k == own for k, v in vc.items())

    def unordered(vc, prev):  # every change found as a set difference: their order is lost
        return dict(sorted(vc.items() - prev.items(), reverse=True))

    assert not _matches_plain(one_way, fastpath.changed_entries)
    assert not _matches_plain(fastpath.same_but, unordered)


def test_the_clock_comparisons_take_unhashable_entries_entry_by_entry():
    assert fastpath.same_but({"a": [1], "own": 2}, {"own": 3, "a": [1]}, "own")
    assert not fastpath.same_but({"a": [1], "own": 2}, {"a": [2], "own": 2}, "own")
    assert not fastpath.same_but({"a": [1], "own": 2}, {"a": [1], "x": 2}, "own")
    assert fastpath.changed_entries({"a": [1], "b": 2, "c": 3}, {"a": [1], "b": 1, "c": 1}) == {
        "b": 2,
        "c": 3,
    }
    assert fastpath.changed_entries({"a": [1], "b": 2}, {"a": [2], "b": 2}) == {"a": [1]}
