"""Shared fixtures. ``amqp_url`` finds a RabbitMQ broker for the tests marked ``broker``:

1. ``AMQP_URL`` from the environment — used as is; if it is set but unreachable, fail loudly;
2. a local broker on 127.0.0.1:5672 (guest/guest);
3. testcontainers' ``RabbitMqContainer`` when a Docker engine answers;
4. otherwise skip with the reason — except under CI (``CI`` set), where no broker is a failure.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import quote, urlparse

import pytest

LOCAL_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"


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


@pytest.fixture(scope="session")
def amqp_url():
    configured = os.environ.get("AMQP_URL")
    if configured:
        if not _reachable(configured):
            pytest.fail(f"AMQP_URL is set to {configured!r} but no broker answers there")
        yield configured
        return
    if _reachable(LOCAL_URL):
        yield LOCAL_URL
        return
    if _docker_available():
        try:
            from testcontainers.community.rabbitmq import RabbitMqContainer
        except ImportError:  # testcontainers before the "community" split
            from testcontainers.rabbitmq import RabbitMqContainer

        with RabbitMqContainer("rabbitmq:3-management", username="mutexlab", password="mutexlab-tests") as container:
            yield container_url(container)
        return
    reason = ("no RabbitMQ broker: AMQP_URL is unset, nothing listens on 127.0.0.1:5672, "
              "and no Docker engine is available for testcontainers")
    if os.environ.get("CI"):
        pytest.fail(reason + " (under CI a missing broker is a failure)")
    pytest.skip(reason)
