"""Sampling the declared reductions on the worlds a check visits (``Sampler``).

A declaration (``mutexlab.reduction``) is a claim about code that nothing proves, and a
variant may keep the declared class while its parts do something else. So every check with
reductions tests the claims on what it meets, and a sample that disagrees **refuses** the
reduction (``Refused``, with the sample in words): ``engine.run_check`` then searches again
without it, so no verdict is reached through a refused reduction.

* **Clock offsets**: a world W the search reaches, before normalisation, and its twin W+c —
  every clock, stored timestamp and timestamp in flight raised by c, c cycling over
  ``TWIN_SHIFTS`` — must behave alike: the same enabled steps, and each step of W+c must end
  in W's successor raised by c, with the same enters, exits, refusals and overfilled
  resources (the stamps of messages declared dead for their receiver are not compared).
* **Retired clocks**: W and its normal form, when the normal form retires W's clocks.
* **Canonical key**: when a process state shares its key with a kept state of another
  snapshot, the two must do the same on every local decision the search gives the kept one
  (the same next key, sends, schedules, enters and exits, refusal) — the first such twin of
  each kept state, up to ``MAX_TWINS``. Messages are left out: a message carries the stamps of
  its world, which a key may rightly rest on (a fixed role) and a state kept from another
  world does not share.
* **Send bound**: in a sampled world no enabled step of q sends to x while the bound says q
  may not (the promise, checked for the next step).
* **Parts**: every new process state's attributes are the declared ones (``Reductions.parts``).

Which worlds: the first ``FULL`` worlds given to the normalisation, then one in ``STRIDE``,
thinning to one in (worlds so far / ``SPREAD``) — deterministic, so the same run samples the
same worlds. A sample is a test, not a proof: it
catches a declaration that is wrong where the search goes, not one wrong only elsewhere
(``--cross-check`` is the full comparison).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from .. import show
from ..reduction import CANONICAL, CLOCKS, RETIRED, SENDS, part_differs
from ..sim.world import LOCAL

TWIN_SHIFTS = (1, 2, 3, 5, 7, 10, 11, 90, 99, 1000)
FULL = 1024  # the first worlds: every one sampled
STRIDE = 64  # then one in STRIDE at least,
SPREAD = 1024  # and at most one in (worlds so far / SPREAD): about SPREAD per factor e of worlds
MAX_TWINS = 4096  # canonical twins kept (one per kept state)


class Refused(BaseException):
    """A sample disagreed: the check searches again without ``refusals`` (name → why).

    A ``BaseException``, as ``LimitReached``: a protocol's ``except Exception`` must not eat it."""

    def __init__(self, refusals: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in refusals.items()))
        self.refusals = refusals


def words(snapshot: Any) -> str:
    """A snapshot in words: enums by their values (``(WANTED, 3, (1, 2))``)."""
    if isinstance(snapshot, Enum):
        return str(snapshot.value)
    if isinstance(snapshot, tuple):
        return "(" + ", ".join(words(v) for v in snapshot) + ("," if len(snapshot) == 1 else "") + ")"
    if isinstance(snapshot, (set, frozenset)):  # sorted members, never ``frozenset({…})``
        return "{" + ", ".join(words(v) for v in sorted(snapshot, key=show.order)) + "}"
    return repr(snapshot)


def refuse(name: str, why: str) -> Refused:
    """Refuse ``name``, and what rests on it (retired clocks extend clock offsets)."""
    out = {name: why}
    if name == CLOCKS:
        out[RETIRED] = "it extends clock-offset normalisation, which was refused"
    return Refused(out)


