"""The pika internals the transport relies on (transport/pika_internals.py), and the cluster URL
settings, without a broker."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pika
import pytest

from mutexlab.setups import ConfigError
from mutexlab.transport import pika_internals
from mutexlab.transport.rabbit import Bus, Topology, redact
from mutexlab.transport.settings import ParticipantSettings, check_url, load, node_urls, queue_kind
from mutexlab.transport.supervisor import make_plan

ROOT = Path(__file__).resolve().parents[1]


def test_pyproject_pins_the_pika_range_the_module_was_written_for():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = [d for d in deps if re.match(r"pika\b", d)]
    assert pinned == ["pika" + pika_internals.PIKA_VERSIONS]
    major, minor = (int(x) for x in pika.__version__.split(".")[:2])
    assert (1, 3) <= (major, minor) < (2, 0), f"installed pika {pika.__version__} is outside the pin"


def test_the_installed_pika_has_the_internals():
    pika_internals.check_pika()  # raises naming what is missing


def test_a_pika_without_them_is_refused_by_name(monkeypatch):
    from pika.adapters.utils import io_services_utils

    monkeypatch.delattr(io_services_utils, "_AsyncPlaintextTransport")
    with pytest.raises(pika_internals.PikaInternalsError, match="_AsyncPlaintextTransport.*pika>=1.3,<2"):
        pika_internals.check_pika()


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
            self._impl = self  # the declarations go out on pika's underlying channel too

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
    assert bus.nodes == [A, B, C] and bus._node == 1
