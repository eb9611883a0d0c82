"""The hamster killers' state tables, state by state (``Mayor.TABLE``, ``Elf.TABLE``).

Each test puts one participant in a state by feeding it inputs, then checks what one more
input does: the effects, in order, and the next state. The tables themselves are data: the tests
after the final state read them and hold seeded runs to them.
"""

import pytest

from mutexlab.messages import MessageError
from mutexlab.protocol import Enter, Exit, Note, ProtocolError, Schedule, Send
from mutexlab.protocols import elves as E
from mutexlab.protocols.elves import Elf, ElfState, Mayor, MayorState
from mutexlab.sim import SimConfig, Simulation


def sends(effects, kind=None):
    return [e for e in effects if isinstance(e, Send) and (kind is None or e.msg.type == kind)]


def init(elf, contracts=(2, 3), round_=1, ts=1):
    return elf.on_message(E.InitContracts(sender=0, ts=ts, round=round_, contracts=contracts))


def reply(kind, sender, round_=1, ts=50):
    return E.REPLY[kind](sender=sender, ts=ts, round=round_)


def request(kind, sender, ts, round_=1, units=1):
    if kind == E.CONTRACT:
        return E.ContractRequest(sender=sender, ts=ts, round=round_)
    return E.REQUEST[kind](sender=sender, ts=ts, round=round_, units=units)


def release(kind, sender, units, round_=1, ts=60):
    return E.RELEASE[kind](sender=sender, ts=ts, round=round_, units=units)


def all_replies(elf, kind, round_=1):
    effects = []
    for j in range(1, elf.n + 1):
        if j != elf.pid:
            effects += elf.on_message(reply(kind, j, round_))
    return effects


def with_contract(contracts=(2, 3), n=3, pins=2, poison=5, pins_per_elf=1, per_hamster=1):
    """elf-1 of n, holding contract 1.1 and asking for pins."""
    elf = Elf(1, n, pins, poison, pins_per_elf, per_hamster)
    init(elf, contracts)
    all_replies(elf, E.CONTRACT)
    return elf


def working(**kw):
    elf = with_contract(**kw)
    all_replies(elf, E.PINS)
    all_replies(elf, E.POISON)
    return elf


# -- INITIAL (before a round) ---------------------------------------------------------------
def test_initial_init_contracts_requests_a_contract_from_every_other_elf():
    elf = Elf(2, 3, pins=2, poison=5)
    effects = init(elf, (4, 1), ts=7)
    assert elf.state == ElfState.ELF_REQUESTING and elf.round == 1 and elf.contracts == (4, 1)
    assert [(s.to, s.msg.type, s.msg.round) for s in effects] == [
        (1, "CONTRACT_REQUEST", 1),
        (3, "CONTRACT_REQUEST", 1),
    ]
    assert effects[0].msg.ts > 7  # after the receive
    assert elf.waiting_for() == {"CONTRACT_REPLY": [1, 3]}


def test_initial_buffers_messages_of_a_round_not_begun_and_replays_them_at_its_init():
    elf = Elf(2, 3, pins=2, poison=5)
    assert elf.on_message(request(E.CONTRACT, 1, ts=3)) == []
    assert elf.state is ElfState.INITIAL and len(elf.future) == 1
    effects = init(elf)
    # the buffered request answered first, in the new round, then its own request
    assert [(s.to, s.msg.type) for s in effects] == [
        (1, "CONTRACT_REPLY"),
        (1, "CONTRACT_REQUEST"),
        (3, "CONTRACT_REQUEST"),
    ]
    assert effects[0].msg.round == 1 and elf.future == []
    assert (3, 1) in elf.contract_requests
    assert effects[1].msg.ts > 3  # so its own request is ordered after the buffered one


def test_initial_refuses_an_init_out_of_order_and_a_stop_before_any_round():
    elf = Elf(1, 2, pins=1, poison=5)
    with pytest.raises(ProtocolError, match="round 2"):
        init(elf, round_=2)
    with pytest.raises(ProtocolError, match="STOP"):
        elf.on_message(E.Stop(sender=0, ts=1, round=1))