class Sampler:
    """The samples of one model's reductions (see the module). ``shift``: the model's
    ``ClockShift``, if clock offsets are in use; ``in_use``: the names of the declared
    reductions applied (a part that is not declared refuses them all)."""

    def __init__(self, model: Any, parts: Any, shift: Any, in_use: list[str]) -> None:
        self.model = model
        self.parts = parts
        self.shift = shift
        self.in_use = in_use
        self.calls = 0
        self.next_at = 1 if FULL else STRIDE  # the call that is sampled next
        self.samples = 0
        self.busy = False  # inside a sample: its own steps are not sampled again
        self.twins: dict[int, Any] = {}  # kept state id → another state with its canonical key
        self.queue: list[tuple[int, int]] = []  # (kept state id, input) its twin has yet to be given

    # -- worlds ----------------------------------------------------------------------------------
    def normaliser(self, normalise: Callable[[tuple], tuple] | None) -> Callable[[tuple], tuple]:
        """``normalise`` (None: the identity), sampling the worlds it is given."""

        def call(world: tuple) -> tuple:
            out = normalise(world) if normalise is not None else world
            self.observe(world, out)
            return out

        call.inner = normalise  # type: ignore[attr-defined]  # what the search core follows
        call.sampler = self  # type: ignore[attr-defined]
        return call

    def observe(self, world: tuple, out: tuple) -> None:
        """One more world normalised (``world`` to ``out``): sample it when it is due."""
        self.calls = calls = self.calls + 1
        if calls >= self.next_at and not self.busy:
            self.next_at = calls + (1 if calls < FULL else max(STRIDE, calls // SPREAD))
            self.sample(world, out)

    def sample(self, raw: tuple, norm: tuple) -> None:
        self.busy = True
        try:
            if self.shift is not None:
                c = TWIN_SHIFTS[self.samples % len(TWIN_SHIFTS)]
                self.alike(
                    raw, self.raised(raw, c), CLOCKS, f"its twin with every timestamp raised by {c}", c
                )
                if self.shift.retires(raw):
                    self.alike(raw, norm, RETIRED, "its normal form (clocks retired)")
            por = self.model.por
            if por is not None and por.sends_to is not None and SENDS in self.in_use:
                self.sends(raw)
            self.samples += 1
        finally:
            self.busy = False
        self.flush()

    def raised(self, world: tuple, c: int) -> tuple:
        """``world`` with every clock, stored timestamp and timestamp in flight raised by ``c``."""
        model, shift = self.model, self.shift
        n = model.n
        w = list(world)
        for i in range(n):
            w[i] = shift._state(shift.shifted, i, world[i], -c, shift.clocks.shift)  # noqa: SLF001
        for k in range(model.L):
            q = world[n + k]
            if q:
                w[n + k] = model.seq_id(tuple(shift._msg(mid, -c) for mid in model.seqs[q]))  # noqa: SLF001
        return tuple(w)

    def deadened(self, world: tuple) -> tuple:
        """``world`` with the timestamps of messages declared dead for their receiver 0."""
        model, shift = self.model, self.shift
        dead, n = shift.clocks.dead, model.n
        if dead is None:
            return world
        w = list(world)
        for k in range(model.L):
            q = world[n + k]
            if q:
                receiver = model.objects[world[model.link_to[k]]]
                w[n + k] = model.seq_id(
                    tuple(
                        shift._dead_msg(mid) if dead(model.messages[mid], receiver) else mid  # noqa: SLF001
                        for mid in model.seqs[q]
                    )
                )
        return tuple(w)

    def _steps(self, world: tuple) -> dict[tuple, tuple]:
        """The enabled steps by what they are (a link's next delivery, a process's action)."""
        return {
            (kind, x, y if kind == LOCAL else None): (kind, x, y) for kind, x, y in self.model.steps(world)
        }

    def _outcome(self, world: tuple, label: tuple, raw: bool) -> tuple:
        model = self.model
        normalise = model.normalise
        if raw:
            model.normalise = None
        try:
            nxt, t, overfull = model.step(world, label)
        finally:
            model.normalise = normalise
        return (t.error is not None, overfull, t.holds, nxt)

    def alike(self, a: tuple, b: tuple, name: str, what: str, c: int | None = None) -> None:
        """Raise Refused unless worlds ``a`` and ``b`` behave alike: with ``c``, ``b`` is ``a``
        raised by ``c`` and each step of ``b`` must end in the world of ``a``'s step raised by
        ``c`` (stepping commutes with the shift); else both steps must have one normal form."""
        model = self.model
        sa, sb = self._steps(a), self._steps(b)
        if sa.keys() != sb.keys():
            only = [model.describe(label) for key, label in sa.items() if key not in sb]
            only += [model.describe(label) for key, label in sb.items() if key not in sa]
            raise refuse(name, f"a world and {what} enable different steps ({', '.join(only)})")
        for key, label in sa.items():
            got_a, got_b = self._outcome(a, label, c is not None), self._outcome(b, sb[key], c is not None)
            if c is not None and got_a[3] is not None:  # nobody reads a dead message's stamps
                got_a = got_a[:3] + (self.deadened(self.raised(got_a[3], c)),)
                got_b = got_b[:3] + (self.deadened(got_b[3]),)
            if got_a != got_b:
                raise refuse(
                    name,
                    f"a world and {what} differ after {model.describe(label)}: {self._diff(got_a, got_b)}",
                )

    def _diff(self, a: tuple, b: tuple) -> str:
        model = self.model
        if a[0] != b[0]:
            return "one refuses it"
        if a[1] != b[1] or a[2] != b[2]:
            return "they enter or leave differently"
        wa, wb = a[3], b[3]
        for i in range(model.n):
            if wa[i] != wb[i]:
                name = model.names[model.pids[i]]
                one, other = words(model.objects[wa[i]].snapshot()), words(model.objects[wb[i]].snapshot())
                return f"{name} becomes {one} in one, {other} in the other"
        for k, (s, t) in enumerate(model.links):
            if wa[model.n + k] != wb[model.n + k]:
                return f"what is in flight {model.names[s]}→{model.names[t]} differs"
        return "their pending decisions or holdings differ"

    def sends(self, world: tuple) -> None:
        """Raise Refused if an enabled step sends where the declared bound says it may not."""
        model, por = self.model, self.model.por
        for label in model.steps(world):
            kind, x, y = label
            i = x if kind == LOCAL else model.link_to[x]
            mid = y // (model.dup + 1) if model.dup else y
            t = model.transition(world[i], 2 * y + 1 if kind == LOCAL else 2 * mid)
            if t.error is not None:
                continue
            for k, sent in t.sends:
                to = model.link_to[k]
                if not por.may_send(world, i, to):
                    names = model.names
                    raise refuse(
                        SENDS,
                        f"{model.describe(label)} sends {model.messages[sent].type} to "
                        f"{names[model.pids[to]]}, which the bound says "
                        f"{names[model.pids[i]]} may not before {names[model.pids[to]]} moves",
                    )

    # -- process states --------------------------------------------------------------------------
    def new_state(self, proto: Any) -> None:
        """A new kept state: its parts must be the declared ones."""
        if self.parts is None:
            return
        why = part_differs(self.parts, proto)
        if why is not None:
            raise Refused(
                {
                    name: f"a state of {type(proto).__name__} reached by the search: its {why}"
                    for name in self.in_use
                    if name in (CANONICAL, CLOCKS, RETIRED, SENDS)
                }
            )

    def merged(self, sid: int, proto: Any) -> None:
        """``proto`` got the canonical key of kept state ``sid``: keep it as its twin (the first
        of another snapshot) and compare the two on the inputs ``sid`` has had so far."""
        model = self.model
        if sid in self.twins or len(self.twins) >= MAX_TWINS:
            return
        if proto.snapshot() == model.objects[sid].snapshot():
            return
        self.twins[sid] = proto
        self.queue += [(sid, code) for code in model.trans[sid] if code & 1]
        self.flush()

    def twin_input(self, sid: int, code: int) -> None:
        """``sid``'s twin is to be given input ``code`` (now, or after the sample running): a
        local decision only — a message carries its world's stamps, which a kept state reached
        in another world may rightly read otherwise (a canonical key may rest on them)."""
        if code & 1:
            self.queue.append((sid, code))
            self.flush()

    def flush(self) -> None:
        """Give the twins the inputs queued, unless inside a sample (its end flushes)."""
        if self.busy:
            return
        self.busy = True
        try:
            while self.queue:
                sid, code = self.queue.pop()
                self._twin_input(sid, code, self.model.trans[sid][code])
        finally:
            self.busy = False

    def _sent(self, sends: tuple) -> tuple:
        """What was sent, each message without its timestamps when clock offsets are in use (the
        key may drop a clock whose stamps the declaration calls unread: the shift samples them)."""
        if self.shift is None:
            return sends
        stamps = set(self.shift.stamps)
        return tuple((k, self.model.messages[mid].model_dump_json(exclude=stamps)) for k, mid in sends)

    def _twin_input(self, sid: int, code: int, t: Any) -> None:
        """Run input ``code`` on ``sid``'s twin: it must do what ``sid`` did (``t``)."""
        model = self.model
        other = model.twin_transition(sid, code, self.twins[sid])
        if (t.error is None, t.state, self._sent(t.sends), t.schedules, t.holds) == (
            other.error is None,
            other.state,
            self._sent(other.sends),
            other.schedules,
            other.holds,
        ):
            return
        name = model.names[model.pids[model.owner[sid]]]
        what = model.actions[code >> 1] if code & 1 else model.messages[code >> 1].type
        kept, twin = words(model.objects[sid].snapshot()), words(self.twins[sid].snapshot())
        raise Refused(
            {
                CANONICAL: f"{name} in {kept} and in {twin}, which share a canonical key, do different things on {what}"
            }
        )
