"""One elf: its transition table (``Elf.TABLE``) and the handlers it names.

``X`` = CONTRACT, PINS or POISON; the phase says which resource the elf is after. Every elf
message (X_REQUEST, X_REPLY, X_RELEASE) passes the **round gate** first (``_admit``): one of a
later round is buffered (clock updated), one of an earlier round or of the round this elf has
seen stopped is dropped as if never received (no clock step); the table's cells say what a
message of the running round does. In INITIAL that is a round with no contract left for this
elf; in ELF_DONE no round runs, so the gate drops everything.

"next contract*" and "the check" are defined in core.py (``_next_contract``, ``_check``).

A ``request`` (a rest timer firing) is ignored in every state but ELF_FINISHED: its round was
stopped while the elf rested. With no rest timer pending it is an error in every state.
"""

from __future__ import annotations

from ...clock import priority
from ...machine import Cell, Table, never, on
from ...protocol import Effect, Exit, Note, ProtocolError, Schedule, Send
from ..classic import expect
from .core import ElfCore
from .messages import (
    MAYOR,
    PINS,
    POISON,
    REPLY,
    ContractCompleted,
    ContractReply,
    ContractRequest,
    ElfState,
    InitContracts,
    PinsRelease,
    PoisonRelease,
    Stop,
    XMessage,
    XRelease,
    XReply,
    XRequest,
    contract_resource,
    elf_name,
)

S = ElfState  # short, for the table
REPLIES, RELEASES = ("CONTRACT_REPLY", "PINS_REPLY", "POISON_REPLY"), ("PINS_RELEASE", "POISON_RELEASE")


def _cells(request: str, reply: str, release: str, /, **own: Cell) -> dict[str, Cell]:
    """A row: every X message (the same text for each X), then the row's ``own`` cells."""
    return {
        "CONTRACT_REQUEST": on(request, "_on_contract_request"),
        "PINS_REQUEST": on(request, "_on_units_request"),
        "POISON_REQUEST": on(request, "_on_units_request"),
        **{t: on(reply, "_on_stray_reply") for t in REPLIES},
        **{t: on(release, "_on_release") for t in RELEASES},
        **own,
    }


QUEUE, DEQUEUE, STRAY = "queue, REPLY", "dequeue sender", "a stopped round's: drop; this round's: error"
STALE_TIMER = on("ignore (a stale rest timer)", "_stale_timer")
END_ROUND = "end of round; ELF_DONE if final"
BETWEEN_ROUNDS = never("INIT_CONTRACTS comes only between rounds")
HOLDING = never("the round's STOP waits until no contract of it is held")
OVER = never("the last round is over")