# -- ELF_REQUESTING --------------------------------------------------------------------------
def test_requesting_answers_every_request_at_once_with_its_round():
    elf = Elf(1, 3, pins=2, poison=5)
    init(elf)
    effects = elf.on_message(request(E.PINS, 2, ts=4, units=1))
    assert [(s.to, s.msg.type, s.msg.round) for s in effects] == [(2, "PINS_REPLY", 1)]
    assert elf.queues[E.PINS] == {2: (4, 1)}
    assert elf.state == ElfState.ELF_REQUESTING


def test_requesting_enters_critical_only_with_every_reply_then_takes_the_contract_at_its_position():
    elf = Elf(2, 3, pins=2, poison=5)
    init(elf, (4, 1), ts=1)  # my request: ts 3
    elf.on_message(request(E.CONTRACT, 1, ts=1))  # ahead of mine
    assert elf.on_message(reply(E.CONTRACT, 1)) == []
    assert elf.state == ElfState.ELF_REQUESTING
    effects = elf.on_message(reply(E.CONTRACT, 3))
    assert effects[0] == Enter("contract:1.2")  # position 2 → contract 2 (1 hamster)
    assert elf.holding == (2, 1)
    assert [(s.to, s.msg.type, s.msg.units) for s in sends(effects)] == [
        (1, "PINS_REQUEST", 1),
        (3, "PINS_REQUEST", 1),
    ]
    assert elf.state == ElfState.ELF_REQUESTING and elf.phase == E.PINS


def test_requesting_with_no_contract_left_goes_initial_and_still_answers_its_round():
    elf = Elf(3, 3, pins=2, poison=5)
    init(elf, (4,), ts=5)
    elf.on_message(request(E.CONTRACT, 1, ts=2))
    assert all_replies(elf, E.CONTRACT) == []
    assert elf.state is ElfState.INITIAL and elf.holding is None
    assert elf.waiting_for() == {"STOP": [0]}
    assert [s.msg.type for s in elf.on_message(request(E.CONTRACT, 2, ts=9))] == ["CONTRACT_REPLY"]


def test_requesting_a_contract_is_dropped_by_stop():
    elf = Elf(1, 3, pins=2, poison=5)
    init(elf)
    assert elf.on_message(E.Stop(sender=0, ts=9, round=1)) == []
    assert elf.state is ElfState.INITIAL and not elf.active and elf.my_request is None
    # a reply to the dropped request arrives late: stale, ignored
    assert elf.on_message(reply(E.CONTRACT, 2)) == []


def test_requesting_pins_with_a_contract_in_hand_cannot_be_stopped():
    elf = with_contract()
    with pytest.raises(ProtocolError, match="still holds contract 1.1"):
        elf.on_message(E.Stop(sender=0, ts=99, round=1))


def test_a_reply_nobody_asked_for_is_refused():
    elf = Elf(1, 3, pins=2, poison=5)
    init(elf)
    elf.on_message(reply(E.CONTRACT, 2))
    with pytest.raises(ProtocolError, match="unexpected CONTRACT_REPLY"):
        elf.on_message(reply(E.CONTRACT, 2))
    with pytest.raises(ProtocolError, match="unexpected PINS_REPLY"):
        elf.on_message(reply(E.PINS, 3))


def test_messages_of_a_stopped_round_are_dropped_and_of_the_next_one_buffered():
    elf = Elf(1, 3, pins=2, poison=5)
    init(elf)
    elf.on_message(E.Stop(sender=0, ts=9, round=1))
    clock = elf.clock.time
    assert elf.on_message(request(E.PINS, 2, ts=50, round_=1)) == []  # round 1 is over here
    assert elf.clock.time == clock  # dropped as if never received
    assert elf.on_message(request(E.CONTRACT, 2, ts=20, round_=2)) == []  # round 2 not begun here
    assert [m.round for m in elf.future] == [2]
    effects = init(elf, round_=2, ts=10)
    assert [(s.msg.type, s.msg.round) for s in sends(effects, "CONTRACT_REPLY")] == [("CONTRACT_REPLY", 2)]
    assert elf.queues == {E.PINS: {}, E.POISON: {}}  # fresh queues each round


