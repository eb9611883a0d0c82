"""The AMQP client (bus/amqp.py, bus/loop.py): pika's SelectConnection driven through
public interfaces only — the loop without a broker, the channel's calls and the asynchronous
confirms on one — and that no module uses a private attribute of pika; the cluster URL settings."""

from __future__ import annotations

import ast
import functools
import re
import socket
import threading
import time
import tomllib
import uuid
from pathlib import Path

import pika
import pytest

from mutexlab.bus import amqp
from mutexlab.bus.amqp import Connection, TransportError, redact
from mutexlab.bus.loop import Loop
from mutexlab.bus.rabbit import Bus
from mutexlab.bus.topology import Topology
from mutexlab.setups import ConfigError
from mutexlab.transport.settings import ParticipantSettings, check_url, load, node_urls, queue_kind
from mutexlab.transport.supervisor import make_plan

ROOT = Path(__file__).resolve().parents[1]


def test_pyproject_pins_the_pika_range_the_module_was_written_for():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = [d for d in deps if re.match(r"pika\b", d)]
    assert pinned == ["pika" + amqp.PIKA_VERSIONS]
    major, minor = (int(x) for x in pika.__version__.split(".")[:2])
    assert (1, 3) <= (major, minor) < (2, 0), f"installed pika {pika.__version__} is outside the pin"


# -- no private attribute of pika, anywhere ---------------------------------------------------------------
def _private_names(paths: list[Path]) -> set[str]:
    """The ``_names`` (not ``__dunder__``) the code in ``paths`` defines: attributes it assigns on
    ``self``, functions, classes, variables."""
    names: set[str] = set()
    for path in paths:
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    names.add(node.attr)  # its own attribute (not one set on another's object)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


@functools.cache
def _parsed(path: Path) -> ast.Module:
    """Each file parsed once: both tests below read pika's files and this project's."""
    return ast.parse(path.read_text())


@functools.cache
def _pika_private_names() -> frozenset[str]:
    """What pika keeps private, less the names this project's own code defines as well (its own
    ``self._x`` are not pika's)."""
    return frozenset(_private_names(sorted(Path(pika.__file__).parent.rglob("*.py"))) - _private_names(CODE))


# pika's modules for its own adapters: their interfaces are "expected by BaseConnection", and pika
# says of its I/O services (``nbio_interface.AbstractIOServices``) "This is not a public API".
INTERNAL_MODULES = ("pika.adapters.utils",)


@functools.cache
def _pika_non_public_classes() -> frozenset[str]:
    """The classes pika's own docstrings call "not a public API"."""
    found = set()
    for path in sorted(Path(pika.__file__).parent.rglob("*.py")):
        for node in ast.walk(_parsed(path)):
            if (
                isinstance(node, ast.ClassDef)
                and "not a public api" in (ast.get_docstring(node) or "").lower()
            ):
                found.add(node.name)
    return frozenset(found)


def _uses_of(source: str | ast.Module, private: frozenset[str]) -> list[str]:
    """``x._name`` for a pika-private ``_name`` (not on ``self``), ``from pika... import _name``, an
    import of one of pika's internal modules (``INTERNAL_MODULES``) and any use of a class pika calls
    not public."""
    found = []
    hidden = _pika_non_public_classes()
    for node in ast.walk(ast.parse(source) if isinstance(source, str) else source):
        own = (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        )
        if isinstance(node, ast.Attribute) and node.attr in private and not own:
            found.append(f"line {node.lineno}: .{node.attr}")
        if (
            isinstance(node, ast.Attribute | ast.Name)
            and (getattr(node, "attr", None) or getattr(node, "id", None)) in hidden
        ):
            found.append(f"line {node.lineno}: not public: {getattr(node, 'attr', None) or node.id}")
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pika"):
            found += [
                f"line {node.lineno}: import {a.name}"
                for a in node.names
                if a.name.startswith("_") or a.name in hidden
            ]
            modules = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        else:
            continue
        found += [
            f"line {node.lineno}: internal module {m}" for m in modules if m.startswith(INTERNAL_MODULES)
        ][:1]
    return found


CODE = [
    p
    for top in ("shared", "services", "bench", "tests", "scripts")
    for p in sorted((ROOT / top).rglob("*.py"))
    if "mutexlab_broken" not in p.parts
]


def test_no_module_uses_a_private_attribute_of_pika():
    private = _pika_private_names()
    uses = {str(p.relative_to(ROOT)): _uses_of(_parsed(p), private) for p in CODE}
    assert not {p: u for p, u in uses.items() if u}


