"""A failing schedule made small: delta debugging (Zeller and Hildebrandt's ddmin) over its steps,
then over its nodes.

A candidate is played leniently (``Lenient``): a step that is not possible in the candidate's
run (its message was never sent, its node does not exist) is skipped, and the run stops when the
steps run out. It *reproduces* when it ends in a finding of the same rule. ddmin keeps the
smallest list of steps that still reproduces; then fewer nodes are tried from 1 up, each size by
the sets of nodes its steps use most (the steps of those nodes renumbered, then each delivery taken
by its link, ``Lenient.by_link``; then a short random search); each test is one run, and
``budget`` bounds how many are made (``seconds`` how long). A node's own fault (a crash, garbage)
is the same only in the same words from a node of the same role (``_same_fault``), in every test:
a crash of another exit status or signal is another finding.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from itertools import combinations

from ..setups import ConfigError
from .judge import DEADLOCK, HANG, NO_REST, SAFETY, Finding
from .lines import PAST_DONE
from .problem import Problem
from .process import Pool
from .search import Outcome, Settings, play
from .strategies import Chooser, Lingers, Random
from .world import Action


class Lenient:
    """Play ``script``'s steps in order, skipping those not possible, then stop (a chooser).

    ``by_link``: a delivery whose message id is not held delivers the first held message of the
    same sender to the same node instead — on fewer nodes a sender numbers its messages anew
    (those it sent to a node now gone are not counted), so ``node-1#12→2`` may be ``node-1#2→2``
    there. What it plays is a guess; the outcome found is what counts. Without it, ``guessed``
    says whether a delivery was skipped that ``by_link`` would have played (else a run
    ``by_link`` is the same run, not worth making)."""

    def __init__(self, script: list[Action], by_link: bool = False) -> None:
        self.queue, self.by_link, self.guessed = list(script), by_link, False

    def __call__(self, depth: int, enabled: list[Action]) -> Action | None:
        while self.queue:
            step = self.queue.pop(0)
            if step in enabled:
                return step
            if (delivery := _delivery_of(step, enabled)) is not None:
                return delivery
            if (linger := _linger_of(step, enabled)) is not None:
                return linger
            same_link = [e for e in enabled if step[0] in ("deliver", "land") and _same_link(e, step)]
            if same_link and self.by_link:
                return same_link[0]
            self.guessed = self.guessed or bool(same_link)
        return None


def _words(finding: Finding) -> str:
    """A node fault's words for ``_said``: a line it wrote that mutexlab does not take (garbage)
    is the same fault whatever the line, which may echo an input (a debugging print of the init
    line, its peers and nodes) and so change with the nodes left out."""
    if finding.rule == "garbage" and finding.line is not None and finding.message.endswith(finding.line):
        return finding.message[: -len(finding.line)]
    return finding.message


def _said(message: str) -> str:
    """A fault's words without its numbers (node ids, counts, line numbers change with the nodes
    left out), but for an exit status or a signal's (``exited with status 7`` is not ``... 1``): a
    crash on fewer nodes is the same fault only when it says the same. A line written after a done
    is said two ways, by when it arrived (with the done: "wrote past", or after it: "wrote after …
    before its next input"), which a timer's or a thread's timing decides: both are the one fault,
    named by the input it followed and the line."""
    late = re.search(re.escape(PAST_DONE) + r" (\w+)\)(?:.*?\))?: (.*)$", message, re.DOTALL)
    if late is not None:
        message = f"late after {late.group(1)}: {late.group(2)}"
    return re.sub(r"((?:status|signal) \d+)|\d+", lambda m: m.group(1) or "#", message)


def _same_fault(shown: Finding, fault: Finding) -> bool:
    """Whether ``shown`` is node fault ``fault`` again: the same words (``_said``: but for its
    numbers, with its exit status or signal) of a node of the same role — the problem's role
    (node 0, the elves' mayor) or a worker: every node runs the same program, so which worker
    shows it is the schedule's doing, not another fault."""
    same_role = shown.node is not None and fault.node is not None and (shown.node == 0) == (fault.node == 0)
    return same_role and _said(_words(shown)) == _said(_words(fault))


def _renamed(step: Action, ids: dict[int, int], old: dict[int, str], new: dict[int, str]) -> Action | None:
    """``step`` with its node and its message's sender renumbered by ``ids``; None: a message
    of a node left out."""
    kind, node, mid = step
    if "#" not in mid:
        return (kind, ids[node], mid)
    sender, _, n = mid.rpartition("#")
    pid = next((p for p, name in old.items() if name == sender), None)
    if pid not in ids:
        return None
    return (kind, ids[node], f"{new[ids[pid]]}#{n}")


def _delivery_of(step: Action, enabled: list[Action]) -> Action | None:
    """A recorded landing's delivery, where the rank does not poll now and so may not land it."""
    delivery = ("deliver", step[1], step[2])
    return delivery if step[0] == "land" and delivery in enabled else None


def _linger_of(step: Action, enabled: list[Action]) -> Action | None:
    """A recorded linger's rank lingered now, where its id differs: on a schedule cut short or
    another program the rank's inputs so far, or the place its loops wait, are others."""
    return next((a for a in enabled if step[0] == "linger" and a[:2] == step[:2]), None)


def _same_link(held: Action, step: Action) -> bool:
    return held[:2] == step[:2] and held[2].rpartition("#")[0] == step[2].rpartition("#")[0]


FEWER_NODES = frozenset(
    {SAFETY, DEADLOCK, HANG, NO_REST}
)  # the rules a random search on fewer nodes may show
MAX_SUBSETS = 12  # the sets of nodes tried at one size (those the schedule uses most)


class Strict:
    """Play ``script``'s steps exactly (a chooser); a step not possible stops the run, and
    ``stuck`` says which (0-based), so the caller reports the program's divergence. ``wakes``
    (another program than the one the script was found on): where the next step is not possible,
    or after the last, a paused node is woken first (``woken`` counts them, at most ``MAX_WAKES``
    more than the script's steps), as a program that paused where the other did not would have
    gone on within the step; a recorded wake of a node not paused, or linger of a rank not polling,
    is passed over (``skipped``, ``unlingered``), a recorded linger of a rank whose loops wait elsewhere lingers it
    there, and a recorded landing at a rank that does not poll there is its message's delivery. Past the
    script's last step, another program's run goes on in the default order (the first enabled
    step, ``onward`` counts them) to its end: a fix may need more steps than the program it was
    found on, and what those steps do is judged too."""

    MAX_WAKES = 100

    def __init__(self, script: list[Action], wakes: bool = False) -> None:
        self.script, self.wakes = script, wakes
        self.stuck: int | None = None
        self.at = 0  # the script's next step
        self.woken = 0
        self.skipped = 0  # recorded wakes of a pause this program did not make
        self.unlingered = 0  # recorded lingers of a rank this program does not poll in
        self.onward = 0  # steps past the script's last, in the default order (another program)

    def __call__(self, depth: int, enabled: list[Action]) -> Action | None:
        while self.wakes and self.at < len(self.script) and self.script[self.at][0] in ("wake", "linger"):
            if self.script[self.at] in enabled or _linger_of(self.script[self.at], enabled):
                break
            if self.script[self.at][0] == "wake":
                self.skipped += 1  # it did not pause there: the recorded wake is nothing to it
            else:
                self.unlingered += 1  # it does not poll there: nor is the recorded linger
            self.at += 1
        step = self.script[self.at] if self.at < len(self.script) else None
        if step is not None and step in enabled:
            self.at += 1
            return step
        if self.wakes and step is not None and (delivery := _delivery_of(step, enabled)) is not None:
            self.at += 1  # another program that does not poll there: the message is delivered
            return delivery
        if self.wakes and step is not None and (linger := _linger_of(step, enabled)) is not None:
            self.at += 1  # another program, whose loops wait elsewhere: its rank lingers there
            return linger
        wake = next((a for a in enabled if a[0] == "wake"), None)
        if self.wakes and wake is not None and self.woken < len(self.script) + self.MAX_WAKES:
            self.woken += 1
            return wake
        if step is not None:
            self.stuck = self.at
            return None
        if self.wakes and enabled:
            self.onward += 1
            return enabled[0]
        return None


class Shrinker:
    def __init__(
        self,
        settings: Settings,
        pool: Pool,
        remake: Callable[[int], Problem],
        rule: str,
        budget: int = 400,
        seconds: float = 60.0,
    ) -> None:
        self.settings, self.pool, self.remake, self.rule = settings, pool, remake, rule
        self.fault: Finding | None = None  # a node's own fault being shrunk: what a run must show
        self.budget = budget
        self.tests = 0
        self.deadline = time.monotonic() + seconds
        self.not_shown: list[int] = []  # the smaller sizes tried in full that did not show it
        self.cut = False  # the budget ran out: a smaller run may show it, not tried

    def spent(self) -> bool:
        return self.tests >= self.budget or time.monotonic() > self.deadline

    def test(self, settings: Settings, steps: list[Action], chooser: Chooser | None = None) -> Outcome | None:
        """The outcome when ``steps`` (or ``chooser``, playing them) reproduce the finding, else None."""
        if self.spent():
            return None
        self.tests += 1
        outcome = play(settings, self.pool, chooser or Lenient(steps))
        shown = outcome.finding
        if shown is None or shown.rule != self.rule:
            return None
        return outcome if self.fault is None or _same_fault(shown, self.fault) else None

    def shrink(self, outcome: Outcome) -> tuple[Settings, Outcome]:
        settings, best = self.settings, outcome
        if self.rule not in FEWER_NODES:  # a node's own fault: its words (and role) must show
            self.fault = outcome.finding
        best = self.ddmin(settings, best)
        problem = settings.problem
        for nodes in range(1, problem.nodes):  # the fewest first: the first size that shows it
            try:
                smaller = replace(settings, problem=self.remake(nodes))
            except ConfigError:  # a size the problem refuses (too few processes): try the next
                continue
            found = self.fewer(smaller, best)
            if found is not None:
                self.fault = found.finding if self.fault is not None else None  # renumbered
                settings, best = smaller, self.ddmin(smaller, found)
                break
            if self.spent():
                break
            self.not_shown.append(nodes)
        self.cut = self.spent()
        return settings, best

    def fewer(self, smaller: Settings, best: Outcome) -> Outcome | None:
        """A run on ``smaller`` with the finding: ``best``'s steps on a set of its nodes (the lowest
        ids first, then those its steps use most; the role, node 0, always) renumbered 1..n in
        order, each message id by its sender's new name (``Lenient``, then by link). A node's own
        fault (a crash, garbage) counts only when the same node, renumbered, shows it in the same
        words (``_said``: a send to a peer the smaller run lacks is another fault); the other
        rules also by a short random search (on the lowest ids' turn). Last, for a node's own
        fault, a short random search in which a node of its role shows it in the same words."""
        old, new = self.settings.problem, smaller.problem
        workers = [n for n in sorted(old.names) if n >= 1]
        size = len([n for n in new.names if n >= 1])
        fault = self.rule not in FEWER_NODES
        use = {
            n: sum(s[1] == n or s[2].rpartition("#")[0] == old.names[n] for s in best.steps) for n in workers
        }
        faulty = best.finding.node if fault and best.finding is not None else None
        said = _said(_words(best.finding)) if fault and best.finding is not None else None
        first = tuple(workers[:size])  # the lowest ids first (their steps as they are), then by use
        subsets = sorted(
            combinations(workers, size), key=lambda kept: (kept != first, -sum(use[n] for n in kept))
        )
        for kept in subsets[:MAX_SUBSETS]:
            if faulty is not None and faulty not in kept:  # the faulty node stays
                continue
            ids = {n: i for i, n in enumerate(kept, 1)} | ({0: 0} if 0 in old.names else {})
            renamed = (_renamed(s, ids, old.names, new.names) for s in best.steps if s[1] in ids)
            script = [s for s in renamed if s is not None]
            want = None if faulty is None else ids[faulty]
            for found in self._attempts(smaller, script, search=kept == first and not fault):
                shown = found.finding if found is not None else None
                if shown is not None and want in (None, shown.node) and said in (None, _said(_words(shown))):
                    return found
        if faulty is None:
            return None
        # A node's own fault by a short random search too, when no schedule of its steps showed it:
        # any node of the faulty one's role, in the same words (``_same_fault``).
        assert best.finding is not None
        wanted = best.finding
        return self.sample(smaller, lambda shown: _same_fault(shown, wanted))

    def _attempts(self, smaller: Settings, script: list[Action], search: bool) -> Iterator[Outcome | None]:
        """Runs on ``smaller``, made one at a time as asked: the steps as they are, then (``search``:
        not for a node's own fault) a short random search, then each delivery by its link when the
        first run had to guess message ids."""
        exact = Lenient(script)
        yield self.test(smaller, script, exact)
        if search:
            yield self.sample(smaller)
        if exact.guessed:
            yield self.test(smaller, script, Lenient(script, by_link=True))

    def sample(
        self, settings: Settings, same: Callable[[Finding], bool] | None = None, runs: int = 60
    ) -> Outcome | None:
        """A short random search on fewer nodes (their messages are numbered anew, so the
        schedule's own steps rarely fit): the first run with the same finding (its rule, and
        ``same`` of it when given)."""
        quiet = Lingers(exact=False)
        for run in range(runs):
            if self.spent():
                return None
            self.tests += 1
            chooser = Random(settings.seed + run).next_run()  # lingers: each place quiet once
            assert chooser is not None
            outcome = play(settings, self.pool, chooser, lingers=quiet)
            shown = outcome.finding
            if shown is not None and shown.rule == self.rule and (same is None or same(shown)):
                return outcome
        return None

    def ddmin(self, settings: Settings, outcome: Outcome) -> Outcome:
        if self.rule == NO_REST:  # only a run cut at --max-steps shows it: a shorter schedule never
            return outcome  # does (a candidate stops when its steps run out), fewer nodes may
        steps, best = list(outcome.steps), outcome
        parts = 2
        while len(steps) >= 2:
            size = max(len(steps) // parts, 1)
            chunks = [steps[i : i + size] for i in range(0, len(steps), size)]
            reduced = False
            for index in range(len(chunks)):  # the complement of each chunk first (ddmin's usual win)
                rest = [s for j, c in enumerate(chunks) if j != index for s in c]
                found = self.test(settings, rest)
                if found is not None:
                    steps, best = list(found.steps), found
                    parts, reduced = max(parts - 1, 2), True
                    break
            if not reduced:
                if parts >= len(steps) or self.spent():
                    break
                parts = min(parts * 2, len(steps))
        return best