# -- ELF_CRITICAL / ELF_WAIT_FOR_RELEASE ----------------------------------------------------
def test_critical_pins_enough_left_enters_pins_and_asks_for_poison_sized_by_the_contract():
    elf = with_contract(contracts=(3, 1), pins_per_elf=2, pins=2, poison=7, per_hamster=2)
    assert elf.queues[E.PINS][1][1] == 2  # decision 1: pins per elf
    effects = all_replies(elf, E.PINS)
    assert effects[0] == Enter("pins", 2)
    assert {(s.msg.type, s.msg.units) for s in sends(effects)} == {("POISON_REQUEST", 6)}  # 3 hamsters × 2


def test_critical_not_enough_left_waits_for_release_then_a_release_lets_it_in():
    elf = with_contract(pins=2)
    elf.on_message(request(E.PINS, 2, ts=0, units=1))  # ahead of mine
    elf.on_message(request(E.PINS, 3, ts=1, units=1))  # ahead of mine: 2 + mine = 3 > 2
    assert all_replies(elf, E.PINS) == []
    assert elf.state == ElfState.ELF_WAIT_FOR_RELEASE and elf.waits[E.PINS] == 1
    assert elf.waiting_for() == {"PINS_RELEASE": [2, 3]}
    assert elf.on_message(request(E.PINS, 2, ts=0, units=1)) != []  # (a re-request: still answered)
    effects = elf.on_message(release(E.PINS, 3, 1))
    assert effects[0] == Enter("pins", 1)
    assert elf.state == ElfState.ELF_REQUESTING and elf.phase == E.POISON


def test_wait_for_release_ignores_releases_of_the_other_resource():
    elf = with_contract(pins=1)
    elf.on_message(request(E.PINS, 2, ts=0, units=1))
    elf.on_message(request(E.POISON, 2, ts=2, units=3))
    all_replies(elf, E.PINS)
    assert elf.state == ElfState.ELF_WAIT_FOR_RELEASE
    assert elf.on_message(release(E.POISON, 2, 3)) == []
    assert elf.state == ElfState.ELF_WAIT_FOR_RELEASE
    with pytest.raises(ProtocolError, match="which requested"):
        elf.on_message(release(E.PINS, 2, 5))  # units differ from the request


def test_requests_behind_mine_do_not_count():
    elf = with_contract(pins=1)
    elf.on_message(request(E.PINS, 2, ts=999, units=1))  # later than mine
    effects = all_replies(elf, E.PINS)
    assert effects[0] == Enter("pins", 1)


def test_critical_with_poison_works_and_exit_releases_everything_in_order():
    elf = working(contracts=(2, 3), poison=5)
    assert elf.state == ElfState.ELF_CRITICAL
    effects = elf.on_local("exit")
    assert effects[:4] == [
        Note("contract_done", {"round": 1, "contract": 1, "hamsters": 2}),
        Exit("poison", 2),
        Exit("pins", 1),
        Exit("contract:1.1"),
    ]
    assert [(s.to, s.msg.type) for s in sends(effects)] == [
        (2, "PINS_RELEASE"),
        (3, "PINS_RELEASE"),
        (2, "POISON_RELEASE"),
        (3, "POISON_RELEASE"),
        (0, "CONTRACT_COMPLETED"),
    ]
    assert effects[-1] == Schedule("request", "rest")
    assert elf.state == ElfState.ELF_FINISHED and elf.done == {1: [1]}
    assert elf.queues == {E.PINS: {}, E.POISON: {}}


def test_critical_enters_poison_and_schedules_the_work():
    elf = with_contract(contracts=(4,), poison=4)
    all_replies(elf, E.PINS)
    effects = all_replies(elf, E.POISON)
    assert effects == [Enter("poison", 4), Schedule("exit", "work")]


def test_exit_outside_the_work_is_refused():
    elf = with_contract()
    with pytest.raises(ProtocolError, match="cannot finish work"):
        elf.on_local("exit")


# -- ELF_FINISHED ----------------------------------------------------------------------------
def test_finished_rest_timer_asks_for_another_contract():
    elf = working()
    elf.on_local("exit")
    effects = elf.on_local("request")
    assert [s.msg.type for s in effects] == ["CONTRACT_REQUEST", "CONTRACT_REQUEST"]
    assert elf.state == ElfState.ELF_REQUESTING and elf.phase == E.CONTRACT
    with pytest.raises(ProtocolError, match="no contract request pending"):
        elf.on_local("request")


