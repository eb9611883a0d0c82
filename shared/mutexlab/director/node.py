"""A program as a protocol object: ``ProgramNode`` speaks the node protocol (lines.py) with one
child process and turns its answers into effects, so any driver — a RabbitMQ participant above
all — runs a user's program where it would run one of mutexlab's algorithms.

Invariants: the program is started once, lazily, by ``start`` (a setup builds every node of a
run, a participant hosts one); every input is one line, answered up to its ``done`` (``process.py``:
bounded in lines, bytes and time), and the answer's outputs become effects in the order written.
What the program does wrong (crashes, stalls, garbage, an enter without a request) is raised:
a ``NodeFault`` becomes a ``HandlerError`` (protocol.py's guard), a finding. ``close`` kills the
program with its process group; it is idempotent.
"""

from __future__ import annotations

import copy
import math
import os
import shlex
from typing import Any, ClassVar, Literal

from ..bus.wire import MAX_BODY, compact
from ..clock import LamportClock
from ..messages import Codec, Message
from ..protocol import Effect, Enter, Exit, Note, Protocol, ProtocolError, Schedule, Send
from ..setups import ConfigError
from .lines import NodeFault, shorten
from .process import NodeProcess

COMMAND_ENV = "NODE_COMMAND"  # the program a node runs when its setup names none (a compose service)
TIMEOUT = 5.0  # seconds a program has to answer one input (as ``mutexlab test``'s default)
DWELLS = ("think", "cs")  # the workload's dwells: before each request, while holding (a problem's own)
STATES = ("RELEASED", "WANTED", "HELD")  # a driven node's idle, waiting and holding states
# Seconds for its first answer (its init): below the monitor's default stall timeout (15 s), so
# that a program which never answers is reported as this node's fault, with its cause, not as a
# run that stalled. $NODE_START_TIMEOUT overrides it (with ``run --stall-timeout`` above it).
START_ENV, RUN_START_TIMEOUT = "NODE_START_TIMEOUT", 12.0
MAX_MESSAGE = MAX_BODY - 8 * 1024  # a body's bytes on the wire, its envelope's (clocks, ids) the rest
START_SETTING = f"${START_ENV} (with run's --stall-timeout above it)"  # named in a slow start's fault


def start_timeout() -> float:
    """$NODE_START_TIMEOUT (seconds > 0), else ``RUN_START_TIMEOUT``; ConfigError when malformed."""
    text = os.environ.get(START_ENV, "").strip()
    if not text:
        return RUN_START_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 86_400:  # NaN and infinities fail too
        raise ConfigError(f"{START_ENV}={text!r}: expected seconds, more than 0 and at most 86,400")
    return value


class ProgramMessage(Message):
    """What a program sent: its ``body``, any JSON, carried as it is. A trace shows the body as
    ``mutexlab test`` does: its own ``type`` (a string; else ``message``) and the body itself as
    ``msg`` (``{"body": …}`` when it is no object), so a problem's audit reads a program's
    messages alike in both (a message's type and its fields)."""

    type: Literal["PROGRAM"] = "PROGRAM"
    body: Any = None

    def trace_type(self) -> str:
        kind = self.body.get("type") if isinstance(self.body, dict) else None
        return kind if isinstance(kind, str) else "message"

    def trace_body(self) -> dict[str, Any]:
        return self.body if isinstance(self.body, dict) else {"body": self.body}


CODEC = Codec(ProgramMessage)


