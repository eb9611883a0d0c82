"""Every protocol's state table, checked against its code.

Every protocol class declares ``TABLE`` (machine.py) and is held to that data, the table its
dispatch runs on:

* Runs: seeded simulations of every protocol (several sizes and configurations, links FIFO,
  with delay spikes and duplicates) record each input a process takes: its state before, the
  input, its state right after, whether it raised. No correct run raises or stalls.
* Every step satisfies ``Table.check_step``: the table accepts the pair, and the state after is
  the one before or one of the cell's ``to`` states.
* Every ``to`` move of every cell is made at least once: the table names no move the code never
  makes.
* Every pair the table refuses (every state × every input: the codec's message types, the local
  actions) raises: a copy of a process seen in that state, given that input (a message of that
  type seen in the runs, from another process), raises ProtocolError naming the process, its
  state and the input, with its state and clock unchanged.

A ``to`` move too rare for the runs (an elf whose contract request is overtaken by the round's
STOP) is probed: copies of processes seen in that state, given each message of that type seen.
The checker is shown to catch a table that lies, and code that breaks its table, at the end.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mutexlab.cli import main as cli
from mutexlab.commands.tables import document
from mutexlab.machine import Table, on
from mutexlab.protocol import ProtocolError
from mutexlab.protocols import bees, elves, lamport, maekawa, raymond, ricart_agrawala, sanders, suzuki_kasami
from mutexlab.protocols.classic import State
from mutexlab.protocols.registry import make_setup
from mutexlab.sim import SimConfig, Simulation

LOCAL = ("request", "exit", "start")
FIFO = ({}, {"delay": "uniform"}, {"delay": "fixed"}, {"spike": 0.2, "spike_delay": 20.0}, {"duplicate": 0.3})


@dataclass
class Spec:
    module: object
    cls: type
    tables: list[int]  # indexes into the module's tables
    row_of: list  # per table: protocol → row label
    state_rows: list[bool]  # per table: are its rows the process's states?
    runs: list[tuple] = field(default_factory=list)  # (algorithm, processes, options[, simulator options])
    doc: str | None = None  # the tables' text (default: the module's docstring)
    # the message types a process of ``cls`` can get (default: the codec's); the elves' codec
    # also holds the mayor's, which no elf gets, and the runs bring no such message to refuse
    receives: frozenset[str] | None = None


def state_row(p) -> str:
    return str(p.state)


def classic(module, cls, algorithm, options=None, sizes=(2, 3, 5)):
    return Spec(
        module,
        cls,
        [0],
        [state_row],
        [True],
        [(algorithm, n, {"requests": 3, **(options or {})}) for n in sizes],
    )


SPECS = {
    # N = 1 too: a lone node enters at once (request → HELD)
    "lamport": classic(lamport, lamport.LamportNode, "lamport", sizes=(1, 2, 3, 5)),
    "ricart-agrawala": classic(
        ricart_agrawala, ricart_agrawala.RicartAgrawalaNode, "ricart-agrawala", sizes=(1, 2, 3, 5)
    ),
    "suzuki-kasami": classic(suzuki_kasami, suzuki_kasami.SuzukiKasamiNode, "suzuki-kasami"),
    "raymond": classic(raymond, raymond.RaymondNode, "raymond", sizes=(2, 3, 6)),
    "maekawa": Spec(
        maekawa,
        maekawa.MaekawaNode,
        [0],
        [state_row],
        [True],
        [("maekawa", n, {"requests": 3}) for n in (3, 5, 7)]
        + [("maekawa", 9, {"requests": 2, "quorums": "grid"})],
    ),
    "sanders": Spec(
        sanders,
        sanders.SandersNode,
        [0],
        [state_row],
        [True],
        [("sanders", n, {"requests": 3}) for n in (2, 3, 5)]
        + [
            (
                "sanders",
                5,
                {
                    "requests": 3,
                    "inform_sets": {
                        "1": [1, 2],
                        "2": [2, 3],
                        "3": [3, 1],
                        "4": [4, 1, 2, 3],
                        "5": [5, 1, 2, 3],
                    },
                },
            )
        ],
    ),
    "bees": Spec(
        bees,
        bees.Bee,
        [0],
        [state_row],
        [True],
        [
            ("bees", 4, {"flowers": 2, "reeds": 2}),
            ("bees", 6, {"flowers": 2, "reeds": 2, "eggs": 2, "cocoons": 4}),
            ("bees", 3, {"flowers": 1, "reeds": 1}),
            ("bees", 7, {"flowers": 3, "reeds": 1, "eggs": 1, "cocoons": 2}),  # some retire
            # long rests: a bee may wake when every other bee is gone, and take a reed (or retire) at once
            ("bees", 2, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}, {"dwell": {"rest": 30}}),
            ("bees", 2, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1}, {"dwell": {"rest": 30}}),
        ],
    ),
    "mayor": Spec(
        elves,
        elves.Mayor,
        [0],
        [state_row],
        [True],
        [("elves", 3, {}), ("elves", 4, {"rounds": 3})],
        receives=frozenset({"CONTRACT_COMPLETED"}),
    ),
    "elf": Spec(
        elves,
        elves.Elf,
        [0],
        [state_row],
        [True],
        [
            ("elves", 1, {}),  # a lone elf needs no replies: ELF_CRITICAL at once
            ("elves", 3, {}),
            ("elves", 4, {"rounds": 3}),
            ("elves", 3, {"contracts": 1, "rounds": 3}),
            ("elves", 5, {"pins": 2, "poison": 6, "contracts": 6, "hamsters": [2, 5], "rounds": 2}),
        ],
        receives=frozenset(elves.CODEC.types) - {"CONTRACT_COMPLETED"},
    ),
}
SEEDS = range(8)


# -- the runs ------------------------------------------------------------------------------------
@dataclass
class Observed:
    moves: dict = field(default_factory=lambda: defaultdict(set))  # (table, row, input) → states after
    kept: dict = field(default_factory=lambda: defaultdict(list))  # (table, row) → copies of processes in it
    messages: dict = field(default_factory=lambda: defaultdict(list))  # type → messages received
    arbiter_moves: dict = field(
        default_factory=lambda: defaultdict(set)
    )  # (table, row, input) → (before, after)
    raised: list = field(default_factory=list)  # errors of runs that should not raise
    steps: set = field(default_factory=set)  # (state before, input, state after, raised?)


KEEP = 6  # copies kept per row (processes in different situations, e.g. the elves' phases)


def observe(spec: Spec, cls: type | None = None) -> Observed:
    """Run ``spec``'s configurations, recording every input of every process of class ``cls``
    (default ``spec.cls``; a broken variant replaces it)."""
    seen = Observed()
    base = cls or spec.cls

    def rows(p) -> tuple:
        return tuple(row_of(p) for row_of in spec.row_of)

    def keep(p) -> None:
        for t, row in enumerate(rows(p)):
            if len(seen.kept[(t, row)]) < KEEP:
                seen.kept[(t, row)].append(copy.deepcopy(p))

    def record(p, inp: str, call):
        before, state = rows(p), str(p.state)
        keep(p)
        try:
            effects = call()
        except ProtocolError:
            seen.steps.add((state, inp, str(p.state), True))
            raise
        seen.steps.add((state, inp, str(p.state), False))
        keep(p)
        for t, row in enumerate(before):
            if spec.state_rows[t]:
                seen.moves[(t, row, inp)].add(str(p.state))
            else:
                seen.arbiter_moves[(t, row, inp)].add((state, str(p.state)))
        return effects

    class Recording(base):
        def start(self):
            return record(self, "start", lambda: base.start(self))

        def on_local(self, action):
            return record(self, action, lambda: base.on_local(self, action))

        def on_message(self, msg):
            if msg.sender != self.pid and len(seen.messages[msg.type]) < 20:
                seen.messages[msg.type].append(msg)
            return record(self, msg.type, lambda: base.on_message(self, msg))

    for algorithm, n, options, *sim in spec.runs:
        for seed in SEEDS:
            setup = make_setup(algorithm, n, options, seed)
            for p in setup.protocols.values():
                if type(p) is spec.cls:
                    p.__class__ = Recording
            config = SimConfig(seed=seed, **FIFO[seed % len(FIFO)], **(sim[0] if sim else {}))
            try:
                result = Simulation(setup, config).run()
            except ProtocolError as exc:
                seen.raised.append(f"{algorithm} N={n} {options} seed {seed}: {exc}")
                continue
            if not result.ok:
                seen.raised.append(f"{algorithm} N={n} {options} seed {seed}: stalled {result.stalled}")
    return seen


def original(proto) -> type:
    """The protocol class under the recording subclass of a kept copy."""
    cls = type(proto)
    return cls.__mro__[1] if cls.__name__ == "Recording" else cls


def give(proto, inp: str, seen: Observed):
    """Input ``inp`` for a copy of ``proto``: a callable, or None when no such message was seen.
    A message seen in the runs, from another process, put in this process's round (elves)."""
    base = original(proto)
    if inp in LOCAL:
        return lambda: base.on_local(proto, inp)
    msgs = [m for m in seen.messages.get(inp, []) if m.sender != proto.pid]
    if not msgs:
        return None
    msg = msgs[0]
    if "round" in type(msg).model_fields and getattr(proto, "round", 0):
        msg = msg.model_copy(update={"round": proto.round})
    return lambda: base.on_message(proto, msg)


