"""``check --cross-check``: the same configuration searched again without any reduction.

A reduction is sound only if the protocol's declaration of it is true (``mutexlab.reduction``);
nothing in the checker can prove that. The cross-check compares the reduced search with the
plain one, which merges nothing and skips nothing: they disagree when one passes and the other
finds something, or when the reduced search's counterexample does not replay to its finding
(the real code, run on the scenario, does not do what the reduced worlds said).

A disagreement is reported as what it is. When the reduced search passed where the plain one
found something, or its counterexample does not replay, a declared reduction was **unsound for
this code** (``unsound``): the plain search, which merges and skips nothing, stands — its
finding is the verdict (exit 1; its PASS exit 0; stopped, exit 3). Only when the reduced search
found something that replays and the plain one did not — the plain search missed a real
finding — is it an error of the tool (exit 4), never a verdict on the protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .counterexample import reproduces, scenario_of
from .engine import CheckConfig, run_check
from .model import Model
from .search import Result


@dataclass
class CrossCheck:
    agrees: bool | None  # None: inconclusive (a search stopped at a limit)
    why: str
    plain: Result | None = None
    plain_model: Model | None = None
    unsound: bool = False  # disagrees because a reduction was unsound: the plain search stands

    def as_dict(self) -> dict:
        out: dict = {"agrees": self.agrees, "why": self.why, "reductions_unsound": self.unsound}
        if self.plain is not None and self.plain_model is not None:
            out.update(
                states=self.plain.states,
                transitions=self.plain.transitions,
                verdict=self.plain.verdict,
                findings=[f.as_dict(self.plain_model) for f in self.plain.findings],
            )
        return out


def _what(result: Result) -> str:
    if result.findings:
        f = result.findings[0]
        return f"VIOLATION ({f.kind}: {f.message})"
    if result.refusal is not None:
        return "REFUSED (a step left a state of no name)"
    return "PASS" if result.complete else f"INCOMPLETE ({result.stopped})"


def cross_check(config: CheckConfig, result: Result, model: Model) -> CrossCheck:
    """Compare ``result`` (the search of ``config``, on ``model``) with a search without reductions."""
    if not result.findings and not result.complete:
        return CrossCheck(None, f"not run: the search with reductions stopped ({result.stopped})")
    if not result.findings and result.refusal is not None:
        return CrossCheck(None, "not run: the search with reductions met a refused step")
    replays, shown = True, ""
    if result.findings:
        finding = result.findings[0]
        scenario = scenario_of(
            model, finding, config.algorithm, config.processes, config.options, config.seed
        )
        replays, shown = reproduces(scenario, finding, config.solution)
    plain, plain_model = run_check(replace(config, reductions=False, partial_order=False))
    done = f"without reductions: {plain.states:,} states, {_what(plain)}"
    if not replays:
        why = f"the counterexample of the search with reductions does not replay to its finding ({shown}); {done}"
        return CrossCheck(False, why, plain, plain_model, unsound=True)
    if not plain.findings and (not plain.complete or plain.refusal is not None):
        return CrossCheck(None, f"{done}: nothing is confirmed", plain, plain_model)
    if bool(plain.findings) != bool(result.findings):
        # a replayed finding the plain search missed is the checker's error; else a reduction's
        return CrossCheck(
            False, f"{done}; with them: {_what(result)}", plain, plain_model, unsound=not result.findings
        )
    return CrossCheck(True, f"{done}: agrees", plain, plain_model)


def cross_words(cross: dict) -> str:
    """The ``cross-check:`` line of ``check``'s text, from ``CrossCheck.as_dict``."""
    if cross["agrees"] is False and cross.get("reductions_unsound"):
        return (
            f"cross-check:  DISAGREES — {cross['why']}. A declared reduction is not sound for this "
            "code: the search without reductions stands"
        )
    if cross["agrees"] is False:
        return (
            f"cross-check:  DISAGREES — {cross['why']}. The search without reductions missed a "
            "finding that replays: mutexlab check has a bug"
        )
    return f"cross-check:  {'' if cross['agrees'] else 'INCONCLUSIVE — '}{cross['why']}"
