"""Shared fixtures. ``amqp_url`` finds a RabbitMQ broker for the tests marked ``broker``:

1. ``AMQP_URL`` from the environment — used as is; if it is set but unreachable, fail loudly;
2. a local broker on 127.0.0.1:5672 (guest/guest);
3. testcontainers' ``RabbitMqContainer`` (image ``rabbitmq:3-management``) when a Docker engine answers;
4. otherwise skip with the reason — except under CI (``CI`` set), where no broker is a failure.

``MUTEXLAB_TEST_BROKER=container`` forces 3: ``AMQP_URL`` and the local broker are ignored, and no
Docker engine is a failure, not a skip (``.ci/run`` runs a broker subset this way). testcontainers'
reaper (Ryuk) needs its own image from Docker Hub; unless ``TESTCONTAINERS_RYUK_DISABLED`` is set,
it is set to ``true`` here (and said so), and the fixture stops the container itself at the end.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import quote, urlparse

import pytest

LOCAL_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"
BROKER_IMAGE = "rabbitmq:3-management"
SWITCH = "MUTEXLAB_TEST_BROKER"
# Where the session's broker came from: "AMQP_URL", "local" or "testcontainers" (with the container).
BROKER: dict = {}


def _reachable(url: str, timeout: float = 2.0) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 5672), timeout=timeout):
            return True
    except OSError:
        return False


def container_url(container) -> str:
    """The AMQP URL of a started RabbitMqContainer (host and port as Docker mapped them)."""
    params = container.get_connection_params()
    vhost = quote(container.vhost, safe="")
    return f"amqp://{quote(container.username, safe='')}:{quote(container.password, safe='')}@{params.host}:{params.port}/{vhost}"


def _docker_available() -> bool:
    try:
        import docker  # testcontainers depends on it

        docker.from_env().ping()
        return True
    except Exception:  # noqa: BLE001 - any failure means: no engine to use
        return False


def _say(config, text: str) -> None:
    """A line on the terminal now, even under -q and output capture."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(text)


def _container(config):
    """A started RabbitMqContainer (a context manager), the reaper handled."""
    if not os.environ.get("TESTCONTAINERS_RYUK_DISABLED"):
        # Before testcontainers reads its configuration: the reaper's image would be pulled from Docker Hub.
        os.environ["TESTCONTAINERS_RYUK_DISABLED"] = "true"
        _say(
            config,
            "conftest: TESTCONTAINERS_RYUK_DISABLED=true (no reaper container; "
            "the amqp_url fixture stops the broker container itself)",
        )
    try:
        from testcontainers.community.rabbitmq import RabbitMqContainer
    except ImportError:  # testcontainers before the "community" split
        from testcontainers.rabbitmq import RabbitMqContainer
    return RabbitMqContainer(BROKER_IMAGE, username="mutexlab", password="mutexlab-tests")


@pytest.fixture(scope="session")
def amqp_url(request):
    mode = os.environ.get(SWITCH, "auto")
    if mode not in ("auto", "container"):
        pytest.fail(f"{SWITCH}={mode!r}: use 'container' (force testcontainers) or 'auto' (the default)")
    configured = os.environ.get("AMQP_URL")
    if configured and mode == "auto":
        if not _reachable(configured):
            pytest.fail(f"AMQP_URL is set to {configured!r} but no broker answers there")
        BROKER.update(source="AMQP_URL")
        yield configured
        return
    if mode == "auto" and _reachable(LOCAL_URL):
        BROKER.update(source="local")
        yield LOCAL_URL
        return
    if _docker_available():
        with _container(request.config) as container:
            url = container_url(container)
            if not _reachable(url):
                pytest.fail(f"the broker container started, but its port is not reachable from here: {url}")
            BROKER.update(source="testcontainers", container=container)
            _say(
                request.config,
                f"conftest: broker from testcontainers ({BROKER_IMAGE}) at "
                f"{urlparse(url).hostname}:{urlparse(url).port}",
            )
            yield url
        return
    if mode == "container":
        pytest.fail(
            f"{SWITCH}=container but no Docker engine answers (docker info), so testcontainers cannot "
            "start the broker"
        )
    reason = (
        "no RabbitMQ broker: AMQP_URL is unset, nothing listens on 127.0.0.1:5672, "
        "and no Docker engine is available for testcontainers"
    )
    if os.environ.get("CI"):
        pytest.fail(reason + " (under CI a missing broker is a failure)")
    pytest.skip(reason)


@pytest.fixture
def handled_not_acked():
    """``setup(bus, topology, inbox)``: the starting point of the broker-loss tests (a restart, a
    cluster node's loss). On the participant queue ``node-2``: message 1 of the link node-1 → node-2
    published (confirmed), delivered and accepted by ``inbox`` but not acked, message 2 published
    (confirmed) behind it. Returns the first delivery."""

    def setup(bus, topology, inbox):
        import json

        queue = topology.declare_participant(bus.channel, "node-2", ["REQUEST"])
        bus.publish("REQUEST.node-2", {"seq": 1})
        bus.consume(queue)
        first: list = []
        while not first:
            first = bus.poll(1.0)
        assert inbox.accept("node-1", json.loads(first[0].body)["seq"])  # handled ...
        bus.publish("REQUEST.node-2", {"seq": 2})  # ... more queued behind it, and no ack yet
        return first[0]

    return setup
