"""The bus's own I/O loop corks a TCP socket while its writer runs (``bus/loop.py``): the frames
pika writes in one go leave together, and none is held back once the writer returns."""

from __future__ import annotations

import socket
import time

from mutexlab.bus import loop as bus_loop


def _pair() -> tuple[socket.socket, socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    accepted, _ = server.accept()
    server.close()
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as pika sets it
    return client, accepted


def _write_frames_once(loop: bus_loop.Loop, client: socket.socket, frames: list[bytes]) -> None:
    sent: list[bytes] = []

    def writer(_fd: int, events: int) -> None:
        if events & loop.WRITE and not sent:
            for frame in frames:
                client.send(frame)
                sent.append(frame)
            loop.update_handler(client.fileno(), loop.READ)

    loop.add_handler(client.fileno(), writer, loop.READ | loop.WRITE)
    loop.once(1.0)
    assert sent == frames


def _read_all(peer: socket.socket, size: int, within: float) -> bytes:
    peer.settimeout(within)
    got = b""
    while len(got) < size:
        got += peer.recv(size - len(got))
    return got


def test_frames_written_in_one_go_arrive_whole_and_at_once():
    loop = bus_loop.Loop()
    client, peer = _pair()
    try:
        frames = [bytes([i]) * (7 + i) for i in range(3)]
        _write_frames_once(loop, client, frames)
        began = time.monotonic()
        assert _read_all(peer, sum(map(len, frames)), within=2.0) == b"".join(frames)
        # a cork left on would hold them up to the kernel's 200 ms
        assert time.monotonic() - began < 0.15
        assert client.getsockopt(socket.IPPROTO_TCP, bus_loop.TCP_CORK) == 0
    finally:
        loop.remove_handler(client.fileno())
        loop.close()
        client.close()
        peer.close()


def test_a_cork_left_on_is_seen(monkeypatch):
    """The broken variant: the loop sets the cork and never lifts it; the frames are held back by
    the kernel, which the timing check of the test above catches."""
    loop = bus_loop.Loop()
    client, peer = _pair()
    try:
        monkeypatch.setattr(bus_loop.socket.socket, "setsockopt", _only_cork_on(bus_loop.TCP_CORK))
        _write_frames_once(loop, client, [b"x" * 9])
        began = time.monotonic()
        assert _read_all(peer, 9, within=2.0) == b"x" * 9
        assert time.monotonic() - began >= 0.15
    finally:
        monkeypatch.undo()
        loop.remove_handler(client.fileno())
        loop.close()
        client.close()
        peer.close()


def _only_cork_on(cork: int):
    real = socket.socket.setsockopt

    def setsockopt(self, level, option, value, *rest):
        if option == cork and value == 0:
            return None  # the cork is never lifted
        return real(self, level, option, value, *rest)

    return setsockopt


def test_sockets_that_are_not_tcp_are_left_alone():
    loop = bus_loop.Loop()
    a, b = socket.socketpair()
    try:
        loop.add_handler(a.fileno(), lambda _fd, _events: None, loop.READ)
        assert bus_loop._cork_handle(a.fileno()) is None  # noqa: SLF001 - the rule under test
    finally:
        loop.remove_handler(a.fileno())
        loop.close()
        a.close()
        b.close()
