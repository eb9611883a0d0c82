"""Membership: who takes part in a run, with which pid, and how many there are (P).

The monitor admits participants; nobody is configured with its pid or with P by hand.

1. A participant starts with a fresh *instance id*, listens on its own queue (bound to
   ``control.<instance>``) and publishes ``join`` (``join.<role>``) with its instance id and role.
2. The monitor admits joiners in arrival order. The run's *scalable role* (the problem's process,
   node for the classic algorithms) gets pids 1..P; a *fixed role* (a problem's coordinator)
   gets its own pid (0). A joiner with a stable name from its orchestrator (a
   StatefulSet's pod ``node-3``, a swarm task's slot: ``STABLE_NAME``) *wants* ``<role>-<n>``: it
   gets that name (and its pid) when the run has it; a later joiner wanting it (the pod
   restarted) takes the earlier one's place until the roster closes; the others fill the
   remaining names in arrival order. The roster closes when
   * ``PROCESSES`` = P > 0: P scalable joiners and every fixed role are there; or
   * ``PROCESSES`` = 0 (discovery, for ``docker compose up --scale <role>=N``): at least one
     scalable joiner, every fixed role, and no new joiner for ``JOIN_WINDOW`` seconds;
     P is then the number of scalable joiners.
3. On closing, the monitor builds the setup (``make_setup(algorithm, P, options, seed)``),
   declares every participant's queue, then sends each member a ``welcome``: its pid and name,
   P, the algorithm, options, seed, dwell times and the roster. The welcome is the start signal:
   every queue exists before anyone can send.
4. Anyone joining after the roster closed, beyond P, twice for a fixed role, or with a role
   the algorithm does not have, gets ``refused`` with the reason, logs it and exits cleanly (0).
5. A broker restart while joining loses no joiner. Joins are idempotent by instance id (a
   member's join again changes nothing; a refused instance gets the same refusal), so a
   participant re-announces its join after every reconnect until it is welcomed. In discovery the
   quiet window starts again when the monitor reconnects, and lasts at least ``REJOIN_GRACE``:
   the window never runs out while the monitor is cut off from the joins it is waiting for.

This module is the pure part (the decisions); the monitor and participants carry the messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..protocols import registry
from ..protocols.registry import Solution, solution
from ..setups import ConfigError, Setup
from ..words import article, count

# Discovery: after the monitor reconnects, the roster stays open at least this long. A participant
# cut off by the same outage retries its connection at least every 2 s (the bus's back-off), then
# re-announces its join; this leaves room for both.
REJOIN_GRACE = 5.0


def __getattr__(name: str) -> tuple[str, ...]:
    """``ROLES``: every participant role some registered algorithm has (its spec's scalable and
    fixed roles), found when asked for: it imports every registered algorithm's module."""
    if name == "ROLES":
        return tuple(sorted({role for s in registry.SPECS.values() for role in s.roles}))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def scalable_role(algorithm: str | Solution) -> str:
    """The role with pids 1..P (its spec's ``role``)."""
    return solution(algorithm).spec.role


def fixed_roles(algorithm: str | Solution) -> list[str]:
    """Roles with exactly one member, outside P (its spec's ``fixed_roles``)."""
    return list(solution(algorithm).spec.fixed_roles)


STABLE_ORDINAL = re.compile(r"-(\d{1,9})$")


def wanted_name(role: str, stable_name: str | None) -> str | None:
    """The name a participant of ``role`` asks for, from its orchestrator's stable name ending in
    ``-<n>`` (pod ``mutexlab-node-3`` → ``node-3``); None without one. ValueError when it has no ordinal."""
    if not stable_name:
        return None
    found = STABLE_ORDINAL.search(stable_name)
    if not found:
        raise ValueError(
            f"a stable name must end in -<number> (a StatefulSet's pod name), got {stable_name!r}"
        )
    return f"{role}-{int(found.group(1))}"


def role_of(name: str) -> str:
    """``node-3`` → ``node``; a fixed role's name (no ``-<n>``) → itself."""
    return name.split("-", 1)[0]


@dataclass
class Member:
    instance: str
    role: str
    joined: float
    name: str | None = None
    pid: int | None = None
    os_pid: int | None = None  # its process's, as its join says (``mutexlab run`` names logs by it)
    wants: str | None = None  # the name its stable name asks for (``wanted_name``)


