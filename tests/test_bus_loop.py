"""The bus's own I/O loop corks a TCP socket while its writer runs (``bus/loop.py``): the frames
pika writes in one go leave together, and the cork is lifted when the writer returns or removes
its own handler."""

from __future__ import annotations

import os
import socket
import sys

import pytest

from mutexlab.bus import loop as bus_loop

# TCP_CORK is Linux's: elsewhere the loop corks nothing and there is nothing to test; on Linux
# the option must be there (a loop that lost it would cork nothing, silently)
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="TCP_CORK is Linux's")


def test_on_linux_the_loop_has_the_cork():
    assert bus_loop.TCP_CORK == socket.TCP_CORK


def _pair() -> tuple[socket.socket, socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    accepted, _ = server.accept()
    server.close()
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as pika sets it
    return client, accepted


def _corked(sock: socket.socket) -> int:
    return sock.getsockopt(socket.IPPROTO_TCP, bus_loop.TCP_CORK)


def _write_once(frames: list[bytes], remove_itself: bool = False) -> tuple[list[int], int, bytes]:
    """One turn of a loop whose writer sends ``frames``: the cork seen while it wrote, after the
    turn, and the bytes the peer got."""
    loop = bus_loop.Loop()
    client, peer = _pair()
    seen: list[int] = []

    def writer(fd: int, events: int) -> None:
        if events & loop.WRITE and not seen:
            seen.append(_corked(client))
            for frame in frames:
                client.send(frame)
            if remove_itself:
                loop.remove_handler(fd)
            else:
                loop.update_handler(fd, loop.READ)

    try:
        loop.add_handler(client.fileno(), writer, loop.READ | loop.WRITE)
        loop.once(1.0)
        after = _corked(client)
        peer.settimeout(2.0)
        got = b""
        while len(got) < sum(map(len, frames)):
            got += peer.recv(4096)
        if not remove_itself:
            loop.remove_handler(client.fileno())
        return seen, after, got
    finally:
        loop.close()
        client.close()
        peer.close()


FRAMES = [bytes([i]) * (7 + i) for i in range(3)]


def test_the_socket_is_corked_while_its_writer_runs_and_lifted_after():
    seen, after, got = _write_once(FRAMES)
    assert seen == [1] and after == 0 and got == b"".join(FRAMES)


def test_a_writer_that_removes_its_own_handler_leaves_no_cork():
    seen, after, got = _write_once(FRAMES, remove_itself=True)
    assert seen == [1] and after == 0 and got == b"".join(FRAMES)


def test_a_cork_never_lifted_is_caught(monkeypatch):
    """The broken variant: the loop sets the cork and never lifts it."""
    real = socket.socket.setsockopt

    def never_lifted(self, level, option, value, *rest):
        if option == bus_loop.TCP_CORK and value == 0:
            return None
        return real(self, level, option, value, *rest)

    monkeypatch.setattr(bus_loop.socket.socket, "setsockopt", never_lifted)
    seen, after, _ = _write_once(FRAMES)
    assert seen == [1] and after == 1


def test_a_loop_without_the_cork_is_caught(monkeypatch):
    """The other broken variant: no cork at all (the frames leave one segment each)."""
    monkeypatch.setattr(bus_loop, "_cork_handle", lambda fd: None)
    seen, after, _ = _write_once(FRAMES)
    assert seen == [0] and after == 0


def test_only_tcp_sockets_are_corked_and_no_descriptor_is_left():
    a, b = socket.socketpair()
    r, w = os.pipe()
    try:
        before = len(os.listdir("/proc/self/fd"))
        assert bus_loop._cork_handle(a.fileno()) is None  # noqa: SLF001 - the rule under test
        assert bus_loop._cork_handle(r) is None  # noqa: SLF001
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        for fd in (r, w):
            os.close(fd)
        a.close()
        b.close()
