"""The mayor: hands out each round's contracts and stops the round once all are completed.

``INITIAL → MAYOR_WAITING → INITIAL ... → MAYOR_DONE``; ``start`` begins round 1. The table is
``Mayor.TABLE``.
"""

from __future__ import annotations

import copy
from typing import Any

from ...clock import LamportClock
from ...machine import Table, on
from ...protocol import Effect, Note, Protocol, ProtocolError, Schedule, Send
from ...show import fmt
from .messages import MAYOR, ContractCompleted, InitContracts, MayorState, Stop

S = MayorState  # short, for the table
LATE = on("ignore (late)", "_late_completion")


class Mayor(Protocol):
    """Hands out ``plan[r-1]`` in round r and stops the round once every contract is completed.

    Invariant: STOP(r) is sent only after CONTRACT_COMPLETED(r, i) arrived for every contract i.
    """

    TABLE = Table(
        MayorState,
        {
            S.INITIAL: {
                "CONTRACT_COMPLETED": LATE,
                "request": on("next round: INIT_CONTRACTS", "_next_round", to=(S.MAYOR_WAITING,)),
            },
            S.MAYOR_WAITING: {
                "CONTRACT_COMPLETED": on(
                    "round r: mark i done; all done: STOP to all elves, then the next round after a "
                    "pause, or after the last round MAYOR_DONE; another round: error",
                    "_on_completed",
                    to=(S.INITIAL, S.MAYOR_DONE),
                ),
            },
            S.MAYOR_DONE: {"CONTRACT_COMPLETED": LATE},
        },
        never="only elves write to the mayor, and only CONTRACT_COMPLETED",
    )
    CONFIG_FIELDS = frozenset({"plan"})

    state: MayorState
    final_states = frozenset({MayorState.MAYOR_DONE})
    name = "mayor"

    def __init__(self, elves: int, plan: list[tuple[int, ...]], clock: int = 0) -> None:
        if not plan or any(not contracts for contracts in plan):
            raise ValueError("the mayor needs at least one round with at least one contract")
        self.pid = MAYOR
        self.n = elves
        self.plan = [tuple(contracts) for contracts in plan]
        self.clock = LamportClock(clock)
        self.state = MayorState.INITIAL
        self.round = 0
        self.completed: set[int] = set()

    def start(self) -> list[Effect]:
        return self._begin()

    def _begin(self) -> list[Effect]:
        self.round += 1
        self.completed = set()
        self.state = MayorState.MAYOR_WAITING
        contracts = self.plan[self.round - 1]
        msg = InitContracts(sender=self.pid, ts=self.clock.tick(), round=self.round, contracts=contracts)
        effects: list[Effect] = [Note("round", {"round": self.round, "contracts": list(contracts)})]
        return effects + [Send(j, msg) for j in range(1, self.n + 1)]

    def _next_round(self, action: str) -> list[Effect]:
        if not 1 <= self.round < len(self.plan):
            raise ProtocolError(f"mayor cannot {action!r} in state {self.state} (round {self.round})")
        return self._begin()

    def refuse_local(self, action: str) -> ProtocolError:
        return ProtocolError(f"mayor cannot {action!r} in state {self.state} (round {self.round})")

    def _late_completion(self, msg: ContractCompleted) -> list[Effect]:
        self.clock.receive(msg.ts)
        return []  # INITIAL or MAYOR_DONE: ignored, as the statement's table says

    def _on_completed(self, msg: ContractCompleted) -> list[Effect]:
        if msg.round != self.round:
            raise self.refuse(msg, f"it is for round {msg.round}, this is round {self.round}")
        self.clock.receive(msg.ts)
        contracts = self.plan[self.round - 1]
        if not 1 <= msg.contract <= len(contracts):
            raise ProtocolError(f"mayor: round {msg.round} has no contract {msg.contract}")
        self.completed.add(msg.contract)
        if len(self.completed) < len(contracts):
            return []
        final = self.round == len(self.plan)
        stop = Stop(sender=self.pid, ts=self.clock.tick(), round=self.round, final=final)
        effects: list[Effect] = [Send(j, stop) for j in range(1, self.n + 1)]
        if final:
            self.state = MayorState.MAYOR_DONE
        else:
            self.state = MayorState.INITIAL
            effects.append(Schedule("request", "pause"))
        return effects

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not MayorState.MAYOR_WAITING:
            return {}
        missing = [i for i in range(1, len(self.plan[self.round - 1]) + 1) if i not in self.completed]
        return {f"CONTRACT_COMPLETED of round {self.round}, contract(s) {', '.join(map(str, missing))}": []}

    def card(self) -> list[tuple[str, str]]:
        round_plan = self.plan[self.round - 1] if 1 <= self.round <= len(self.plan) else ()
        return [
            ("round", f"{self.round} of {len(self.plan)}"),
            ("contracts (hamsters)", fmt(list(round_plan))),
            ("completed", fmt(self.completed)),
        ]

    def snapshot(self) -> tuple[Any, ...]:
        return (self.state, self.clock.time, self.round, frozenset(self.completed))

    def __deepcopy__(self, memo: dict[int, Any]) -> Mayor:
        """A fast deep copy for exhaustive exploration: only the mutable parts are copied (speed:
        see ``Elf.__deepcopy__``)."""
        twin = copy.copy(self)
        twin.clock = LamportClock(self.clock.time)
        twin.completed = set(self.completed)
        return twin