class Elf(ElfCore):
    """One elf: its table and handlers (the core rule and the state are ``ElfCore``'s)."""

    TABLE = Table(
        ElfState,
        {
            S.INITIAL: _cells(
                QUEUE,
                STRAY,
                DEQUEUE,
                INIT_CONTRACTS=on(
                    "fresh queues, replay early requests, next contract*; mid-round: error",
                    "_on_init",
                    to=(S.ELF_REQUESTING, S.ELF_CRITICAL),
                ),
                STOP=on(f"{END_ROUND}; no round runs: error", "_on_stop", to=(S.ELF_DONE,)),
                request=STALE_TIMER,
            ),
            S.ELF_REQUESTING: _cells(
                QUEUE,
                "",
                DEQUEUE,
                INIT_CONTRACTS=BETWEEN_ROUNDS,
                CONTRACT_REPLY=on("count; all N−1 in: the check", "_on_reply", to=(S.INITIAL,)),
                PINS_REPLY=on("count; all N−1 in: the check", "_on_reply", to=(S.ELF_WAIT_FOR_RELEASE,)),
                POISON_REPLY=on(
                    "count; all N−1 in: the check", "_on_reply", to=(S.ELF_CRITICAL, S.ELF_WAIT_FOR_RELEASE)
                ),
                STOP=on(
                    f"contract phase: drop it, {END_ROUND}; pins/poison: error",
                    "_on_stop",
                    to=(S.INITIAL, S.ELF_DONE),
                ),
                request=STALE_TIMER,
            ),
            S.ELF_WAIT_FOR_RELEASE: _cells(
                QUEUE,
                STRAY,
                DEQUEUE,
                INIT_CONTRACTS=BETWEEN_ROUNDS,
                STOP=HOLDING,
                PINS_RELEASE=on("dequeue; if pins: the check", "_on_release_waiting", to=(S.ELF_REQUESTING,)),
                POISON_RELEASE=on(
                    "dequeue; if poison: the check", "_on_release_waiting", to=(S.ELF_CRITICAL,)
                ),
                request=STALE_TIMER,
            ),
            S.ELF_CRITICAL: _cells(
                QUEUE,
                STRAY,
                DEQUEUE,
                INIT_CONTRACTS=BETWEEN_ROUNDS,
                STOP=HOLDING,
                request=STALE_TIMER,
                exit=on("contract_done, exits, RELEASEs, COMPLETED; rest", "_finish", to=(S.ELF_FINISHED,)),
            ),
            S.ELF_FINISHED: _cells(
                QUEUE,
                STRAY,
                DEQUEUE,
                INIT_CONTRACTS=BETWEEN_ROUNDS,
                STOP=on(END_ROUND, "_on_stop", to=(S.INITIAL, S.ELF_DONE)),
                request=on("next contract*", "_rest_over", to=(S.ELF_REQUESTING, S.INITIAL, S.ELF_CRITICAL)),
            ),
            S.ELF_DONE: _cells("drop", "drop", "drop", INIT_CONTRACTS=OVER, STOP=OVER, request=STALE_TIMER),
        },
        never="CONTRACT_COMPLETED goes only to the mayor",
        legend="X = CONTRACT, PINS or POISON. Every X message passes the round gate first: one of a "
        "later round is buffered, one of a stopped or earlier round dropped unseen; a cell says what one "
        "of the running round does. next contract* and the check: protocols/elves/core.py",
    )

    # -- elf messages: the round gate, then the cell ---------------------------------------
    def _admit(self, msg: XMessage) -> bool:
        """The round gate: True for a message of the running round (its clock received)."""
        if not 1 <= msg.sender <= self.n or msg.sender == self.pid:
            raise ProtocolError(
                f"{self.name} got {msg.type} from {msg.sender}, not another elf (state {self.state})"
            )
        if msg.round < self.round or (msg.round == self.round and not self.active):
            return False  # a round already stopped here: stale, dropped as if never received
        self.clock.receive(msg.ts)
        if msg.round > self.round:
            self.future.append(msg)  # that round has not begun here yet
            return False
        return True

    def _handle(self, msg: XMessage) -> list[Effect]:
        """A message of the running round from another elf, past the gate (a buffered one): its cell."""
        fn = self._transitions.get((self.state, msg.type))
        if fn is None:
            raise self.refuse(msg)
        return fn(self, msg, True)  # type: ignore[call-arg]  # X handlers take ``admitted``

    def _on_contract_request(self, msg: ContractRequest, admitted: bool = False) -> list[Effect]:
        if not (admitted or self._admit(msg)):
            return []
        self.contract_requests.add(priority(msg.ts, msg.sender))
        return [Send(msg.sender, ContractReply(sender=self.pid, ts=self.clock.tick(), round=msg.round))]

    def _on_units_request(self, msg: XRequest, admitted: bool = False) -> list[Effect]:
        if not (admitted or self._admit(msg)):
            return []
        self.queues[msg.kind][msg.sender] = (msg.ts, msg.units)
        return [Send(msg.sender, REPLY[msg.kind](sender=self.pid, ts=self.clock.tick(), round=msg.round))]

    def _on_reply(self, msg: XReply, admitted: bool = False) -> list[Effect]:
        if not (admitted or self._admit(msg)):
            return []
        if self.phase != msg.kind or msg.sender in self.replies:
            raise self._unexpected(msg)
        self.replies.add(msg.sender)
        return self._check() if len(self.replies) == self.n - 1 else []

    def _on_stray_reply(self, msg: XReply, admitted: bool = False) -> list[Effect]:
        if admitted or self._admit(msg):
            raise self._unexpected(msg)
        return []

    def _unexpected(self, msg: XMessage) -> ProtocolError:
        return ProtocolError(
            f"{self.name} got an unexpected {msg.type} from {elf_name(msg.sender)} in state {self.state}"
        )

    def _on_release(self, msg: XRelease, admitted: bool = False) -> list[Effect]:
        if admitted or self._admit(msg):
            self._dequeue(msg)
        return []

    def _on_release_waiting(self, msg: XRelease, admitted: bool = False) -> list[Effect]:
        if not (admitted or self._admit(msg)):
            return []
        self._dequeue(msg)
        return self._check() if self.phase == msg.kind else []

    def _dequeue(self, msg: XRelease) -> None:
        held = self.queues[msg.kind].get(msg.sender)
        if held is None or held[1] != msg.units:
            raise ProtocolError(
                f"{self.name} got {msg.type} of {msg.units} from "
                f"{elf_name(msg.sender)}, which requested {held} (state {self.state})"
            )
        del self.queues[msg.kind][msg.sender]

    # -- round boundaries and timers -------------------------------------------------------
    def _on_init(self, msg: InitContracts) -> list[Effect]:
        self.clock.receive(msg.ts)
        if self.active or msg.round != self.round + 1:
            raise ProtocolError(
                f"{elf_name(self.pid)} got INIT_CONTRACTS of round {msg.round} in state "
                f"{self.state} of round {self.round}"
            )
        self.round = msg.round
        self.active = True
        self.contracts = tuple(msg.contracts)
        self.contract_requests = set()
        self.queues = {PINS: {}, POISON: {}}
        now = [m for m in self.future if m.round == self.round]
        self.future = [m for m in self.future if m.round > self.round]
        effects: list[Effect] = []
        for buffered in now:  # only CONTRACT_REQUESTs can be early: nothing else needs my reply
            effects += self._handle(buffered)
        return effects + self._next_contract()

    def _on_stop(self, msg: Stop) -> list[Effect]:
        self.clock.receive(msg.ts)
        if not self.active or msg.round != self.round:
            raise ProtocolError(
                f"{elf_name(self.pid)} got STOP of round {msg.round} in state {self.state} "
                f"of round {self.round}"
            )
        if self.holding is not None:
            raise ProtocolError(
                f"{elf_name(self.pid)} got STOP of round {msg.round} while it still holds "
                f"contract {self.round}.{self.holding[0]} (state {self.state})"
            )
        self.active = False
        self.phase = None
        self.my_request = None
        self.replies = set()
        self.contract_requests = set()
        self.queues = {PINS: {}, POISON: {}}
        self.state = ElfState.ELF_DONE if msg.final else ElfState.INITIAL
        return []

    def refuse_local(self, action: str) -> ProtocolError:
        if action == "exit":
            return ProtocolError(f"{self.name} cannot finish work (exit) in state {self.state}")
        return self.refuse(f"local action {action!r}", "unknown action")

    def _timer_fired(self) -> None:
        if self.rest_timers == 0:
            raise ProtocolError(f"{self.name} has no contract request pending (state {self.state})")
        self.rest_timers -= 1

    def _stale_timer(self, _action: str) -> list[Effect]:
        self._timer_fired()
        return []  # the round was stopped while resting: the timer is stale

    def _rest_over(self, _action: str) -> list[Effect]:
        self._timer_fired()
        return self._next_contract()

    def _finish(self, _action: str = "exit") -> list[Effect]:
        """ELF_FINISHED: the work is noted while still holding everything; the exits come before the
        releases that let anyone else in; CONTRACT_COMPLETED last."""
        if self.phase != POISON:  # ELF_CRITICAL while not working is only ever passing through
            raise self.refuse_local("exit")
        index, hamsters = expect(self, self.holding, "contract")
        pins = self.queues[PINS].pop(self.pid)[1]
        poison = self.queues[POISON].pop(self.pid)[1]
        effects: list[Effect] = [
            Note("contract_done", {"round": self.round, "contract": index, "hamsters": hamsters}),
            Exit(POISON, poison),
            Exit(PINS, pins),
            Exit(contract_resource(self.round, index)),
        ]
        ts = self.clock.tick()
        effects += [
            Send(j, PinsRelease(sender=self.pid, ts=ts, round=self.round, units=pins)) for j in self._others()
        ]
        ts = self.clock.tick()
        effects += [
            Send(j, PoisonRelease(sender=self.pid, ts=ts, round=self.round, units=poison))
            for j in self._others()
        ]
        effects.append(
            Send(
                MAYOR,
                ContractCompleted(sender=self.pid, ts=self.clock.tick(), round=self.round, contract=index),
            )
        )
        self.done.setdefault(self.round, []).append(index)
        self.holding = None
        self.phase = None
        self.my_request = None
        self.state = ElfState.ELF_FINISHED
        self.rest_timers += 1
        effects.append(Schedule("request", "rest"))
        return effects
