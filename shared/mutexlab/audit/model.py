"""What an audit reports."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Violation:
    rule: str                      # short name: capacity, eggs-per-bee, contract-twice ...
    message: str                   # one readable sentence naming processes and resources
    events: list[dict] = field(default_factory=list)  # the events involved

    def describe(self) -> str:
        where = ", ".join(f"line {e['_line']} ({e['pid']} {e['event']})" for e in self.events if "_line" in e)
        return f"[{self.rule}] {self.message}" + (f" — {where}" if where else "")
