"""The bee state table, row by row: each message (and local decision) in each state.

Bee 1 of three (K flowers, one reed unless said otherwise) is driven into each state by feeding
it messages by hand; then one input is given and its reaction compared with the table ``Bee.TABLE``
(``mutexlab/protocols/bees/machine.py``: the problem statement's reactions, or the documented
decision). The table itself is data: the last tests read it and hold seeded runs to it.
"""

from __future__ import annotations

import pytest

from mutexlab.messages import MessageError
from mutexlab.protocol import Enter, Exit, Note, ProtocolError, Schedule, Send
from mutexlab.protocols.bees import (
    CODEC,
    ACKflower,
    ACKreed,
    Bee,
    BeeState,
    RELEASEreed,
    REQflower,
    REQreed,
    make_setup,
)
from mutexlab.setups import ConfigError
from mutexlab.sim import SimConfig, Simulation


def bee_in(state: str, flowers: int = 1, eggs: int = 2) -> Bee:
    """Bee 1 of 3 (clock starting at 10) in ``state``, reached through the protocol itself."""
    cocoons = eggs if state == "RETIRED" else eggs * 3
    bee = Bee(1, 3, flowers=flowers, reeds=1, eggs=eggs, cocoons=cocoons, clock=10)
    assert bee.state == "REST"
    if state == "REST":
        return bee
    if state == "RETIRED":
        bee.on_message(REQreed(sender=2, ts=1))  # bee 2 asked earlier: it gets the only place
    bee.on_local("request")
    if state == "WAIT_REED":
        return bee
    mine = bee.requests[1][0]
    for j in (2, 3):
        bee.on_message(ACKreed(sender=j, ts=bee.clock.time + 1, req_ts=mine))
    if state == "RETIRED":
        assert bee.state == "RETIRED"
        return bee
    assert bee.state == "ON_REED"
    if state == "ON_REED":
        return bee
    bee.on_local("request")
    if state == "WAIT_FLOWER":
        return bee
    mine = bee.flower_request[0]
    for j in (2, 3):
        bee.on_message(ACKflower(sender=j, ts=bee.clock.time + 1, req_ts=mine))
    assert bee.state == "ON_FLOWER"
    if state == "ON_FLOWER":
        return bee
    assert state == "DEAD"
    for _ in range(eggs - 1):
        bee.on_local("exit")
        bee.on_local("request")
        mine = bee.flower_request[0]
        for j in (2, 3):
            bee.on_message(ACKflower(sender=j, ts=bee.clock.time + 1, req_ts=mine))
    bee.on_local("exit")
    assert bee.state == "DEAD"
    return bee


def describe(effects: list) -> list[str]:
    """Effects as short words: 'ACKreed→2', 'enter reed:1', 'egg', 'schedule request' ..."""
    out = []
    for e in effects:
        if isinstance(e, Send):
            out.append(f"{e.msg.type}→{e.to}")
        elif isinstance(e, Enter):
            out.append(f"enter {e.resource}")
        elif isinstance(e, Exit):
            out.append(f"exit {e.resource}")
        elif isinstance(e, Note):
            out.append(e.event)
        elif isinstance(e, Schedule):
            out.append(f"schedule {e.action}")
    return out


LIVE = ["REST", "WAIT_REED", "ON_REED", "WAIT_FLOWER", "ON_FLOWER"]
ALL = LIVE + ["DEAD", "RETIRED"]


# -- REQreed: every live bee inserts the request and acknowledges, echoing its timestamp -------
@pytest.mark.parametrize("state", ALL)
def test_reqreed(state):
    bee = bee_in(state)
    effects = bee.on_message(REQreed(sender=2, ts=500))
    if state in ("DEAD", "RETIRED"):
        assert effects == [] and bee.requests.get(2) != (500, 2)
        return
    assert describe(effects) == ["ACKreed→2"]
    assert effects[0].msg.req_ts == 500 and effects[0].msg.ts > 500  # Lamport: past the stamp
    assert bee.requests[2] == (500, 2) and bee.state == state