# -- the TABLE checks ------------------------------------------------------------------------------
def table_of(spec: Spec) -> Table | None:
    return vars(spec.cls).get("TABLE")


def steps_problems(spec: Spec, seen: Observed, table: Table | None = None) -> list[str]:
    """What the runs did that ``table`` (default: the class's own) does not allow, and the moves
    it names that no run made."""
    table = table or table_of(spec)
    assert table is not None
    name = spec.cls.__name__
    problems = [f"a run failed: {e}" for e in seen.raised]
    made: dict[tuple[str, str], set[str]] = defaultdict(set)
    for before, inp, after, raised in sorted(seen.steps):
        if inp == "start" or raised:  # start is no table input; a refused input took nothing
            continue
        made[before, inp].add(after)
        try:
            table.check_step(before, inp, after)  # type: ignore[arg-type]  # a StrEnum's value
        except AssertionError as exc:
            problems.append(f"{name}: {exc}")
    for state, cells in table.rows.items():
        for inp, cell in cells.items():
            if set(cell.to) - made[str(state), inp]:  # too rare for the runs: probe kept copies
                made[str(state), inp] |= probe_moves(spec, seen, 0, str(state), inp) & set(cell.to)
            problems += [
                f"{name}: {inp} in {state} never moved to {target}"
                for target in cell.to
                if target not in made[str(state), inp]
            ]
    return problems