def test_the_check_catches_what_an_earlier_transport_did():
    private = _pika_private_names()
    broken = """
import pika
from pika.adapters.utils.io_services_utils import _AsyncPlaintextTransport
from pika.adapters.utils.selector_ioloop_adapter import AbstractSelectorIOLoop
from pika.adapters.utils import connection_workflow
import pika.adapters.utils.nbio_interface
class Services(pika.adapters.utils.nbio_interface.AbstractIOServices): ...
def publish(channel, conn):
    channel._impl.basic_publish("x", "k", b"")
    conn._request_channel_dispatch(-1)
    conn._impl._transport._tx_buffers.clear()
"""
    found = " ".join(_uses_of(broken, private))
    for name in (
        "_AsyncPlaintextTransport",
        "._impl",
        "._request_channel_dispatch",
        "._transport",
        "._tx_buffers",
        "line 4: internal module pika.adapters.utils.selector_ioloop_adapter",
        "line 5: internal module pika.adapters.utils",
        "line 6: internal module pika.adapters.utils.nbio_interface",
        "line 7: not public: AbstractIOServices",
    ):
        assert name in found, (name, found)
    assert "AbstractIOServices" in _pika_non_public_classes(), "pika still calls its I/O services not public"


# -- the loop, without a broker --------------------------------------------------------------------------
LOOP_METHODS = ("add_handler", "update_handler", "remove_handler", "call_later", "remove_timeout")
LOOP_METHODS += ("add_callback", "start", "stop", "close", "READ", "WRITE", "ERROR")


def test_the_loop_has_what_pikas_public_ioloop_has_that_the_connection_calls():
    """``SelectConnection(custom_ioloop=...)`` takes "a custom I/O Loop object" of the kind of
    ``pika.adapters.IOLoop``: ours has each of its methods the connection calls, and pika's still does."""
    for name in LOOP_METHODS:
        assert hasattr(pika.adapters.IOLoop, name), f"pika's IOLoop no longer has {name}"
        assert hasattr(Loop, name), f"our Loop lacks {name}"
    assert Loop.READ | Loop.WRITE | Loop.ERROR == Loop.READ + Loop.WRITE + Loop.ERROR, "three distinct bits"


def test_timers_fire_in_order_and_a_removed_one_never():
    loop = Loop()
    fired: list[str] = []
    try:
        loop.call_later(0.02, lambda: fired.append("late"))
        removed = loop.call_later(0.01, lambda: fired.append("removed"))
        loop.call_later(0.0, lambda: fired.append("now"))
        loop.remove_timeout(removed)
        loop.turn(0.05)
    finally:
        loop.close()
    assert fired == ["now", "late"]


def test_a_wake_ends_the_turn_and_a_turn_without_one_lasts_its_time():
    loop = Loop()
    try:
        loop.call_later(0.01, loop.wake)
        started = time.monotonic()
        loop.turn(5.0)
        assert time.monotonic() - started < 1.0, "woken after 0.01 s"
        started = time.monotonic()
        loop.turn(0.05)
        assert time.monotonic() - started >= 0.05, "nothing woke it"
    finally:
        loop.close()


def test_a_callback_from_another_thread_interrupts_a_wait():
    loop = Loop()
    ran: list[str] = []
    try:
        thread = threading.Timer(
            0.02, loop.add_callback, [lambda: (ran.append(threading.current_thread().name), loop.wake())]
        )
        thread.start()
        started = time.monotonic()
        loop.turn(5.0)
        thread.join()
    finally:
        loop.close()
    assert ran == [threading.current_thread().name], "run in the loop's thread"
    assert time.monotonic() - started < 1.0


# -- the channel on a broker -----------------------------------------------------------------------------
@pytest.mark.broker
def test_calls_wait_for_replies_and_nowait_ones_are_done_before_the_next_reply(amqp_url):
    conn = Connection(pika.URLParameters(amqp_url))
    queue = "mutexlab-test." + uuid.uuid4().hex[:8]
    try:
        channel = conn.channel()
        channel.nowait.queue_declare(queue, auto_delete=False)  # no reply asked for
        assert channel.queue_declare(queue, passive=True).method.queue == queue, "done before the next reply"
        channel.basic_publish("", queue, b"one")
        deadline = time.monotonic() + 5
        count = channel.queue_declare(queue, passive=True).method.message_count
        while count < 1 and time.monotonic() < deadline:  # the broker enqueues asynchronously
            count = channel.queue_declare(queue, passive=True).method.message_count
        assert count == 1
        with pytest.raises(pika.exceptions.ChannelClosedByBroker) as refused:
            channel.queue_declare(queue, durable=True)  # other arguments than the queue has
        assert refused.value.reply_code == 406 and channel.is_closed
        other = conn.channel()
        other.queue_delete(queue)
        with pytest.raises(pika.exceptions.ChannelClosedByBroker):
            other.queue_declare(queue, passive=True)  # gone
        assert conn.is_open, "a channel's refusal leaves the connection open"
    finally:
        conn.close()