# -- ACKreed: counted only in WAIT_REED and only for my request; stale ones are ignored -----------
@pytest.mark.parametrize("state", ALL)
def test_ackreed_for_another_request_is_ignored(state):
    bee = bee_in(state)
    before, acks = bee.snapshot(), set(bee.reed_acks)
    assert bee.on_message(ACKreed(sender=2, ts=900, req_ts=3)) == []
    assert bee.state == state and bee.reed_acks == acks
    if state in ("DEAD", "RETIRED"):
        assert bee.snapshot() == before


def test_ackreed_in_wait_reed_counts_and_the_last_one_enters():
    bee = bee_in("WAIT_REED")
    mine = bee.requests[1][0]
    assert bee.on_message(ACKreed(sender=2, ts=50, req_ts=mine)) == []
    assert bee.reed_acks == {2} and bee.waiting_for() == {"ACKreed": [3]}
    assert describe(bee.on_message(ACKreed(sender=3, ts=50, req_ts=mine))) == [
        "enter reed:1",
        "schedule request",
    ]
    assert bee.state == "ON_REED" and bee.reed == 1


# -- REQflower: ack unless competing with an earlier request or on a flower (then defer) ----------
@pytest.mark.parametrize("state", ["REST", "WAIT_REED", "ON_REED"])
def test_reqflower_is_acknowledged_when_not_competing(state):
    bee = bee_in(state)
    effects = bee.on_message(REQflower(sender=2, ts=7))
    assert describe(effects) == ["ACKflower→2"] and effects[0].msg.req_ts == 7
    assert bee.deferred == []


def test_reqflower_in_wait_flower_earlier_request_is_acknowledged():
    bee = bee_in("WAIT_FLOWER")
    mine = bee.flower_request[0]
    effects = bee.on_message(REQflower(sender=2, ts=mine - 1))
    assert describe(effects) == ["ACKflower→2"] and effects[0].msg.req_ts == mine - 1


@pytest.mark.parametrize("delta, sender", [(+1, 2), (0, 2)])
def test_reqflower_in_wait_flower_later_request_is_deferred(delta, sender):
    """Later (ts, pid) is deferred — including an equal timestamp from a higher pid (decision 6)."""
    bee = bee_in("WAIT_FLOWER")
    mine = bee.flower_request[0]
    assert bee.on_message(REQflower(sender=sender, ts=mine + delta)) == []
    assert bee.deferred == [(sender, mine + delta)]


def test_equal_timestamp_from_a_lower_pid_wins():
    bee = Bee(2, 3, flowers=1, reeds=3, eggs=1, cocoons=3, clock=0)
    bee.on_local("request")
    for j in (1, 3):
        bee.on_message(ACKreed(sender=j, ts=1, req_ts=bee.requests[2][0]))
    bee.on_local("request")
    mine = bee.flower_request[0]
    assert describe(bee.on_message(REQflower(sender=1, ts=mine))) == ["ACKflower→1"]


def test_reqflower_on_a_flower_is_deferred_and_answered_on_exit():
    bee = bee_in("ON_FLOWER")
    assert bee.on_message(REQflower(sender=3, ts=1)) == []
    assert bee.deferred == [(3, 1)]
    effects = bee.on_local("exit")
    assert describe(effects) == ["exit flower", "ACKflower→3", "egg", "schedule request"]
    assert effects[1].msg.req_ts == 1
    assert bee.state == "ON_REED" and bee.laid == 1 and bee.deferred == []


