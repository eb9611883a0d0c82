"""The world model of ``mutexlab check``: ``sim/world.py``'s worlds and steps, with what the
search adds — the reductions in use, why each applies or not, partial-order reduction, and the
steps as weak fairness sees them."""

from __future__ import annotations

from typing import Any

from ..protocol import Note
from ..setups import NoName
from ..sim.world import DELIVER, DUPLICATE, LOCAL, Transition, WorldModel

__all__ = ["DELIVER", "DUPLICATE", "LOCAL", "Model", "Transition"]


class Model(WorldModel):
    """A ``WorldModel`` and the reductions the search applies to it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reductions: list[str] = []  # the names of those in use
        self.notes: list[Any] = []  # each reduction, applied or not, and why (reductions.notes_of)
        self.por: Any = None  # a PartialOrder (por.py) choosing the steps to explore, or None
        self.por_dropped = False  # the reduced graph had a cycle: searched again without it
        self.declared: Any = None  # the Reductions declaration chosen for it, if any
        self.sampler: Any = None  # a Sampler (sampling.py) testing the declared reductions, or None
        self.problem: Any = None  # the Problem its setup solves (its invariant, its endless workload)
        # (state id, local decision) → the resources the ``Note("request")``s among the effects its
        # handler returned name (``str``, in order): charges.Tracker.noted reads them instead of
        # running the handler again; a handler's effects not returned as a list or tuple (a
        # generator, consumed by the run) are not kept
        self.requested: dict[tuple[int, int], tuple[str, ...]] = {}
        self._returned: Any = None  # the effects the latest run_input's handler returned
        self.refusals = 0  # steps refused (a state of no name), each (state, input) once: dead ends
        self._parts: dict[tuple, tuple] = {}  # the parts of the transitions kept (``_kept``)

    # -- the sampler's hooks: every new state, every merge under a canonical key, every new input
    def state_id(self, i: int, proto: Any) -> int:
        kept = len(self.objects)
        sid = super().state_id(i, proto)
        sampler = self.sampler
        if sampler is not None:
            if sid == kept:
                sampler.new_state(proto)
            elif self.canonical is not None and self.objects[sid] is not proto:
                sampler.merged(sid, proto)
        return sid

    def run_input(self, i: int, proto: Any, call: Any) -> Transition:
        kept: list = []

        def keeping(p: Any) -> Any:
            effects = call(p)
            if not kept:  # the run's, not the determinism probe's
                kept.append(effects)
            return effects

        try:
            got = super().run_input(i, proto, keeping)
        except NoName as exc:  # a refusal: the step is a dead end of the search (Search.refusal)
            got = Transition(-1, (), (), (), str(exc), refused=True)
            self.refusals += 1
        self._returned = kept[0] if kept else None  # after any run nested in it (the sampler's twins)
        return got

    def transition(self, sid: int, code: int) -> Transition:
        if code in self.trans[sid]:
            return super().transition(sid, code)
        self._returned = None
        got = self.trans[sid][code] = self._kept(super().transition(sid, code))
        if code & 1 and got.error is None and type(self._returned) in (list, tuple):
            self.requested[sid, code] = requested(self._returned)
        sampler = self.sampler
        if sampler is not None and sid in sampler.twins:
            sampler.twin_input(sid, code)
        return got

    def _kept(self, t: Transition) -> Transition:
        """``t`` as kept in ``trans``: its sends, schedules and holdings shared with every equal one
        kept before (a large search remembers hundreds of thousands of transitions, most of them
        sending what others send)."""
        parts = self._parts
        sends = tuple(parts.setdefault(send, send) for send in t.sends)
        return Transition(
            t.state,
            parts.setdefault(sends, sends),
            parts.setdefault(t.schedules, t.schedules),
            parts.setdefault(t.holds, t.holds),
            t.error,
            t.refused,
        )

    def twin_transition(self, sid: int, code: int, twin: Any) -> Transition:
        """What input ``code`` does to ``twin`` in the place of state ``sid``'s representative
        (nothing of ``sid`` is cached or changed)."""
        kept, cached = self.objects[sid], self.trans[sid]
        self.objects[sid], self.trans[sid] = twin, {}
        try:
            return super().transition(sid, code)
        finally:
            self.objects[sid], self.trans[sid] = kept, cached

    def drop_por(self) -> None:
        """Switch partial-order reduction off (the reduced graph has a cycle: see por.py)."""
        if self.por is not None:
            self.reductions = [r for r in self.reductions if r != "partial-order reduction"]
            self.por = None
            self.por_dropped = True

    def fairness_label(self, label: tuple) -> tuple | None:
        """The step as weak fairness sees it: a link's next delivery (FIFO), one message (reorder),
        one process's action; duplicates are faults, never owed."""
        kind, x, y = label
        if kind == DUPLICATE:
            return None
        if kind == DELIVER:
            if self.reorder:
                return (DELIVER, x, y // (self.dup + 1) if self.dup else y)
            return (DELIVER, x)
        return label


def requested(effects: Any) -> tuple[str, ...]:
    """The resources the ``Note("request")``s of ``effects`` name, in order."""
    return tuple(
        str(effect.fields.get("resource"))
        for effect in effects
        if type(effect) is Note and effect.event == "request"
    )
