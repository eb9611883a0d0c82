"""How many more connections the broker can hold, asked before a run starts (``mutexlab run``).

Every process of a run (the monitor and each participant) holds its own broker connection, and
a connection is a file descriptor and a socket on the broker's node. RabbitMQ's management API
says how many each node has and uses (``GET /api/nodes``: ``fd_total``/``fd_used``, and
``sockets_total``/``sockets_used`` where the version still reports them); a run that needs more
connections than remain is refused before anything starts, instead of failing half-started when
the broker turns connections away.

Where the API is: ``--management-url`` (or ``$RABBITMQ_MANAGEMENT_URL``), else port 15672 of the
first node of the run's AMQP URL, over HTTP. Its credentials are the run's: those of the AMQP
URL, else pika's default ``guest:guest``. A cluster's nodes are all listed; the one with the least
room decides (the run's connections may all land on it). When the API does not answer (no
management plugin, another port, refused credentials, an answer that is not the nodes'), the
run's own cap stands (``--max-processes``, default 100): nothing is known against it.
"""

from __future__ import annotations

import base64
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from .settings import node_urls

MANAGEMENT_PORT = 15672
MANAGEMENT_ENV = "RABBITMQ_MANAGEMENT_URL"
TIMEOUT = 2.0  # seconds for the API's answer: a broker without it is answered at once (refused)
MAX_ANSWER = 4 << 20  # bytes of /api/nodes read at most (a cluster's nodes, with their figures)


@dataclass(frozen=True)
class Room:
    """The broker's room for connections: ``free`` more on ``node`` (the node with the least)."""

    node: str
    free: int
    why: str  # the figures it comes from, for the refusal: "fd 1,020 of 1,024 used"


def management_url(amqp_url: str, given: str | None = None) -> str:
    """The API's base URL: ``given``, else ``$RABBITMQ_MANAGEMENT_URL``, else the first node's host
    on port 15672. ValueError for one that is not http:// or https://."""
    chosen = given or os.environ.get(MANAGEMENT_ENV)
    if chosen:
        if not chosen.startswith(("http://", "https://")) or not urlsplit(chosen).hostname:
            raise ValueError(
                f"the management API's URL must be http://HOST[:PORT] or https://…, got {chosen!r}"
            )
        return chosen.rstrip("/")
    first = urlsplit(node_urls(amqp_url)[0])
    host = first.hostname or "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{MANAGEMENT_PORT}"


def credentials(amqp_url: str) -> tuple[str, str]:
    """The run's user and password: the AMQP URL's (first node), else pika's ``guest:guest``."""
    first = urlsplit(node_urls(amqp_url)[0])
    if first.username is None:
        return "guest", "guest"
    return unquote(first.username), unquote(first.password or "")


def ask(base: str, user: str, password: str, timeout: float = TIMEOUT) -> list[dict] | None:
    """``GET base/api/nodes``; None when it does not answer with a list of nodes."""
    request = urllib.request.Request(base + "/api/nodes")
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 - http(s) of our making
            body = answer.read(MAX_ANSWER + 1)
    except (OSError, ValueError, urllib.error.URLError):
        return None
    if len(body) > MAX_ANSWER:
        return None
    try:
        nodes = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return [n for n in nodes if isinstance(n, dict)] if isinstance(nodes, list) else None


def room_of(nodes: list[dict]) -> Room | None:
    """The least room among the running nodes, from their descriptor and socket figures; None
    when no node gives whole numbers for them."""
    least: Room | None = None
    for node in nodes:
        if node.get("running") is False:
            continue
        limits = []
        for kind in ("fd", "sockets"):
            total, used = node.get(f"{kind}_total"), node.get(f"{kind}_used")
            if isinstance(total, int) and isinstance(used, int) and not isinstance(total, bool):
                limits.append((max(0, total - used), f"{kind} {used:,} of {total:,} used"))
        if not limits:
            continue
        free, why = min(limits)
        if least is None or free < least.free:
            least = Room(str(node.get("name", "?")), free, why)
    return least


def broker_room(amqp_url: str, given: str | None = None) -> tuple[str, Room | None]:
    """(the API's URL, the room it reports, or None when it cannot be known)."""
    base = management_url(amqp_url, given)
    nodes = ask(base, *credentials(amqp_url))
    return base, room_of(nodes) if nodes is not None else None


def refusal(amqp_url: str, connections: int, given: str | None = None) -> str | None:
    """Why a run needing ``connections`` must not start, or None (it fits, or nothing is known)."""
    base, room = broker_room(amqp_url, given)
    if room is None or connections <= room.free:
        return None
    where = urlsplit(base)
    base = f"{where.scheme}://{where.hostname}" + (f":{where.port}" if where.port else "") + where.path
    return (
        f"this run needs {connections:,} broker connections (one per process, the monitor's among them, "
        f"and this command's own), but RabbitMQ's node {room.node} has room for {room.free:,} more "
        f"({room.why}, {base}/api/nodes): run fewer processes, or raise the broker's limits"
    )