@pytest.mark.broker
def test_publishes_do_not_wait_and_confirms_come_to_the_callback(amqp_url):
    conn = Connection(pika.URLParameters(amqp_url))
    try:
        channel = conn.channel()
        confirmed: list[tuple[int, bool]] = []
        channel.confirm_delivery(
            lambda frame: confirmed.append((frame.method.delivery_tag, frame.method.multiple)),
            lambda *a: None,
        )
        queue = channel.queue_declare("", exclusive=True).method.queue
        for n in range(50):
            channel.basic_publish("", queue, str(n).encode())
        assert confirmed == [], "nothing was confirmed while nothing ran the I/O"
        deadline = time.monotonic() + 10
        while (not confirmed or confirmed[-1][0] < 50) and time.monotonic() < deadline:
            conn.process_data_events(0.1)
        assert confirmed and confirmed[-1][0] == 50, confirmed
        assert channel.queue_declare(queue, passive=True).method.message_count == 50
    finally:
        conn.close()


@pytest.mark.broker
def test_a_lost_connection_is_raised_by_the_next_io(amqp_url):
    conn = Connection(pika.URLParameters(amqp_url))
    conn.pika.close()  # as if from elsewhere: the connection ends under the caller
    with pytest.raises(pika.exceptions.ConnectionClosedByClient):
        for _ in range(100):
            conn.process_data_events(0.05)
    assert not conn.is_open
    conn.close()


A, B, C = (f"amqp://u:p@host-{n}:5672/%2F" for n in "abc")


def test_amqp_url_names_one_node_or_a_cluster():
    assert node_urls(A) == [A]
    assert node_urls(f"{A}, {B} ,{C}") == [A, B, C]
    assert check_url(f"{A}, {B}") == f"{A},{B}"
    assert redact(f"{A},{B}") == "amqp://host-a:5672,amqp://host-b:5672"


@pytest.mark.parametrize(
    "value, problem",
    [
        (f"{A},,{B}", "empty entry between commas"),
        (f"{A},http://x", "must start with amqp://"),
        (f"{A},{A}", "names a node twice"),
        (" , ", "is empty"),
    ],
)
def test_a_bad_node_list_is_refused_naming_the_problem(value, problem):
    with pytest.raises(ConfigError, match=f"AMQP_URL.*{problem}"):
        load(ParticipantSettings, amqp_url=value, run_id="r")
    with pytest.raises(ConfigError, match=problem):
        make_plan("bees", 2, {}, amqp_url=value)


def test_queue_type_auto_is_quorum_for_several_nodes_and_can_be_forced():
    assert queue_kind(A) == "classic" and queue_kind(f"{A},{B}") == "quorum"
    assert queue_kind(A, "quorum") == "quorum" and queue_kind(f"{A},{B}", "classic") == "classic"
    settings = load(ParticipantSettings, amqp_url=f"{A},{B},{C}", run_id="r")
    assert settings.queue_kind == "quorum"
    with pytest.raises(ConfigError, match="QUEUE_TYPE"):
        load(ParticipantSettings, amqp_url=A, run_id="r", queue_type="mirrored")


def test_quorum_topology_declares_quorum_queues_and_a_bus_starts_where_told():
    class Recorder:
        def __init__(self) -> None:
            self.queues: dict[str, dict | None] = {}
            self.nowait = self  # the declarations sent without waiting go out here too

        def exchange_declare(self, *a, **k) -> None:
            pass

        def queue_bind(self, *a, **k) -> None:
            pass

        def queue_declare(self, queue, durable=False, arguments=None, **k) -> None:
            self.queues[queue] = arguments

    for queue_type, expected in (("quorum", "quorum"), ("classic", None)):
        channel = Recorder()
        topology = Topology("r", queue_type)
        topology.declare_base(channel)
        topology.declare_participant(channel, "node-1", ["REQUEST"])
        kinds = {q: (args or {}).get("x-queue-type") for q, args in channel.queues.items()}
        assert set(kinds.values()) == {expected}, kinds
    bus = Bus(f"{A},{B},{C}", Topology("r", "quorum"), first_node=1)
    assert bus.nodes == [A, B, C] and bus._node == 1  # noqa: SLF001 - which node it starts on


@pytest.mark.broker
def test_a_failed_open_raises_the_nodes_own_error_from_pikas_public_wrappers(amqp_url):
    """pika reports a failed open wrapped in its connection workflow's failure; the connection
    raises what the node said: refused credentials as themselves (the bus gives up at once), a
    closed port as a lost connection (the bus tries the next node)."""
    params = pika.URLParameters(amqp_url)
    with pytest.raises(amqp.REFUSED_CREDENTIALS):
        Connection(pika.URLParameters(f"amqp://nobody:wrong@{params.host}:{params.port}/%2F"))
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(pika.exceptions.AMQPConnectionError) as lost:
        Connection(pika.URLParameters(f"amqp://127.0.0.1:{port}/%2F"))
    assert amqp.cause(lost.value).startswith("ConnectionRefusedError"), lost.value
    bus = Bus(f"amqp://nobody:wrong@{params.host}:{params.port}/%2F", Topology("t-creds"), connect_timeout=30)
    started = time.monotonic()
    with pytest.raises(TransportError, match="refused the credentials"):
        bus.connect()
    assert time.monotonic() - started < 10, "refused credentials are not tried again"