@pytest.mark.parametrize("state", ["DEAD", "RETIRED"])
def test_gone_bees_ignore_everything(state):
    bee = bee_in(state)
    before = bee.snapshot()
    clock = bee.clock.time
    for msg in (
        REQflower(sender=2, ts=1),
        ACKflower(sender=2, ts=1, req_ts=1),
        REQreed(sender=3, ts=1),
        ACKreed(sender=3, ts=1, req_ts=1),
        RELEASEreed(sender=2, ts=1, reed=1, status="FULL", cocoons=6),
    ):
        assert bee.on_message(msg) == []
    assert bee.snapshot() == before and bee.clock.time == clock and bee.finished


# -- ACKflower: counted only in WAIT_FLOWER for the current request (decision 1) -------------------
@pytest.mark.parametrize("state", LIVE)
def test_ackflower_for_an_older_request_never_counts(state):
    bee = bee_in(state)
    acks = set(bee.flower_acks)
    assert bee.on_message(ACKflower(sender=2, ts=900, req_ts=1)) == []
    assert bee.state == state and bee.flower_acks == acks


def test_ackflower_in_wait_flower_counts_up_to_the_threshold():
    bee = bee_in("WAIT_FLOWER", flowers=2)  # 2 others, K − 1 = 1 may be on a flower: 1 ACK suffices
    assert bee.flower_threshold() == 1
    mine = bee.flower_request[0]
    assert describe(bee.on_message(ACKflower(sender=3, ts=900, req_ts=mine))) == [
        "enter flower",
        "schedule exit",
    ]
    assert bee.state == "ON_FLOWER"
    # The other ACK arrives late, while the bee is on the flower: ignored.
    assert bee.on_message(ACKflower(sender=2, ts=901, req_ts=mine)) == []


def test_with_as_many_flowers_as_bees_nobody_waits_for_a_flower():
    bee = bee_in("ON_REED", flowers=3)
    effects = bee.on_local("request")
    assert describe(effects) == ["REQflower→2", "REQflower→3", "enter flower", "schedule exit"]


# -- RELEASEreed: the sender is gone; its reed report is kept; waits shrink (decision 3) ------------
@pytest.mark.parametrize("state", LIVE)
def test_releasereed_marks_the_sender_gone(state):
    bee = bee_in(state)
    assert 3 in bee.alive
    bee.on_message(RELEASEreed(sender=3, ts=60, reed=2, status="AVAILABLE", cocoons=2))
    assert 3 not in bee.alive and bee.reed_eggs[2] == 2 and bee.state == state


def test_a_death_notice_lets_a_waiting_bee_stop_waiting_for_the_dead():
    bee = bee_in("WAIT_REED")
    mine = bee.requests[1][0]
    bee.on_message(ACKreed(sender=2, ts=50, req_ts=mine))
    effects = bee.on_message(RELEASEreed(sender=3, ts=60, reed=0, status="NO_ROOM", cocoons=0))
    assert describe(effects) == ["enter reed:1", "schedule request"]


def test_a_death_shrinks_the_flower_threshold():
    bee = bee_in("WAIT_FLOWER")  # K = 1: needs both others
    mine = bee.flower_request[0]
    bee.on_message(ACKflower(sender=2, ts=100, req_ts=mine))
    assert bee.state == "WAIT_FLOWER"
    effects = bee.on_message(RELEASEreed(sender=3, ts=101, reed=2, status="FULL", cocoons=6))
    assert describe(effects) == ["enter flower", "schedule exit"]


def test_an_ack_from_a_bee_that_died_since_does_not_count():
    bee = bee_in("WAIT_FLOWER")  # K = 1
    mine = bee.flower_request[0]
    bee.on_message(ACKflower(sender=2, ts=100, req_ts=mine))
    bee.on_message(RELEASEreed(sender=2, ts=101, reed=2, status="FULL", cocoons=6))
    assert bee.state == "WAIT_FLOWER" and bee.waiting_for() == {"ACKflower": [3]}


