"""Where the broker is and how long a run's queues outlive their use: plain values, no client."""

from __future__ import annotations

# Seconds a run's queue outlives its last use (``QUEUE_EXPIRES``, topology.py): the monitor renews
# the leases every quarter of it, so only a run whose monitor is gone (or ended with ``--keep``) expires.
QUEUE_EXPIRES = 300.0


def node_urls(value: str) -> list[str]:
    """The broker URLs in ``value``: one URL, or a cluster's nodes separated by commas
    (docs/cluster.md). Each must start with amqp:// or amqps://; blanks around commas are dropped."""
    urls = [part.strip() for part in value.split(",")]
    if not any(urls):
        raise ValueError("AMQP_URL is empty")
    for url in urls:
        if not url:
            raise ValueError(f"AMQP_URL has an empty entry between commas: {value!r}")
        if not url.startswith(("amqp://", "amqps://")):
            raise ValueError(f"AMQP_URL must start with amqp:// or amqps://, got {url!r}")
    if len(set(urls)) != len(urls):
        raise ValueError(f"AMQP_URL names a node twice: {value!r}")
    return urls