def test_finished_knowing_as_many_requests_as_contracts_does_not_ask_again():
    elf = working(contracts=(2, 3))
    elf.on_message(request(E.CONTRACT, 2, ts=30))  # 2 requests known, 2 contracts
    elf.on_local("exit")
    assert elf.on_local("request") == []  # it would come third: none left
    assert elf.state is ElfState.INITIAL and elf.active and elf.waiting_for() == {"STOP": [0]}


def test_finished_then_stop_makes_the_rest_timer_stale():
    elf = working()
    elf.on_local("exit")
    elf.on_message(E.Stop(sender=0, ts=99, round=1))
    assert elf.state is ElfState.INITIAL
    assert elf.on_local("request") == []  # the timer outlived its round
    assert elf.state is ElfState.INITIAL


# -- final state ----------------------------------------------------------------------------
def test_final_stop_ends_in_elf_done_and_everything_later_is_dropped():
    elf = working()
    elf.on_local("exit")
    elf.on_message(E.Stop(sender=0, ts=99, round=1, final=True))
    assert elf.state == ElfState.ELF_DONE and elf.finished
    assert elf.on_message(reply(E.CONTRACT, 2)) == []
    assert elf.on_message(release(E.PINS, 2, 1)) == []
    with pytest.raises(ProtocolError):
        init(elf, round_=2)


def test_a_lone_elf_needs_no_replies():
    elf = Elf(1, 1, pins=1, poison=3)
    effects = init(elf, (3,))
    assert [e for e in effects if not isinstance(e, Send)] == [
        Enter("contract:1.1"),
        Enter("pins", 1),
        Enter("poison", 3),
        Schedule("exit", "work"),
    ]


def test_a_reply_of_the_running_round_outside_requesting_is_refused_one_of_a_stopped_round_dropped():
    elf = working()
    assert elf.state is ElfState.ELF_CRITICAL
    with pytest.raises(
        ProtocolError, match="elf-1 got an unexpected PINS_REPLY from elf-2 in state ELF_CRITICAL"
    ):
        elf.on_message(reply(E.PINS, 2))
    late = Elf(1, 3, pins=2, poison=5)
    init(late)
    late.on_message(E.Stop(sender=0, ts=9, round=1))  # its contract request is dropped
    init(late, round_=2, ts=10)
    for kind in (E.CONTRACT, E.PINS, E.POISON):
        all_replies(late, kind, round_=2)
    assert late.state is ElfState.ELF_CRITICAL
    clock = late.clock.time
    assert late.on_message(reply(E.CONTRACT, 2, round_=1)) == [] and late.clock.time == clock


# -- the tables as data (what the dispatch runs on) --------------------------------------------
ELF_LOCAL = ("request", "exit")


def test_the_elf_table_refuses_only_what_cannot_arrive():
    refused = {
        (str(s), t) for s in ElfState for t in (*E.CODEC.types, *ELF_LOCAL) if not Elf.TABLE.accepts(s, t)
    }
    every_state = {str(s) for s in ElfState}
    assert refused == (
        {(s, "CONTRACT_COMPLETED") for s in every_state}  # only the mayor gets it
        | {(s, "INIT_CONTRACTS") for s in every_state - {"INITIAL"}}  # only between rounds
        | {
            (s, "STOP") for s in ("ELF_CRITICAL", "ELF_WAIT_FOR_RELEASE", "ELF_DONE")
        }  # holds a contract, or done
        | {(s, "exit") for s in every_state - {"ELF_CRITICAL"}}  # only work ends with exit
    )
    assert Elf.TABLE.cell(ElfState.ELF_REQUESTING, "PINS_REPLY").handler == "_on_reply"
    assert {Elf.TABLE.cell(s, "PINS_REPLY").handler for s in ElfState} == {"_on_reply", "_on_stray_reply"}


