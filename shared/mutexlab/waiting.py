"""What a stalled process waits for, asked of its own ``waiting_for()``, and the one error when it
cannot say: ``WaitsRaised``, which owns the map of a stall it leaves unexplained (``waiting``: one
precedence, a process whose waiting_for() raised is unknown) and its short text (``short``), so
``simulate``, ``check``, ``replay``, ``explore`` and ``run`` say such a stall alike."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .protocol import raised_at
from .setups import ConfigError, named_process
from .show import state_text

# What ``waits`` says of a waiting_for() that raised: a participant's status carries it as its hint,
# and the monitor ends a stall it cannot explain as check and simulate do (exit 2, outcome.py)
WAITS_RAISED = "its waiting_for() raised"
# What a stalled process waits for, as a run's ``stalled`` says it, when its waiting_for() raised:
# unknown, never "nothing" (``audit.stall.explain_stall`` says so)
UNKNOWN = "(unknown: its waiting_for() raised)"


def cannot(kind: str) -> str:
    """What a finding of ``kind`` a waiting_for() that raised leaves open, in words: a deadlock's
    stall (who waits for what), a liveness cycle's judgement (who waits in it forever)."""
    return "the cycle cannot be judged" if kind == "liveness" else "the stall cannot be explained"


class WaitsRaised(ConfigError):
    """``waits``: a process's ``waiting_for()`` raised, so the stall it was asked to explain cannot
    be explained (exit 2, never a verdict). ``process`` and ``state`` say which process, in which
    state, ``why`` what it raised and where (``its waiting_for() raised …, in state …``), ``short``
    the error without the advice (``asking … what it waits for: why``). A run that asks every
    unfinished process (``Driver.waiting``, ``WorldModel.waiters``) adds ``unknown`` (every process
    whose waiting_for() raised) and ``stalled`` (what the others wait for); a simulation that ends
    so adds ``result`` (the run as it ended) and ``scenario`` (the seed and the event it ended at),
    so that ``simulate`` can show the run as ``run`` does. ``waiting`` is the one map of the stall
    every command shows."""

    ADVICE = "It must return a dict of message kinds to the senders awaited (empty: waiting for nothing)"

    def __init__(self, asked: str, why: str, process: str = "?", state: str = "?") -> None:
        self.short = f"asking {asked} what it waits for: {why}"
        super().__init__(f"{self.short}. {self.ADVICE}")
        self.why, self.process, self.state = why, process, state
        self.unknown: list[str] = [process]
        self.stalled: dict[str, dict[str, list[str]]] = {}
        self.result: Any = None
        self.scenario: str | None = None

    def waiting(self, order: Iterable[str] | None = None) -> dict[str, dict[str, list[str]]]:
        """What each stalled process waits for, by name, in ``order`` (default: ``stalled``'s, then
        ``unknown``'s): ``{UNKNOWN: []}`` for each process of ``unknown``. One precedence: a process
        in both is unknown — its own waiting_for() raised, so nothing said for it is its word."""
        names = list(order) if order is not None else [*self.stalled, *self.unknown]
        return {
            n: {UNKNOWN: []} if n in self.unknown else self.stalled[n]
            for n in dict.fromkeys(names)
            if n in self.unknown or n in self.stalled
        }


def waits(proto: Any) -> dict[str, Any]:
    """``proto.waiting_for()``: what the process waits for, by kind, and from whom. The algorithm's
    code: an exception there (a ``sys.exit()`` too) is an error naming its line (exit 2), never a
    verdict — the stall it was asked to explain stays unexplained, not judged."""
    try:
        waiting: dict[str, Any] = proto.waiting_for()
        return waiting
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the algorithm's code, named with its line
        state = state_text(getattr(proto, "state", "?"))
        raise WaitsRaised(
            named_process(proto),
            f"{WAITS_RAISED} {type(exc).__name__}: {exc} at {raised_at(exc)}, in state {state}",
            str(getattr(proto, "name", "?")),
            state,
        ) from None


def who_waits(protocols: Mapping[int, Any]) -> tuple[set[int], str | None]:
    """The pids of ``protocols`` whose ``waiting_for()`` names something, and None; or nobody and
    the error (``WaitsRaised.short``) when one raised: a replay's loop then cannot be judged."""
    try:
        return {p for p, proto in protocols.items() if waits(proto)}, None
    except WaitsRaised as exc:
        return set(), exc.short
