"""A process's ``__slots__`` are its state for the two guards that read its attributes: a reduction's
declared parts (``reduction.part_differs``) and the shared-state check (``setups.shared_state``).
Reading ``__dict__`` alone, a slot went unchecked by both."""

from __future__ import annotations

from types import SimpleNamespace

from mutexlab.protocol import Protocol
from mutexlab.reduction import declare_parts, part_differs
from mutexlab.setups import shared_state


class Slotted(Protocol):
    __slots__ = ("queue",)

    def __init__(self, pid: int, queue: list) -> None:
        self.pid, self.state = pid, "IDLE"
        self.queue = queue


def test_a_slot_not_among_the_declared_parts_is_named():
    parts = declare_parts(pid=int, state=str)
    assert part_differs(parts, Slotted(1, [])) == "attribute 'queue' is not among the declared parts"
    assert part_differs(declare_parts(pid=int, state=str, queue=list), Slotted(1, [])) is None


def test_two_processes_sharing_one_list_in_a_slot_are_refused():
    shared: list = []
    setup = SimpleNamespace(protocols={1: Slotted(1, shared), 2: Slotted(2, shared)}, names={})
    why = shared_state(setup)  # type: ignore[arg-type]
    assert why is not None and "1.queue and 2.queue are one list" in why, why
    apart = SimpleNamespace(protocols={1: Slotted(1, []), 2: Slotted(2, [])}, names={})
    assert shared_state(apart) is None  # type: ignore[arg-type]