def test_a_gone_bee_is_dropped_from_the_deferred_queue():
    bee = bee_in("ON_FLOWER")
    bee.on_message(REQflower(sender=3, ts=1))
    bee.on_message(RELEASEreed(sender=3, ts=99, reed=2, status="AVAILABLE", cocoons=2))
    assert describe(bee.on_local("exit")) == ["exit flower", "egg", "schedule request"]


# -- reed order and surplus bees (decisions 2 and 4) ---------------------------------------------
def test_a_bee_waits_for_the_earlier_bee_of_its_reed_to_leave():
    bee = Bee(3, 3, flowers=1, reeds=2, eggs=1, cocoons=2, clock=10)
    bee.on_message(REQreed(sender=1, ts=1))  # rank 0 → reed 1
    bee.on_message(REQreed(sender=2, ts=2))  # rank 1 → reed 2
    bee.on_local("request")  # rank 2 → reed 1, second turn
    mine = bee.requests[3][0]
    assert bee.on_message(ACKreed(sender=1, ts=50, req_ts=mine)) == []
    assert bee.on_message(ACKreed(sender=2, ts=50, req_ts=mine)) == []
    assert bee.waiting_for() == {"RELEASEreed": [1]}
    assert bee.on_message(RELEASEreed(sender=2, ts=60, reed=2, status="AVAILABLE", cocoons=1)) == []
    effects = bee.on_message(RELEASEreed(sender=1, ts=61, reed=1, status="AVAILABLE", cocoons=1))
    assert describe(effects) == ["enter reed:1", "schedule request"]


def test_a_surplus_bee_retires_and_says_so():
    bee = Bee(1, 3, flowers=1, reeds=1, eggs=2, cocoons=2, clock=10)
    bee.on_message(REQreed(sender=2, ts=1))
    bee.on_local("request")
    mine = bee.requests[1][0]
    bee.on_message(ACKreed(sender=2, ts=50, req_ts=mine))
    effects = bee.on_message(ACKreed(sender=3, ts=50, req_ts=mine))
    assert describe(effects) == ["retire", "RELEASEreed→2", "RELEASEreed→3"]
    assert effects[1].msg.status == "NO_ROOM" and bee.state == "RETIRED" and bee.finished


def test_the_last_egg_releases_the_reed_and_the_bee_dies():
    bee = bee_in("ON_FLOWER", eggs=1)
    effects = bee.on_local("exit")
    assert describe(effects) == [
        "exit flower",
        "egg",
        "exit reed:1",
        "RELEASEreed→2",
        "RELEASEreed→3",
        "death",
    ]
    assert effects[3].msg.reed == 1 and effects[3].msg.cocoons == 1 and effects[3].msg.status == "AVAILABLE"
    assert bee.state == "DEAD" and bee.finished


# -- local decisions --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "state, action, words",
    [
        ("REST", "request", ["REQreed→2", "REQreed→3"]),
        ("ON_REED", "request", ["REQflower→2", "REQflower→3"]),
        ("ON_FLOWER", "exit", ["exit flower", "egg", "schedule request"]),
    ],
)
def test_allowed_local_decisions(state, action, words):
    assert describe(bee_in(state).on_local(action)) == words


REFUSED = [(s, a) for s in ALL for a in ("request", "exit") if not Bee.TABLE.accepts(BeeState(s), a)]


@pytest.mark.parametrize("state, action", REFUSED + [("REST", "fly")])
def test_impossible_local_decisions_are_refused(state, action):
    words = {"request": "request", "exit": "exit"}.get(action, f"local action '{action}'")
    with pytest.raises(ProtocolError, match=f"^bee-1 cannot take {words} in state {state}: "):
        bee_in(state).on_local(action)


# -- the table as data (Bee.TABLE, what the dispatch runs on) ---------------------------------------
def test_the_table_takes_every_message_in_every_state_and_three_local_decisions():
    assert [(s, t) for s in BeeState for t in CODEC.types if not Bee.TABLE.accepts(s, t)] == []
    assert len(REFUSED) == 2 * len(ALL) - 3  # request in REST and ON_REED, exit in ON_FLOWER
    gone = [Bee.TABLE.cell(s, t) for s in (BeeState.DEAD, BeeState.RETIRED) for t in CODEC.types]
    assert all(cell is not None and cell.handler is None for cell in gone)  # ignored: no clock step