class ProgramNode(Protocol):
    """Node ``pid`` of ``n``: the program ``command`` (split like a shell, never run by one; None:
    ``$NODE_COMMAND``, read at ``start``, in the process that hosts the node).

    ``init`` is what the program's ``init`` line carries beside its id and peers (``seed``,
    ``problem``, ``options``). ``requests`` > 0 makes it a driven node (``mutex``, ``kmutex`` ...):
    it asks for ``resource`` that many times, after a dwell of the first of ``dwells``, and leaves
    it after one of the second, as the problem's own nodes do, in the problem's ``states`` (idle,
    waiting, holding); 0 leaves the program to act on its own. ``peers``: the ids it
    may send to (None: 1..``n`` but its own; a problem played whole adds its role, node 0);
    ``finals``: the states it is finished in when it acts on its own (None: DEAD, RETIRED)."""

    state: str  # type: ignore[assignment]  # the program names its states: any string
    final_states: ClassVar[frozenset[Any]] = frozenset({"DEAD", "RETIRED"})

    def __init__(
        self,
        pid: int,
        n: int,
        command: str | None,
        init: dict[str, Any],
        requests: int,
        resource: str,
        dwells: tuple[str, str] = DWELLS,
        states: tuple[str, str, str] = STATES,
        name: str | None = None,
        peers: frozenset[int] | None = None,
        finals: frozenset[str] | None = None,
    ) -> None:
        # A copy of its own: processes share no state (setups.shared_state refuses one dict for all).
        self.pid, self.n, self.command, self.init = pid, n, command, copy.deepcopy(init)
        self.requests_left, self.resource, self.driven = requests, resource, requests > 0
        self.then_request, self.then_exit = Schedule("request", dwells[0]), Schedule("exit", dwells[1])
        # a "pause" line: a "wake" input after the holding dwell (test's wake step, which it chooses)
        self.then_wake, self.pauses = Schedule("wake", dwells[1]), 0
        self.idle, self.wanted, self.held = states
        self.clock = LamportClock()
        self.state = self.idle if self.driven else "STARTED"
        self.process: NodeProcess | None = None
        self._name = name or f"node-{pid}"
        self.peers = frozenset(range(1, n + 1)) - {pid} if peers is None else peers
        if finals is not None:
            self.final_states = finals  # type: ignore[misc]

    @property
    def name(self) -> str:
        return self._name

    # -- the inputs --------------------------------------------------------------------------
    def start(self) -> list[Effect]:
        argv = shlex.split(self.command or os.environ.get(COMMAND_ENV, ""))
        if not argv:
            raise ConfigError(f"{COMMAND_ENV} is not set: the program {self.name} runs")
        self.process = NodeProcess(argv, self.pid, self.peers, TIMEOUT, start_timeout(), START_SETTING)
        line = {
            "type": "init",
            "id": self.pid,
            "name": self.name,
            "peers": sorted(self.peers),
            "nodes": self.n,
        }
        effects = self._ask(line | self.init)
        return effects + [self.then_request] if self.driven else effects

    def on_message(self, msg: Message) -> list[Effect]:
        if not isinstance(msg, ProgramMessage):
            raise self.refuse(msg, "a program's node takes only what programs send")
        self.clock.receive(msg.ts)
        return self._ask({"type": "recv", "from": msg.sender, "body": msg.body})

    def on_local(self, action: str) -> list[Effect]:
        if action == "request" and self.state == self.idle and self.requests_left > 0:
            self.requests_left -= 1
            self.state = self.wanted
            note = Note("request", {"resource": self.resource})
            return [note, *self._ask({"type": "request", "resource": self.resource})]
        if action == "exit" and self.state == self.held:
            effects = self._ask({"type": "release", "resource": self.resource})
            if self.state == self.held:
                raise NodeFault("protocol", self.pid, f"node {self.pid} did not exit when asked to release")
            return effects + [self.then_request] if self.requests_left > 0 else effects
        if action == "wake" and self.pauses > 0:
            self.pauses -= 1
            return self._ask({"type": "wake"})
        raise self.refuse(f"local action {action!r}")

    @property
    def finished(self) -> bool:
        if self.driven:
            return self.state == self.idle and self.requests_left == 0
        return self.state in self.final_states

    def snapshot(self) -> Any:
        raise ProtocolError("a program's state cannot be copied: it lives in its process")

    # -- the program's answers as effects -----------------------------------------------------
    def _ask(self, line: dict[str, Any]) -> list[Effect]:
        if self.process is None:
            raise ProtocolError(f"{self.name} takes {line['type']} before its start")
        outputs, _, _ = self.process.ask(line)
        return [effect for output in outputs for effect in self._effect(output)]

    def _effect(self, output: dict[str, Any]) -> list[Effect]:
        kind = output["type"]
        if kind == "send":
            if (size := len(compact(output["body"]))) > MAX_MESSAGE:
                raise NodeFault(
                    "garbage",
                    self.pid,
                    f"node {self.pid} sent a message of {size:,} bytes: over RabbitMQ a message's body is at "
                    f"most {MAX_MESSAGE:,} (its envelope shares the wire's {MAX_BODY:,}); send less",
                )
            body = ProgramMessage(sender=self.pid, ts=self.clock.tick(), body=output["body"])
            return [Send(output["to"], body)]
        if kind == "enter":
            enter = Enter(output["resource"], output.get("units", 1))
            if self.driven:
                if self.state != self.wanted:
                    raise NodeFault(
                        "protocol",
                        self.pid,
                        f"node {self.pid} entered {output['resource']} without a request pending",
                    )
                if output["resource"] == self.resource:  # served (the forks before the meal)
                    self.state = self.held
                    return [enter, self.then_exit]
            return [enter]
        if kind == "exit":
            if self.driven and output["resource"] == self.resource:
                self.state = self.idle
            return [Exit(output["resource"], output.get("units", 1))]
        if kind == "state":
            if not self.driven:  # a driven node's state is the workload's (idle, waiting, holding)
                self.state = output["state"]
            return []
        if kind == "pause":  # it has more to do later: woken after a dwell, as test wakes it at a step
            self.pauses += 1
            return [self.then_wake]
        fields = {k: v for k, v in output.items() if k not in ("type", "event", "pid", "vc", "t")}
        return [Note(output["event"], fields)]

    def stall_hint(self) -> str | None:
        """Lines the program wrote after its last done, never read (nothing reads a program between
        its inputs): no input asked for them, so none of their sends or entries happened."""
        if self.process is None or not (late := self.process.unread()):
            return None
        return f"{self.process.wrote_late(left=late)}; unread: {shorten(late.splitlines()[0])}"

    def close(self) -> None:
        """Kill the program (its process group); idempotent."""
        if self.process is not None:
            self.process.kill()