def refused_problems(spec: Spec, seen: Observed, table: Table | None = None) -> list[str]:
    """Every pair ``table`` refuses, given to a copy of a process seen in that state: it must raise
    ProtocolError naming process, state and input, and leave state and clock as they were."""
    table = table or table_of(spec)
    assert table is not None
    name = spec.cls.__name__
    problems = []
    inputs = sorted(set(table.inputs) | (spec.receives or set(spec.module.CODEC.types)) | {"request", "exit"})
    for state in table.states:
        for inp in inputs:
            if table.accepts(state, inp):
                continue
            where = f"{name} {state} × {inp}"
            kept = seen.kept.get((0, str(state)))
            if not kept:
                problems.append(f"{where}: no process was ever in {state}")
                continue
            proto = copy.deepcopy(kept[0])
            call = give(proto, inp, seen)
            if call is None:
                problems.append(f"{where}: no {inp} was seen in the runs")
                continue
            clock = proto.clock.time
            try:
                call()
            except ProtocolError as exc:
                missing = [w for w in (proto.name, str(state), inp) if w not in str(exc)]
                if missing:
                    problems.append(f"{where}: the error {str(exc)!r} does not name {missing}")
                if (str(proto.state), proto.clock.time) != (str(state), clock):
                    problems.append(f"{where}: refused, but it changed state or clock")
            else:
                problems.append(f"{where}: accepted, the table refuses it")
    return problems


def probe_moves(spec: Spec, seen: Observed, t: int, row: str, inp: str) -> set[str]:
    """The states copies of processes seen in ``row`` move to on ``inp``, for every message of that
    type seen (a move too rare for the runs, e.g. an elf whose contract request is overtaken by
    the round's STOP): the code makes it from a real state, on a real message."""
    made = set()
    for kept in seen.kept.get((t, row), []):
        for msg in seen.messages.get(inp, [None]) if inp not in LOCAL else [None]:
            proto = copy.deepcopy(kept)
            base = original(proto)
            if msg is None:
                call = lambda: base.on_local(proto, inp)  # noqa: E731
            else:
                if msg.sender == proto.pid:
                    continue
                if "round" in type(msg).model_fields and getattr(proto, "round", 0):
                    msg = msg.model_copy(update={"round": proto.round})
                call = lambda: base.on_message(proto, msg)  # noqa: E731
            try:
                call()
            except ProtocolError:
                continue
            made.add(str(proto.state))
    return made


@pytest.fixture(scope="module")
def observed():
    return {name: observe(spec) for name, spec in SPECS.items()}


TABLED = sorted(name for name, spec in SPECS.items() if table_of(spec) is not None)


@pytest.mark.parametrize("name", TABLED)
def test_every_step_is_in_the_table_and_every_move_of_the_table_is_made(name, observed):
    problems = steps_problems(SPECS[name], observed[name])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", TABLED)
