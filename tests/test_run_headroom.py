"""``mutexlab run`` asks the broker how many connections it can hold (transport/headroom.py): a
run that needs more than remain is refused (exit 2) before anything starts. A fake management API
answers here (never the machine's own broker, which is neither stopped nor reconfigured); the
AMQP URL points at a closed port, so a run that got past the check says the broker is unusable
(exit 3) — proof that the refusal came first."""

from __future__ import annotations

import base64
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mutexlab.transport import headroom


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again once this returns: nothing listens there


class FakeManagement:
    """An HTTP server answering ``GET /api/nodes`` with ``nodes``; remembers the credentials."""

    def __init__(self, nodes) -> None:
        self.nodes = nodes
        self.seen: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                auth = self.headers.get("Authorization", "")
                fake.seen.append(base64.b64decode(auth.removeprefix("Basic ")).decode() if auth else "")
                body = json.dumps(fake.nodes).encode() if self.path == "/api/nodes" else b"{}"
                self.send_response(200 if self.path == "/api/nodes" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeManagement:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def node(name="rabbit@fake", fd=(1024, 1020), sockets=None, running=True) -> dict:
    out = {"name": name, "running": running, "fd_total": fd[0], "fd_used": fd[1]}
    if sockets is not None:
        out["sockets_total"], out["sockets_used"] = sockets
    return out


def run_argv(url: str, *extra: str) -> list[str]:
    amqp = f"amqp://alice:s%40cret@127.0.0.1:{closed_port()}/%2F"
    return [
        "run",
        "mutex",
        "-a",
        "ricart-agrawala",
        "-N",
        "5",
        "--amqp-url",
        amqp,
        "--management-url",
        url,
        *extra,
    ]


def test_a_run_needing_more_connections_than_the_broker_has_left_is_refused_first(cli):
    with FakeManagement([node(fd=(1024, 1020))]) as api:
        done = cli(*run_argv(api.url))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "this run needs 7 broker connections" in done.stderr, done.stderr
    assert "rabbit@fake has room for 4 more (fd 1,020 of 1,024 used" in done.stderr
    assert api.seen == ["alice:s@cret"]  # the run's own credentials
    assert "cannot use RabbitMQ" not in done.stderr  # the refusal comes first, the broker unnamed


def test_the_least_room_of_a_running_node_decides_sockets_included(cli):
    nodes = [node("rabbit@a", fd=(1024, 10), sockets=(829, 825)), node("rabbit@b", fd=(5, 5), running=False)]
    with FakeManagement(nodes) as api:
        done = cli(*run_argv(api.url))
    assert done.returncode == 2 and "rabbit@a has room for 4 more (sockets 825 of 829 used" in done.stderr


def test_a_run_that_fits_goes_on_to_the_broker(cli):
    with FakeManagement([node(fd=(1024, 100), sockets=(829, 100))]) as api:
        done = cli(*run_argv(api.url))
    assert api.seen, "the API was not asked"
    assert done.returncode == 3 and "cannot use RabbitMQ" in done.stderr, done.stderr  # the closed port


def test_without_an_answering_api_the_process_cap_alone_applies(cli):
    silent = f"http://127.0.0.1:{closed_port()}"
    done = cli(*run_argv(silent))
    assert done.returncode == 3 and "cannot use RabbitMQ" in done.stderr, done.stderr
    done = cli(*run_argv(silent, "-N", "101"))
    assert done.returncode == 2 and "at most 100 (--max-processes" in done.stderr, done.stderr
    with FakeManagement({"error": "not_authorised"}) as api:  # not the nodes' list: nothing known
        done = cli(*run_argv(api.url))
    assert done.returncode == 3, done.stderr


def test_a_management_url_that_is_not_http_is_bad_input(cli):
    done = cli(*run_argv("ftp://127.0.0.1:15672"))
    assert done.returncode == 2 and "must be http://HOST[:PORT]" in done.stderr, done.stderr


@pytest.mark.parametrize(
    "nodes, free",
    [
        ([], None),
        ([{"name": "x"}], None),  # no figures
        ([node(fd=(10, 12))], 0),  # over its limit: no room, never negative
        ([node(fd=(100, 10), sockets=(50, 45))], 5),
        ([node("a", fd=(100, 90)), node("b", fd=(100, 50))], 10),
        ([node(fd=(True, 0))], None),  # not a number
    ],
)
def test_room_of(nodes, free):
    room = headroom.room_of(nodes)
    assert (room.free if room is not None else None) == free


def test_where_the_api_is_asked_and_as_whom(monkeypatch):
    monkeypatch.delenv(headroom.MANAGEMENT_ENV, raising=False)
    assert headroom.management_url("amqp://u:p@broker.example:5673/%2F") == "http://broker.example:15672"
    assert headroom.management_url("amqp://[::1]:5672/%2F,amqp://b:5672/%2F") == "http://[::1]:15672"
    monkeypatch.setenv(headroom.MANAGEMENT_ENV, "https://mgmt.example/")
    assert headroom.management_url("amqp://broker:5672/%2F") == "https://mgmt.example"
    assert headroom.credentials("amqp://broker/%2F") == ("guest", "guest")
    assert headroom.credentials("amqp://a%3Ab:c%2Fd@broker/%2F") == ("a:b", "c/d")