@pytest.mark.parametrize(
    "elf, kind, state",
    [
        (lambda: working(), "INIT_CONTRACTS", "ELF_CRITICAL"),
        (lambda: working(), "STOP", "ELF_CRITICAL"),
        (lambda: with_contract(), "CONTRACT_COMPLETED", "ELF_REQUESTING"),
    ],
)
def test_a_refused_input_names_the_elf_its_state_and_the_input(elf, kind, state):
    msg = {
        "INIT_CONTRACTS": E.InitContracts(sender=0, ts=99, round=2, contracts=(1,)),
        "STOP": E.Stop(sender=0, ts=99, round=1),
        "CONTRACT_COMPLETED": E.ContractCompleted(sender=2, ts=99, round=1, contract=1),
    }[kind]
    with pytest.raises(ProtocolError, match=f"^elf-1 cannot take {kind} in state {state}(: .+)?$"):
        elf().on_message(msg)


class CheckedElf(Elf):
    """An elf whose every input is held to ``Elf.TABLE.check_step``."""

    def on_message(self, msg):
        before = self.state
        effects = super().on_message(msg)
        Elf.TABLE.check_step(before, msg.type, self.state)
        return effects

    def on_local(self, action):
        before = self.state
        effects = super().on_local(action)
        Elf.TABLE.check_step(before, action, self.state)
        return effects


class CheckedMayor(Mayor):
    def on_message(self, msg):
        before = self.state
        effects = super().on_message(msg)
        Mayor.TABLE.check_step(before, msg.type, self.state)
        return effects

    def on_local(self, action):
        before = self.state
        effects = super().on_local(action)
        Mayor.TABLE.check_step(before, action, self.state)
        return effects


@pytest.mark.parametrize(
    "processes, options, config",
    [
        (1, {}, {}),  # a lone elf: straight to ELF_CRITICAL
        (4, {"rounds": 3}, {"duplicate": 0.3}),
        (5, {"pins": 2, "poison": 6, "hamsters": [2, 5]}, {"spike": 0.2, "spike_delay": 20.0}),
    ],
)
def test_every_step_of_a_run_is_one_the_tables_allow(processes, options, config):
    for seed in range(4):
        setup = E.make_setup(processes, options, seed)
        for p in setup.protocols.values():
            p.__class__ = CheckedMayor if type(p) is Mayor else CheckedElf
        assert Simulation(setup, SimConfig(seed=seed, **config)).run().ok


# -- the mayor -------------------------------------------------------------------------------
def test_mayor_initial_start_sends_the_contracts_to_every_elf():
    mayor = Mayor(3, [(2, 5), (1, 1)])
    effects = mayor.start()
    assert effects[0] == Note("round", {"round": 1, "contracts": [2, 5]})
    assert [(s.to, s.msg.type, s.msg.contracts) for s in sends(effects)] == [
        (j, "INIT_CONTRACTS", (2, 5)) for j in (1, 2, 3)
    ]
    assert mayor.state == MayorState.MAYOR_WAITING


def test_mayor_waiting_stops_the_round_once_every_contract_is_completed():
    mayor = Mayor(2, [(2, 5), (1,)])
    mayor.start()
    done = lambda i, r=1: mayor.on_message(E.ContractCompleted(sender=1, ts=5, round=r, contract=i))  # noqa: E731
    assert done(2) == [] and done(2) == []  # a repeat changes nothing
    assert "contract(s) 1" in next(iter(mayor.waiting_for()))
    effects = done(1)
    assert [(s.to, s.msg.type, s.msg.round, s.msg.final) for s in sends(effects)] == [
        (1, "STOP", 1, False),
        (2, "STOP", 1, False),
    ]
    assert effects[-1] == Schedule("request", "pause") and mayor.state is MayorState.INITIAL
    assert done(1) == []  # a late completion of round 1: ignored
    mayor.on_local("request")  # round 2 begins
    with pytest.raises(ProtocolError, match="has no contract 7"):
        done(7, 2)