@dataclass
class Roster:
    """Admission decisions. Invariants: pids are given once, only when closed: a member that wants
    a name the setup has gets it, the others the remaining names in arrival order; no two members
    want the same name (before closing, the later of two replaces the earlier); an instance is a member at most once, and once refused it stays refused
    for the same reason."""

    algorithm: str  # what the run's ALGORITHM names (a registered name, a module, a .py file)
    expected: int  # P, or 0 to discover
    window: float  # discovery: quiet seconds before closing
    members: list[Member] = field(default_factory=list)
    closed: bool = False
    last_join: float = 0.0
    resumed: float | None = None  # discovery: when the monitor last came back from a lost connection
    refusals: dict[str, str] = field(default_factory=dict)  # instance -> why it was refused
    # the run's solution, resolved by the monitor; else once, when first asked (``resolved``)
    solution: Solution | None = field(default=None, repr=False, compare=False)

    def resolved(self) -> Solution:
        if self.solution is None:
            self.solution = solution(self.algorithm)
        return self.solution

    @property
    def scalable(self) -> str:
        return scalable_role(self.resolved())

    @property
    def fixed(self) -> list[str]:
        return fixed_roles(self.resolved())

    def member(self, instance: str) -> Member | None:
        return next((m for m in self.members if m.instance == instance), None)

    def count(self, role: str) -> int:
        return sum(1 for m in self.members if m.role == role)

    def join(self, instance: str, role: str, now: float, wants: str | None = None) -> str | None:
        """Admit ``instance`` (None) or return the reason it is refused. Idempotent by instance id:
        a member joining again stays the member it was (the window is not extended), a refused
        instance is refused again with the same reason. ``wants``: the name it asks for."""
        if self.member(instance) is not None:
            return None
        if instance in self.refusals:
            return self.refusals[instance]
        same = next((m for m in self.members if wants is not None and m.wants == wants), None)
        if same is not None and not self.closed:
            # The orchestrator's name is one participant's (a restarted pod keeps it): the later
            # joiner takes the earlier one's place, which is refused should it ever ask again.
            self.members.remove(same)
            self.refusals[same.instance] = (
                f"replaced by {instance}, a later {role} with the stable name {wants}"
            )
        reason = self._refusal(role)
        if reason is not None:
            self.refusals[instance] = reason
            return reason
        self.members.append(Member(instance, role, now, wants=wants))
        self.last_join = now
        return None

    def _refusal(self, role: str) -> str | None:
        if role not in (self.scalable, *self.fixed):
            roles = " and ".join([self.scalable, *self.fixed])
            return f"{article(self.resolved().name)} run has no role {role!r} (its roles: {roles})"
        if self.closed:
            return (
                f"membership is closed: the run started with {count(self.count(self.scalable), self.scalable)}; "
                f"late {role} refused"
            )
        if role in self.fixed and self.count(role) >= 1:
            return f"the run already has its {role}"
        if role == self.scalable and self.expected and self.count(role) >= self.expected:
            return f"the run is announced with P={count(self.expected, role)} and all have joined"
        return None

    def reconnected(self, now: float) -> None:
        """The monitor lost the broker and is back at ``now``: joins may have been held up (not yet
        published, or re-announced only now), so the discovery window starts again."""
        self.resumed = now

    def ready(self, now: float) -> bool:
        if self.closed or any(self.count(r) < 1 for r in self.fixed):
            return False
        n = self.count(self.scalable)
        if self.expected:
            return n == self.expected
        if self.resumed is not None and now - self.resumed < max(self.window, REJOIN_GRACE):
            return False
        return n >= 1 and now - self.last_join >= self.window

    def close(self, setup: Setup) -> dict[str, Member]:
        """Give every member its name and pid from ``setup``; returns name → member."""
        by_role: dict[str, list[tuple[int, str]]] = {}
        for pid, name in sorted(setup.names.items()):
            by_role.setdefault(role_of(name), []).append((pid, name))
        assigned: dict[str, Member] = {}
        for role in {m.role for m in self.members}:
            slots = by_role.get(role, [])
            joiners = [m for m in self.members if m.role == role]
            if len(slots) != len(joiners):
                raise ConfigError(
                    f"the setup has {count(len(slots), role + ' slot')} for {count(len(joiners), 'joiner')}"
                )
            # who wants a name of the setup gets it; the rest take what is left, in arrival order
            pid_of = {name: pid for pid, name in slots}
            placed = [m for m in joiners if m.wants in pid_of]
            taken = {m.wants for m in placed}
            pairs = [(m, (pid_of[m.wants], m.wants)) for m in placed if m.wants is not None]
            pairs += zip([m for m in joiners if m not in placed], [s for s in slots if s[1] not in taken])
            for member, (pid, name) in pairs:
                member.pid, member.name = pid, name
                assigned[name] = member
        missing = set(setup.names.values()) - set(assigned)
        if missing:
            raise ConfigError(f"nobody joined for {', '.join(sorted(missing))}")
        self.closed = True
        return assigned
