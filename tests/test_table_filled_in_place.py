"""A ``TABLE`` whose rows a solution fills in place after its class was made (a registry filled
by code below the class) is compiled again when the setup is built: before, every input the
rows gained was refused as if the table did not hold it (a false finding)."""

from __future__ import annotations

from enum import StrEnum

from mutexlab.machine import Table, on
from mutexlab.protocol import Protocol


class S(StrEnum):
    IDLE = "IDLE"
    BUSY = "BUSY"


def make_node() -> type[Protocol]:
    class Node(Protocol):
        TABLE = Table(S, {S.IDLE: {}, S.BUSY: {}})

        def _go(self, what):
            self.state = S.BUSY
            return []

    return Node


def test_rows_filled_after_the_class_are_compiled_when_asked_again():
    node = make_node()
    node.TABLE.rows[S.IDLE]["request"] = on("starts", "_go", to=S.BUSY)  # in place, after the class
    assert ("IDLE", "request") not in node._transitions  # noqa: SLF001 - as the class was made
    node.compile_table()  # what building a setup does (setups.missing_parts)
    assert ("IDLE", "request") in node._transitions  # noqa: SLF001
    assert "request" in node.TABLE.inputs  # the table's own list of inputs follows its rows
    assert node._transitions[S.IDLE, "request"] is node._go  # noqa: SLF001


def test_an_unchanged_table_is_not_compiled_again():
    node = make_node()
    compiled = node._transitions  # noqa: SLF001
    node.compile_table()
    assert node._transitions is compiled  # noqa: SLF001 - once per class while its rows stay the same