def test_mayor_initial_pause_begins_the_next_round_and_the_last_stop_is_final():
    mayor = Mayor(1, [(2,), (3,)])
    mayor.start()
    mayor.on_message(E.ContractCompleted(sender=1, ts=5, round=1, contract=1))
    effects = mayor.on_local("request")
    assert sends(effects)[0].msg.round == 2 and sends(effects)[0].msg.contracts == (3,)
    with pytest.raises(ProtocolError, match="mayor cannot 'request' in state MAYOR_WAITING"):
        mayor.on_local("request")  # not while waiting
    effects = mayor.on_message(E.ContractCompleted(sender=1, ts=9, round=2, contract=1))
    assert sends(effects)[0].msg.final is True
    assert (
        mayor.state == MayorState.MAYOR_DONE
        and mayor.finished
        and not any(isinstance(e, Schedule) for e in effects)
    )
    with pytest.raises(ProtocolError):
        mayor.on_local("request")


def test_mayor_takes_only_completions():
    mayor = Mayor(2, [(1,)])
    mayor.start()
    with pytest.raises(ProtocolError, match="mayor cannot take PINS_REPLY in state MAYOR_WAITING"):
        mayor.on_message(reply(E.PINS, 1))


# -- messages --------------------------------------------------------------------------------
def test_every_message_carries_its_round_and_decodes_with_clear_errors():
    msg = E.PoisonRequest(sender=2, ts=4, round=3, units=6)
    assert E.CODEC.decode(E.CODEC.encode(msg)) == msg
    assert set(E.CODEC.types) == {
        "INIT_CONTRACTS",
        "CONTRACT_REQUEST",
        "CONTRACT_REPLY",
        "PINS_REQUEST",
        "PINS_REPLY",
        "PINS_RELEASE",
        "POISON_REQUEST",
        "POISON_REPLY",
        "POISON_RELEASE",
        "CONTRACT_COMPLETED",
        "STOP",
    }
    with pytest.raises(MessageError, match="round: Field required"):
        E.CODEC.decode(b'{"type": "PINS_REPLY", "sender": 1, "ts": 1}')
    with pytest.raises(MessageError, match="round"):
        E.CODEC.decode(b'{"type": "STOP", "sender": 0, "ts": 1, "round": 0}')
    with pytest.raises(MessageError, match="units"):
        E.CODEC.decode(b'{"type": "PINS_REQUEST", "sender": 1, "ts": 1, "round": 1, "units": 0}')
    with pytest.raises(MessageError, match="contracts"):
        E.CODEC.decode(b'{"type": "INIT_CONTRACTS", "sender": 0, "ts": 1, "round": 1, "contracts": [2, 0]}')
    with pytest.raises(MessageError, match="contracts"):
        E.CODEC.decode(b'{"type": "INIT_CONTRACTS", "sender": 0, "ts": 1, "round": 1, "contracts": []}')
    init = E.CODEC.decode(
        b'{"type": "INIT_CONTRACTS", "sender": 0, "ts": 1, "round": 1, "contracts": [2, 5]}'
    )
    assert init.contracts == (2, 5)


# -- a worked example, scripted (docs/architecture.md#scenario-format) ------------------------
PINS_THEN_POISON = {
    "algorithm": "elves",
    "processes": 2,
    "options": {"pins": 2, "poison": 3, "contracts": 2, "hamsters": [2, 2], "rounds": 1},
    "steps": [
        {"op": "drain"},
        {"op": "exit", "pid": 1},
        {"op": "drain"},
        {"op": "exit", "pid": 2},
        {"op": "drain"},
    ],
}


def test_worked_example_an_elf_holds_pins_while_waiting_for_poison_and_gets_it_on_release():
    from mutexlab.audit import verify_events
    from mutexlab.sim.scripted import replay_scenario

    first = replay_scenario({**PINS_THEN_POISON, "steps": PINS_THEN_POISON["steps"][:1]})
    one, two = first.protocols[1], first.protocols[2]
    assert (one.state, one.holding) == (ElfState.ELF_CRITICAL, (1, 2))  # both pins and 2 of 3 poison
    assert (two.state, two.phase, two.holding) == (ElfState.ELF_WAIT_FOR_RELEASE, E.POISON, (2, 2))
    assert two.waiting_for() == {"POISON_RELEASE": [1]}

    whole = replay_scenario(PINS_THEN_POISON)
    assert whole.states == {
        "mayor": MayorState.MAYOR_DONE,
        "elf-1": ElfState.ELF_DONE,
        "elf-2": ElfState.ELF_DONE,
    }
    assert verify_events(whole.events).ok
