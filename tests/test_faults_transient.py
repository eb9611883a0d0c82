"""Transient delivery's guarantee (docs/wire.md#delivery-modes), over RabbitMQ: protocol messages
lost or duplicated between the broker and their addressee, and a participant's reconnect, change
nothing — the sender keeps what it sent until its addressee acknowledges it and sends it again
(bus/links.py); the receiver drops what it already handled. (A broker restart is not
survived: tests/test_faults_restart.py checks that such a run ends INCOMPLETE, never SAFE.)

The fault is a thief: mid-run it consumes from two participants' queues beside their own
consumers (the broker hands each consumer of a queue its share), throws away every other protocol
message it gets and publishes the others twice, exactly as they were (same routing key, headers
and MAC: authentic duplicates, which reach the monitor's queue too). Control messages (the
acknowledgements, the stop) are put back. The same theft in persistent delivery, which does not
retransmit, loses the run: that is the test showing the thief really takes messages away.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pika
import pytest
from conftest import RunTap
from test_rabbit_runs import _close_connections, needs_rabbitmqctl

from mutexlab.bus.links import (
    ACK_DELAY,
    ACK_EVERY,
    RESEND_BATCH,
    RETRY,
    LinkAcks,
    LinkOutbox,
    Retransmission,
    parse_link,
)
from mutexlab.bus.topology import Topology
from mutexlab.bus.wire import MAX_BODY, compact, frame, parse_frame
from mutexlab.cli import main as cli
from mutexlab.transport.settings import queue_kind
from mutexlab.transport.supervisor import Plan, execute


def _steal(url: str, exchange: str, queues: list[str], enough: int, timeout: float) -> Counter:
    """Consume from ``queues``: of the protocol messages taken, drop every other one (``lost``) and
    publish the others twice (``duplicated``), until ``enough`` of each or ``timeout``."""
    stolen: Counter = Counter()
    republished: set[bytes] = set()  # never taken again: dropping a copy would lose nothing
    conn = pika.BlockingConnection(pika.URLParameters(url))
    try:
        channel = conn.channel()

        def take(ch, method, props, body):
            if (
                method.routing_key.startswith("control.")
                or body in republished
                or min(stolen["lost"], stolen["duplicated"]) >= enough
            ):
                ch.basic_reject(method.delivery_tag, requeue=True)
                return
            if stolen["lost"] <= stolen["duplicated"]:
                stolen["lost"] += 1
            else:
                stolen["duplicated"] += 1
                republished.add(body)
                for _ in range(2):
                    ch.basic_publish(exchange, method.routing_key, body, props)
            ch.basic_ack(method.delivery_tag)

        channel.basic_qos(prefetch_count=1)
        for queue in queues:
            channel.basic_consume(queue, take)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and (stolen["lost"] < enough or stolen["duplicated"] < enough):
            conn.process_data_events(time_limit=0.05)
    finally:
        conn.close()
    return stolen


def _robbed_run(
    amqp_url: str, tmp_path: Path, delivery: str, stall: float
) -> tuple[int, dict, Counter, Plan]:
    plan = Plan(
        "ricart-agrawala",
        4,
        # 8 ended once before 4 of each were taken (CI at load: 4 lost, 3 copied), 12 and 20 too once
        # the nodes logged their state lines after a step's publish (faster hand-overs): 24 requests,
        # and 3 of each taken, are enough to test and leave room
        {"requests": 24},
        seed=2,
        amqp_url=amqp_url,
        dwell=0.05,
        stall_timeout=stall,
        join_timeout=120,
        trace=str(tmp_path / f"{delivery}.jsonl"),
        logs=str(tmp_path / f"logs-{delivery}"),
        delivery=delivery,
    )
    out = io.StringIO()
    result: dict = {}
    worker = threading.Thread(target=lambda: result.setdefault("code", execute(plan, True, out)), daemon=True)
    topology = Topology(plan.run_id)
    with RunTap(plan.amqp_url, plan.run_id, durable=delivery == "persistent") as tap:
        worker.start()
        tap.wait(
            lambda t: len(t.changes) == 4, "all 4 nodes changing state", stop=lambda: not worker.is_alive()
        )
    stolen = _steal(
        amqp_url,
        topology.exchange,
        [topology.queue("node-1"), topology.queue("node-3")],
        enough=3,
        timeout=20,
    )
    worker.join(timeout=300)
    assert not worker.is_alive(), "the run did not end"
    return result["code"], json.loads(out.getvalue()), stolen, plan


@pytest.mark.broker
def test_lost_and_duplicated_protocol_messages_are_sent_again_and_dropped(amqp_url, tmp_path):
    code, summary, stolen, plan = _robbed_run(amqp_url, tmp_path, "transient", stall=30)
    print(
        f"\ntransient, robbed mid-run: {dict(stolen)}; retransmitted {summary['retransmitted']}, "
        f"duplicates dropped {summary['duplicates']}, {summary['duration']}s"
    )
    assert stolen["lost"] >= 3 and stolen["duplicated"] >= 3, f"too little was taken to test: {stolen}"
    assert code == 0 and summary["complete"] and summary["safe"], summary
    assert summary["delivery"] == "transient" and summary["retransmitted"] >= 1
    assert summary["duplicates"] >= 3  # each duplicated message reached its addressees twice more
    events = [json.loads(line) for line in Path(plan.trace).read_text().splitlines()[1:]]
    sends = Counter(e["id"] for e in events if e["event"] == "send")
    recvs = Counter(e["id"] for e in events if e["event"] == "recv")
    assert sends == recvs and set(recvs.values()) == {1}, "each message sent is received exactly once"
    assert summary["entries"] == {"cs": 96}
    assert cli(["verify", plan.trace]) == 0


@pytest.mark.broker
def test_the_same_theft_stalls_a_persistent_run_which_does_not_retransmit(amqp_url, tmp_path):
    code, summary, stolen, _plan = _robbed_run(amqp_url, tmp_path, "persistent", stall=4)
    print(f"\npersistent, robbed mid-run: {dict(stolen)}; {summary['verdict'].splitlines()[0]}")
    assert stolen["lost"] >= 1, stolen
    assert code == 3 and not summary["complete"] and summary["safe"], summary
    assert any(info.get("undelivered") for info in summary["stalled"].values()), summary["stalled"]


@pytest.mark.broker
@needs_rabbitmqctl
def test_transient_run_survives_every_connection_closed_mid_run(amqp_url, tmp_path):
    """Every process of a transient run loses its connection mid-run: all reconnect (the run's
    queues, not durable, stay while the broker runs), the run completes, each message once."""
    plan = Plan(
        "ricart-agrawala",
        4,
        {"requests": 10},
        amqp_url=amqp_url,
        dwell=0.3,
        stall_timeout=30,
        join_timeout=120,
        trace=str(tmp_path / "trace.jsonl"),
        logs=str(tmp_path / "logs"),
        delivery="transient",
    )
    out = io.StringIO()
    with ThreadPoolExecutor(max_workers=1) as pool:
        with RunTap(amqp_url, plan.run_id, durable=False) as tap:
            future = pool.submit(execute, plan, True, out)
            tap.wait(
                lambda t: sum("WANTED" in states for states in t.states.values()) == 4,
                "all 4 nodes in WANTED",
                stop=future.done,
            )
        _close_connections(plan.run_id, 5)
        code = future.result(timeout=300)
    summary = json.loads(out.getvalue())
    assert code == 0 and summary["complete"] and summary["safe"], summary
    assert summary["reconnects"] >= 1 and summary["entries"] == {"cs": 40}
    events = [json.loads(line) for line in Path(plan.trace).read_text().splitlines()[1:]]
    sends = Counter(e["id"] for e in events if e["event"] == "send")
    recvs = Counter(e["id"] for e in events if e["event"] == "recv")
    assert sends == recvs and set(recvs.values()) == {1}, "each message received exactly once"
    assert cli(["verify", plan.trace]) == 0


# -- the pieces, without a broker ---------------------------------------------------------------


def _entry(dest: str, seq: int) -> tuple:
    return (dest, seq, f"m{seq}", {"node-1": seq}, {"type": "REQUEST"})


def test_a_link_is_sent_again_after_its_wait_and_waits_twice_as_long_without_progress():
    out = LinkOutbox()
    for seq in (1, 2, 3):
        out.keep("REQUEST.node-2", _entry("node-2", seq), now=0.0)
    assert out.overdue(RETRY - 0.01) == []
    [(dest, kept)] = out.overdue(RETRY)
    assert dest == "node-2" and [e[1] for _k, e in kept] == [1, 2, 3]
    assert out.overdue(RETRY + RETRY * 1.5) == []  # the wait doubled
    assert len(out.overdue(RETRY + 2 * RETRY)) == 1 and out.retransmitted == 6
    out.ack("node-2", 2, now=10.0)  # cumulative: 1 and 2 are forgotten, the wait starts over,
    # backed off (Karn): sent twice, its wait was doubled twice
    assert [e[1] for _k, e in out.kept["node-2"]] == [3] and out.retry["node-2"] == out.wait == 4 * RETRY
    out.ack("node-2", 1, now=11.0)  # an older acknowledgement (reordered) changes nothing
    assert out.acked["node-2"] == 2 and out.since["node-2"] == 10.0
    assert out.next_due() <= 10.0 + out.wait  # a lower bound: the next look makes it exact
    out.ack("node-2", 3, now=12.0)
    assert out.overdue(100.0) == [] and out.next_due() is None


def test_an_acknowledgement_of_more_than_was_sent_is_ignored():
    out = LinkOutbox()
    for seq in (1, 2):
        out.keep("REQUEST.node-2", _entry("node-2", seq), now=0.0)
    out.ack("node-2", 5, now=0.1)  # a peer's bug or a forgery: messages 1 and 2 were never handled
    assert [e[1] for _k, e in out.kept["node-2"]] == [1, 2] and out.refused == 1
    out.ack("node-3", 1, now=0.1)  # nothing was sent to node-3
    assert out.refused == 2
    assert [d for d, _ in out.overdue(RETRY)] == ["node-2"], "still sent again"
    out.ack("node-2", 2, now=RETRY + 0.1)
    assert not out.kept["node-2"] and out.refused == 2


def test_the_next_due_link_is_never_missed_by_the_lower_bound():
    """``overdue`` looks at the links only from ``earliest`` on: the same links come out at every
    moment as from a look at every link each time (a random schedule of sends, and of
    acknowledgements after varied delays, which move the first wait, to ten links, some of them
    first used late)."""
    import random

    for seed in range(40):
        rng = random.Random(seed)
        fast, plain = LinkOutbox(), LinkOutbox()
        dests = [f"node-{i}" for i in range(2, 12)]
        now = 0.0
        for step in range(600):
            now += rng.choice((0.0, 0.01, 0.1, 0.5, 1.5, 4.0))
            dest = rng.choice(dests[: 2 + step // 60])  # a new link now and then
            what, pick = rng.random(), rng.randrange(4)
            for out in (fast, plain):
                if what < 0.5:
                    seq = out.acked.get(dest, 0) + len(out.kept.get(dest, ())) + 1
                    out.keep(f"REQUEST.{dest}", _entry(dest, seq), now)
                elif what < 0.8 and out.kept.get(dest):  # all, or a part: the rest waits on
                    out.ack(dest, out.kept[dest][pick % len(out.kept[dest])][1][1], now)
            plain.earliest = -1.0  # the plain twin looks at every link every time
            got, want = fast.overdue(now), plain.overdue(now)
            assert [(d, len(k)) for d, k in got] == [(d, len(k)) for d, k in want], (seed, step)
            due = fast.next_due()
            assert due is None or all(due <= fast.since[d] + fast.retry[d] for d, k in fast.kept.items() if k)


def test_a_long_backlog_is_sent_again_in_frames_under_the_body_limit():
    """Every kept message goes again, in order, in frames of at most RESEND_BATCH that each
    parse and stay under wire.MAX_BODY (one frame for a long backlog would be dead-lettered)."""
    sent: list[tuple[str, bytes]] = []

    class Bus:
        def send(self, key, body):
            sent.append((key, body))

    links = Retransmission("run-abc", "node-1")
    for seq in range(1, 2 * RESEND_BATCH + 4):
        links.outbox.keep("REQUEST.node-2", _entry("node-2", seq), now=0.0)
    links.tick(Bus(), {}, now=RETRY)
    assert [key for key, _ in sent] == ["REQUEST.node-2"] * 3
    assert all(len(body) < MAX_BODY for _, body in sent)
    roster = {"node-1": 1, "node-2": 2}
    seqs = [e["seq"] for _, body in sent for e in parse_frame(body, "run-abc", "node-2", roster)[1]]
    assert seqs == list(range(1, 2 * RESEND_BATCH + 4))


def test_an_acknowledgement_owed_waits_ack_delay_for_a_frame_to_carry_it():
    """A link owing an acknowledgement gets a ``link`` message only once it has owed it ACK_DELAY
    seconds (a step frame going back carries it meanwhile, for free), and one message then
    acknowledges every link so due. (Sent at the first look, as before, the links of a bee's
    request's replies were a third of a 50-bee run's deliveries: the first ``due`` below fails.)"""
    acks = LinkAcks()
    assert acks.due({"node-1": 2, "node-2": 4, "node-3": 0}, now=0.0) == {}, "owed since now"
    assert acks.next_due({"node-1": 2}, now=0.0) == pytest.approx(ACK_EVERY)
    assert acks.due({"node-1": 2, "node-2": 4}, now=0.01) == {}  # too soon after the last look
    assert acks.carried(["node-2"], {"node-2": 4}) == {"node-2": 4}, "a frame went back: carried"
    assert acks.due({"node-1": 2, "node-2": 4}, now=ACK_DELAY) == {"node-1": 2}  # node-2: carried
    assert acks.due({"node-1": 5}, now=ACK_DELAY + ACK_EVERY) == {}, "owed anew"
    assert acks.due({"node-1": 5}, now=2 * ACK_DELAY + ACK_EVERY) == {"node-1": 5}
    assert acks.due({"node-1": 5}, now=10.0) == {} and acks.next_due({"node-1": 5}, now=10.0) is None
    # carried in a step frame to node-1 whatever the time: no message of its own is due then
    assert acks.carried(["node-1", "node-2"], {"node-1": 7, "node-2": 0}) == {"node-1": 7}
    assert acks.due({"node-1": 7}, now=20.0) == {} and not acks.owed


def test_a_link_acknowledged_through_a_loaded_host_is_not_sent_again():
    """On a loaded host (load 20-45 on 2 cores: a 50-bee run) a process may wait over half a
    second to be scheduled, on each side of the link (0.625 s here). The message reaches its
    receiver that late, its acknowledgement waits ACK_DELAY from the look that sees it owed (up to
    ACK_EVERY later) to the look that sends it (up to ACK_EVERY more), and reaches the sender that
    late again: still within the sender's first wait, so nothing is sent again. (With the former
    acknowledgement every 0.25 s and RETRY 1 s the link went again at 1 s: this fails.)"""
    delay = 0.625  # (exact in binary: the times below compare exactly)
    out, acks = LinkOutbox(), LinkAcks()
    out.keep("REQUEST.node-2", _entry("node-2", 2), now=0.0)  # this message, handled at ``delay``
    acks.looked = delay - 0.001  # the last look just before: the next one is ACK_EVERY later
    handled, now = {"node-1": 2}, delay
    while not (got := acks.due(handled, now)):
        now = acks.next_due(handled, now)
        assert now is not None and now < 10.0
    assert got == {"node-1": 2} and now <= delay + ACK_DELAY + 2 * ACK_EVERY
    arrives = now + delay
    assert out.overdue(arrives) == [], "sent again though its acknowledgement was on its way"
    out.ack("node-2", 2, now=arrives)
    assert not out.kept["node-2"] and out.retransmitted == 0


def test_a_copy_of_a_handled_message_has_its_link_acknowledged_again():
    """A receiver consuming without acks loses what a lost connection held, its ``link`` messages
    too: the sender then sends the link again, and the copy it gets makes the receiver acknowledge
    the link again (else the sender would keep sending it until the run ends)."""
    acks = LinkAcks()
    assert acks.carried(["node-1"], {"node-1": 3}) == {"node-1": 3}
    assert acks.carried(["node-1"], {"node-1": 3}) == {}, "acknowledged once"
    acks.again("node-1")  # a copy of message 1..3 came: that acknowledgement was lost
    assert acks.carried(["node-1"], {"node-1": 3}) == {"node-1": 3}
    assert acks.due({"node-1": 3}, now=10.0) == {}, "carried already"
    acks.again("node-1")
    assert acks.due({"node-1": 3}, now=10.0 + ACK_EVERY) == {"node-1": 3}, "at the next look, at once"


def test_one_link_message_acknowledges_every_due_link_and_each_reads_its_own():
    sent: list[tuple[str, dict, dict | None]] = []

    class Bus:
        def send(self, key, body, headers=None):
            sent.append((key, body, headers))

    links = Retransmission("r", "node-1")
    links.tick(Bus(), {"node-2": 3, "node-3": 1, "node-4": 0}, now=0.0)
    assert not sent, "owed, not yet due"
    links.tick(Bus(), {"node-2": 3, "node-3": 1, "node-4": 0}, now=ACK_DELAY)
    assert len(sent) == 1, "one publish for every due link"
    key, body, headers = sent[0]
    assert [key, *headers["BCC"]] == ["control.node-2", "control.node-3"]
    roster = {"node-1": 1, "node-2": 2, "node-3": 3, "node-4": 4}
    assert parse_link(body, "r", roster, "node-2") == ("node-1", 3)
    assert parse_link(body, "r", roster, "node-3") == ("node-1", 1)
    with pytest.raises(ValueError, match="without an acknowledgement for node-4"):
        parse_link(body, "r", roster, "node-4")
    links.tick(Bus(), {"node-2": 4}, now=ACK_DELAY + 0.1)  # too soon after the last look
    links.tick(Bus(), {"node-2": 4}, now=ACK_DELAY + ACK_EVERY)  # owed from now on
    assert len(sent) == 1, "not again before ACK_DELAY"
    links.tick(Bus(), {"node-2": 4}, now=2 * ACK_DELAY + ACK_EVERY)
    assert sent[1][0] == "control.node-2" and sent[1][2] is None


def test_a_step_frame_carries_acknowledgements_to_its_addressees_only_in_transient_delivery():
    roster = {"node-1": 1, "node-2": 2, "node-3": 3}
    sends = [_entry("node-2", 1), _entry("node-3", 4)]
    plain = compact(frame("r", "node-1", sends))
    assert b"acks" not in plain and compact(frame("r", "node-1", sends, {})) == plain  # persistent: as before
    body = compact(frame("r", "node-1", sends, {"node-2": 5, "node-3": True}))
    got: dict = {}
    assert parse_frame(body, "r", "node-2", roster, got)[1] == parse_frame(plain, "r", "node-2", roster)[1]
    assert got == {"node-1": 5}
    got = {}
    parse_frame(body, "r", "node-3", roster, got)
    assert got == {}, "a malformed acknowledgement is left out"
    one = compact(frame("r", "node-1", sends[:1], {"node-2": 3}))
    got = {}
    assert parse_frame(one, "r", "node-2", roster, got)[1][0]["seq"] == 1 and got == {"node-1": 3}


def test_slow_acknowledgements_lengthen_the_wait_and_a_resent_link_gives_no_sample():
    out = LinkOutbox()
    assert out.wait == RETRY
    took = 0.6 * RETRY  # each message acknowledged that long after it was sent: under RETRY
    for i in range(1, 30):
        out.keep("REQUEST.node-2", _entry("node-2", i), now=10.0 * i)
        assert out.overdue(10.0 * i + took) == []
        out.ack("node-2", i, now=10.0 * i + took)
    assert out.wait == pytest.approx(3 * took, rel=0.01), "three times the smoothed acknowledgement time"
    out.keep("REQUEST.node-2", _entry("node-2", 30), now=400.0)
    assert out.overdue(400.0 + RETRY) == [], "a slow link is not sent again after RETRY"
    assert [d for d, _ in out.overdue(400.0 + out.wait)] == ["node-2"]
    before = out.smoothed
    out.ack("node-2", 30, now=500.0)  # after a retransmission: which copy was acknowledged is unknown
    assert out.smoothed == before
    for i in range(31, 200):  # fast again: the wait comes back down, never under RETRY
        out.keep("REQUEST.node-2", _entry("node-2", i), now=1000.0 + i)
        out.ack("node-2", i, now=1000.0 + i + 0.01)
    assert out.wait == RETRY


def test_when_every_acknowledgement_is_late_the_backed_off_wait_stays_and_copies_stay_few():
    """On a host so loaded that every acknowledgement takes 20 s (a 50-bee run profiled at load
    53), each link's messages one after the other: the wait backs off and stays backed off (Karn),
    so copies stop after the first few. (Before, a link acknowledged after a copy gave no sample
    and started its next message at RETRY again, doubling up to 8 s: each message went three more
    times, 30 copies of 10 messages: this fails.)"""
    out, took = LinkOutbox(), 20.0
    for i in range(1, 11):
        start = 100.0 * i
        out.keep("REQUEST.node-2", _entry("node-2", i), now=start)
        now = start
        while (due := out.next_due()) is not None and due < start + took:
            now = due
            out.overdue(now)
        out.ack("node-2", i, now=start + took)
    assert out.retransmitted <= 3, out.retransmitted
    assert out.wait > took, "the wait learnt from the slow acknowledgements"
    out.keep("REQUEST.node-2", _entry("node-2", 11), now=2000.0)
    assert [d for d, _ in out.overdue(2000.0 + out.wait)] == ["node-2"], "still sent again, later"


def test_a_bad_link_message_is_refused_with_its_reason():
    roster = {"node-1": 1, "node-2": 2}
    good = {"kind": "link", "run": "r", "from": "node-2", "acks": {"node-1": 3}}
    assert parse_link(good, "r", roster, "node-1") == ("node-2", 3)
    for bad, reason in (
        ({**good, "run": "other"}, "run"),
        ({**good, "from": "node-9"}, "not a member"),
        ({**good, "acks": {"node-1": -1}}, "bad acknowledgement"),
        ({**good, "acks": {"node-1": True}}, "bad acknowledgement"),
        ({**good, "acks": [3]}, "without an acknowledgement for node-1"),
        ({"kind": "link", "run": "r", "from": "node-2", "received": 3}, "without an acknowledgement"),
    ):
        with pytest.raises(ValueError, match=reason):
            parse_link(bad, "r", roster, "node-1")


def test_transient_delivery_decides_classic_queues_and_refuses_quorum_and_clusters():
    cluster, one = "amqp://a:5672,amqp://b:5672", "amqp://a:5672"
    assert queue_kind(cluster, "auto", "persistent") == "quorum"
    assert queue_kind(one, "auto", "transient") == "classic"
    with pytest.raises(ValueError, match="QUEUE_TYPE=quorum needs DELIVERY=persistent"):
        queue_kind(one, "quorum", "transient")
    with pytest.raises(ValueError, match="DELIVERY=transient runs on one broker node"):
        queue_kind(cluster, "auto", "transient")
    with pytest.raises(ValueError, match="DELIVERY must be one of"):
        queue_kind(cluster, "auto", "lazy")
