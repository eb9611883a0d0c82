"""What a problem is, declared once: its statement, and nothing of any way to solve it.

A *problem* (``mutex``, ``kmutex``, ...: the modules of ``problems/``) says what every solution must do;
a *solution* (``spec.AlgorithmSpec``) says how one algorithm coordinates, and names the problem
it solves (``problem="kmutex"`` or the ``Problem`` object). Each built-in problem is one module of
``mutexlab/problems/`` ending with ``PROBLEM = Problem(...)``; ``problems.problem_of(spec)`` is
the one way any command finds a solution's problem, a built-in solution's as a user's file's.

A ``Problem`` holds:

* ``name``: what solutions name, and the commands' subcommand (``simulate kmutex``);
* ``flags``: how the commands present it (``spec.Flags``): its workload's flags with their
  defaults and help, what ``simulate`` prints of a run. ``flags.flags[0]`` sizes it (P);
* ``options``: every workload option any solution of it takes (key → one-line help); a solution
  adds its own (``AlgorithmSpec.options``);
* ``resources(P, options)``: the resources and their capacities the statement fixes, for P
  processes and the options (the problem's ``defaults`` filled in). A solution's setup must
  declare exactly these (``protocols.registry.build_setup`` refuses any other);
* ``defaults``: the options a solution is given when the user gives none (``k`` = 2 ...);
* ``audit``: its own trace checks (findings.Invariants), imported when a trace is first decided;
* ``rules``: what a process may hold, as ``HoldingRule``\\ s — ONE definition, applied alike by
  the audit at every ``enter``/``exit`` of a trace and by ``check`` in every reachable world
  (e.g. a resource held only with the others it needs);
* ``invariant``: a state invariant ``check`` tests beyond the rules, reading the processes'
  own state (``spec.WorldInvariant``; None: none);
* ``endless``: the workload option ``--endless`` replaces by "ask forever" (None: no such mode).
* ``messages``: what the problem's audit reads of a solution's messages, message type → field
  → its type (``"*"``: any type with that field) — the elves' ``{"STOP": {"round": int}}``, the
  round a STOP ends. A setup whose codec lacks one is refused (``wrong_setup``), as one
  declaring other resources is: never a trace the audit cannot read;
* ``requested``: the resource each unit of that workload asks for, one ``request`` at a time
  (``cs``; None: the only resource declared, if one). ``mutexlab test`` sends a
  program ``request`` and ``release`` lines of it;
* ``process``: what its processes are called (``<process>-<pid>``: ``worker-2``) where the
  problem, not a solution, names them (a program's nodes);
* ``states``: a process's idle, waiting and holding states (a program's node reports these);
* ``role``: the one process beside the N (pid 0, so named) where the statement has one (a
  coordinator; None: none). ``mutexlab test`` runs a program for it too, with ``id`` 0;
* ``draw``: the run's parameters the statement draws for N processes, the options and the seed
  (a plan the role hands out), or None; ``mutexlab test`` puts them in the trace header's
  ``params`` and in every program's ``init`` ``options``;
* ``reported``: what of ``draw``'s parameters the role may draw itself instead and report in
  the trace (a plan: the role's own events name it). An MPI
  program never sees ``init``: ``mutexlab test --mpi`` leaves these out of the header and of
  ``init``, and the problem's audit reads them from what the role reports.

What the metrics charge is the ``Note("request", {"resource": r})`` a solution's node records
for each request of resource ``r`` (check/metrics.py); the problems' node bases record them.

Core layer: plain data; the audit's and the checker's application of the rules live in
``audit/rules.py`` and ``check/properties.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .findings import Invariants
from .messages import lacking
from .setups import Setup
from .spec import Flags, WorldInvariant


@dataclass(frozen=True)
class HoldingRule:
    """What one process may hold. ``broken(pid, held, params)``: None while the process ``pid``
    holding ``held`` (resource → units) keeps the rule, else what is wrong; ``params``: the
    run's (its trace header's, its setup's). Checked after every change of a process's
    holdings: in a trace at each of its ``enter``/``exit`` events, in ``check`` in every world.
    A step's effects run in the order the node returns them, so a rule holds between effects
    too (enter what a unit needs first, then the unit; leave the unit, then the rest)."""

    name: str  # the finding's rule (a safety rule)
    what: str  # one line: what it checks ("checked: ..." of the audit and of check)
    broken: Callable[[int, Mapping[str, int], Mapping[str, Any]], str | None]
    # what a trace's run header lacks for the rule (None: nothing): such a trace is refused,
    # since a rule judged on params it does not state would be a finding about the header
    needs: Callable[[Mapping[str, Any]], str | None] | None = None


@dataclass(frozen=True)
class Problem:
    """One problem (see the module docstring)."""

    name: str
    summary: str
    flags: Flags
    options: Mapping[str, str]
    resources: Callable[[int, Mapping[str, Any]], dict[str, int]] | None
    audit: Callable[[], Invariants] | None = None
    rules: tuple[HoldingRule, ...] = ()
    invariant: WorldInvariant | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    endless: str | None = None
    requested: str | None = None
    process: str = "node"
    states: tuple[str, str, str] = ("RELEASED", "WANTED", "HELD")
    role: str | None = None
    draw: Callable[[int, dict[str, Any], int], dict[str, Any]] | None = None
    reported: tuple[str, ...] = ()
    finals: tuple[str, ...] = ()
    messages: Mapping[str, Mapping[str, type]] = field(default_factory=dict)

    def capacities(self, processes: int, options: Mapping[str, Any]) -> dict[str, int] | None:
        """The resources the statement fixes for ``processes`` and ``options`` (None: not declared)."""
        if self.resources is None:
            return None
        return self.resources(processes, {**self.defaults, **options})

    def wrong_setup(self, setup: Setup, processes: int, options: Mapping[str, Any]) -> str | None:
        """Why ``setup``, built for ``processes`` and ``options``, does not solve this statement
        (other resources than it states, a message lacking a field it reads), or None."""
        stated = self.capacities(processes, options)
        if stated is not None and setup.capacities != stated:
            return f"its setup declares the resources {setup.capacities}, but the problem {self.name} states {stated}"
        return lacking(setup.codec, self.messages, self.name)