class Checked(Bee):
    """A bee whose every input is held to ``Bee.TABLE.check_step``: it ends in a state its cell allows."""

    def on_message(self, msg):
        before = self.state
        effects = super().on_message(msg)
        Bee.TABLE.check_step(before, msg.type, self.state)
        return effects

    def on_local(self, action):
        before = self.state
        effects = super().on_local(action)
        Bee.TABLE.check_step(before, action, self.state)
        return effects


@pytest.mark.parametrize(
    "processes, options, config",
    [
        (6, {"flowers": 2, "reeds": 2, "eggs": 2, "cocoons": 4}, {}),
        (7, {"flowers": 3, "reeds": 1, "eggs": 1, "cocoons": 2}, {"duplicate": 0.3}),  # some retire
        (2, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1}, {"dwell": {"rest": 30}}),  # alone at once
    ],
)
def test_every_step_of_a_run_is_one_the_table_allows(processes, options, config):
    for seed in range(4):
        setup = make_setup(processes, options, seed)
        for bee in setup.protocols.values():
            bee.__class__ = Checked
        assert Simulation(setup, SimConfig(seed=seed, **config)).run().ok


def test_a_step_the_table_does_not_allow_is_caught():
    with pytest.raises(AssertionError, match="the table allows"):
        Bee.TABLE.check_step(BeeState.WAIT_FLOWER, "REQflower", BeeState.ON_FLOWER)


def test_a_broadcast_carries_one_timestamp_and_ticks_once():
    bee = bee_in("REST")
    effects = bee.on_local("request")
    assert {e.msg.ts for e in effects} == {11} and bee.clock.time == 11


# -- messages and configuration ------------------------------------------------------------------
def test_codec_round_trip_and_refusals():
    for msg in (
        REQreed(sender=1, ts=2),
        ACKreed(sender=2, ts=3, req_ts=2),
        REQflower(sender=1, ts=4),
        ACKflower(sender=3, ts=5, req_ts=4),
        RELEASEreed(sender=1, ts=6, reed=2, status="FULL", cocoons=15),
    ):
        assert CODEC.decode(CODEC.encode(msg)) == msg
    for raw, words in [
        (b'{"type": "ACKflower", "sender": 1, "ts": 2}', "req_ts"),
        (
            b'{"type": "RELEASEreed", "sender": 1, "ts": 2, "reed": 1, "status": "HALF", "cocoons": 3}',
            "status",
        ),
        (b'{"type": "REQhoney", "sender": 1, "ts": 2}', "unknown message type"),
    ]:
        with pytest.raises(MessageError, match=words):
            CODEC.decode(raw)


@pytest.mark.parametrize(
    "options, words",
    [
        ({"flowers": 0}, "'flowers' must be at least 1"),
        ({"reeds": "two"}, "'reeds' must be a whole number"),
        ({"eggs": 4}, "multiple of eggs"),
        ({"queens": 1}, "do not take option"),
        ({"initial_clocks": {"9": 1}}, "outside 1..3"),
    ],
)
def test_bad_options_are_refused(options, words):
    with pytest.raises(ConfigError, match=words):
        make_setup(3, options, 0)


def test_initial_clocks_are_random_per_seed_and_can_be_given():
    clocks = {s: make_setup(6, {}, s).params["initial_clocks"] for s in range(4)}
    assert len({tuple(c.values()) for c in clocks.values()}) > 1
    assert make_setup(6, {}, 2).params["initial_clocks"] == clocks[2]
    setup = make_setup(3, {"initial_clocks": {"2": 7}}, 0)
    assert setup.protocols[2].clock.time == 7