def test_every_pair_the_table_refuses_raises_naming_process_state_and_input(name, observed):
    problems = refused_problems(SPECS[name], observed[name])
    assert not problems, "\n".join(problems)


def test_every_protocol_module_has_its_tables_checked():
    from mutexlab.protocols import registry

    checked = {spec.module.__name__ for spec in SPECS.values()}
    assert {s.make_setup.__module__ for s in registry.SPECS.values()} <= checked


# -- the checker catches what it is for ------------------------------------------------------------
def test_a_table_that_lies_is_caught(observed):
    """Ricart–Agrawala's table with three lies in the data: WANTED × REPLY never enters,
    RELEASED × REQUEST is refused, and the exit moves to WANTED."""
    spec = SPECS["ricart-agrawala"]
    real = ricart_agrawala.RicartAgrawalaNode.TABLE
    rows = {state: dict(cells) for state, cells in real.rows.items()}
    rows[State.WANTED]["REPLY"] = on("count", "_on_reply")
    del rows[State.RELEASED]["REQUEST"]
    rows[State.HELD]["exit"] = on("reply to deferred", "_local_exit", to=(State.WANTED,))
    lying = Table(State, rows)
    seen = observed["ricart-agrawala"]
    problems = steps_problems(spec, seen, lying) + refused_problems(spec, seen, lying)
    assert problems == [
        "RicartAgrawalaNode: exit in HELD moved to RELEASED; the table allows WANTED",
        "RicartAgrawalaNode: REQUEST accepted in RELEASED, which the table refuses",
        "RicartAgrawalaNode: REPLY in WANTED moved to HELD; the table allows no move",
        "RicartAgrawalaNode: exit in HELD never moved to WANTED",
        "RicartAgrawalaNode RELEASED × REQUEST: accepted, the table refuses it",
    ], "\n".join(problems)


def test_code_that_breaks_its_table_is_caught():
    """Two broken Ricart–Agrawala variants (tests/mutexlab_broken): one enters without waiting
    for replies (the stray replies it then gets are refused: its runs fail), one tolerates a REPLY
    outside WANTED silently, as the code once did."""
    from mutexlab_broken.ricart_agrawala import GreedyNode
    from mutexlab_broken.tolerant_ricart_agrawala import TolerantNode

    spec = SPECS["ricart-agrawala"]
    greedy = steps_problems(spec, observe(spec, GreedyNode))
    assert any("a run failed" in p and "cannot take REPLY in state" in p for p in greedy), greedy
    tolerant = observe(spec, TolerantNode)
    assert steps_problems(spec, tolerant) == [], "in correct runs the stray REPLY never comes"
    assert refused_problems(spec, tolerant) == [
        "RicartAgrawalaNode RELEASED × REPLY: accepted, the table refuses it",
        "RicartAgrawalaNode HELD × REPLY: accepted, the table refuses it",
    ]


# -- the generated document and the command that writes it -----------------------------------------
DOCS = Path(__file__).resolve().parent.parent / "docs" / "protocols.md"


def test_docs_protocols_md_is_current():
    assert DOCS.read_text(encoding="utf-8") == document(), (
        "docs/protocols.md is not what the tables say: mutexlab tables --write docs/protocols.md"
    )
    for spec in SPECS.values():
        table = table_of(spec)
        if table is not None:
            assert table.markdown() in document(), spec.cls.__name__


def test_the_tables_command_prints_writes_and_refuses(tmp_path, capsys):
    assert cli(["tables", "suzuki-kasami"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## suzuki-kasami\n") and suzuki_kasami.SuzukiKasamiNode.TABLE.markdown() in out
    assert (
        "| HELD | error | R[j] = max(R[j], s) (the token is in use: keep it) | (never): it holds the token"
        in out
    )
    assert cli(["tables", "--write", str(tmp_path / "p.md")]) == 0
    assert (tmp_path / "p.md").read_text(encoding="utf-8") == document()
    assert cli(["tables", "nope"]) == 2 and "unknown algorithm 'nope'" in capsys.readouterr().err
    assert cli(["tables", "mutexlab.clock"]) == 1 and "declares no TABLE" in capsys.readouterr().err
    assert cli(["tables", "elves"]) == 0  # a package: the tables of the classes in its modules
    out = capsys.readouterr().out
    assert elves.Elf.TABLE.markdown() in out and elves.Mayor.TABLE.markdown() in out
    assert cli(["tables", "lamport", "--write", str(tmp_path / "q.md")]) == 2
    assert cli(["tables", "mutexlab_broken.ricart_agrawala"]) == 0  # a plugin: its class runs RA's table
    assert "`GreedyNode`:" in capsys.readouterr().out
