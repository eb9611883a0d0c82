"""``mutexlab check <family>``: every reachable world of a bounded workload, checked.

Exit 0 when the search completed and found nothing, 1 on a finding (capacity, a scenario
invariant, deadlock, liveness, a rejected input; a step refused before it was a dead end, said
beside it), 2 on bad arguments or a refused step and no finding (REFUSED), 3 when a limit stopped
the search (incomplete: nothing is proven), 4 when ``--cross-check`` finds the search with
reductions and the one without disagreeing (an error of the tool, not a verdict), 5 when
``--swarm`` found nothing (a partial search: never a pass).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..check import SEARCHES
from ..problems.elves_flags import plan_lines
from ..protocols import registry
from ..setups import ConfigError
from ..spec import CheckText, Flags
from ..waiting import WaitsRaised, cannot
from ..words import count, settings
from . import checkbound, checkfigures, checkswarm
from .common import (
    add_endless_argument,
    add_json_argument,
    fail,
    megabytes,
    non_negative,
    positive,
    print_json,
)
from .flags import resolved
from .registry import Command, scenario

# The checker is imported by the functions that use it: every ``mutexlab`` command builds this parser.
if TYPE_CHECKING:
    from ..check.engine import CheckConfig

EXIT_PASS, EXIT_FINDING, EXIT_BAD, EXIT_INCOMPLETE, EXIT_DISAGREE = 0, 1, 2, 3, 4


def _common(p) -> None:
    g = p.add_argument_group("search")
    g.add_argument(
        "--search",
        choices=SEARCHES,
        default="dfs",
        help="depth-first (default; also decides liveness on the fly) or breadth-first "
        "(shortest counterexamples)",
    )
    g.add_argument(
        "--max-states", type=positive, metavar="N", help="stop (incomplete, exit 3) after N states"
    )
    g.add_argument(
        "--max-memory",
        type=megabytes,
        default=4096,
        metavar="MB",
        help="stop (incomplete, exit 3) when the check has grown this process by more than MB (default 4096)",
    )
    g.add_argument(
        "--no-reduction",
        action="store_true",
        help="explore the plain state space (no reductions): the counts to compare with other tools",
    )
    g.add_argument(
        "--no-partial-order",
        action="store_true",
        help="keep the other reductions but not partial-order reduction (to measure its effect)",
    )
    g.add_argument(
        "--cross-check",
        action="store_true",
        help="search again without reductions and compare: a disagreement is an error of the tool "
        "(exit 4). Costs the plain search: use small sizes",
    )
    g.add_argument(
        "--reorder",
        action="store_true",
        help="links may reorder messages (leaves the algorithms' FIFO model on purpose)",
    )
    g.add_argument(
        "--duplicate",
        type=non_negative,
        default=0,
        metavar="N",
        help="a link may deliver each message up to N extra times (default 0)",
    )
    g.add_argument(
        "--exact",
        action="store_true",
        help="store whole worlds, not 64-bit fingerprints (no collision risk, more memory)",
    )
    g.add_argument(
        "--counterexample",
        metavar="FILE",
        help="write a finding as a scenario for `mutexlab replay` (and its --report)",
    )
    checkfigures.add_arguments(g)
    checkswarm.add_arguments(g)
    g.add_argument(
        "--quiet",
        action="store_true",
        help="no progress on stderr (by default a line every 10 s when stderr is not a terminal, "
        "also with --json)",
    )
    add_json_argument(g, "outcome")


def _problem_arguments(flags: Flags) -> Callable[..., None]:
    """A problem's flags besides its configuration: ``--endless`` where its workload has one."""
    problem = registry.presented(flags)

    def add(p) -> None:
        if problem is not None and problem.endless is not None:
            add_endless_argument(
                p,
                "starvation shows as a cycle. Refused up front when the clocks would make the worlds infinite",
            )
        _common(p)

    return add


def _variant_arguments(text: CheckText) -> Callable[..., None]:
    """A family's flags besides its configuration (its small defaults here are its spec's
    ``per_command["check"]``): a seed, ``--zero-clocks`` if it has one, and the search's."""

    def add(p) -> None:
        p.add_argument("--seed", type=non_negative, default=0, help=text.seed)
        if text.zero_clocks:
            p.add_argument("--zero-clocks", action="store_true", help=text.zero_clocks)
        _common(p)

    return add


def config_of(args) -> CheckConfig:
    """The configuration the flags describe. Raises ConfigError."""
    from ..check.engine import CheckConfig
    from ..sim.world import endless_options

    limits = dict(
        search=args.search,
        max_states=args.max_states,
        max_memory_mb=args.max_memory,
        reductions=not args.no_reduction,
        partial_order=not args.no_partial_order,
        reorder=args.reorder,
        duplicate=args.duplicate,
        exact=args.exact,
    )
    scenario = args.scenario_config(args)
    solution = resolved(args, scenario, "check")  # once, here, of this problem: passed down in the config
    options = dict(scenario.options)
    if args.flags.check is None:  # a problem whose workload is requests, without a seed
        endless = getattr(args, "endless", False)
        if endless:
            # no budget: the checker asks for every request
            options = endless_options(options, solution.problem.endless)
        return CheckConfig(
            scenario.algorithm, scenario.processes, options, 0, endless=endless, solution=solution, **limits
        )
    if getattr(args, "zero_clocks", False):
        options["initial_clocks"] = {str(pid): 0 for pid in range(1, scenario.processes + 1)}
    return CheckConfig(args.algorithm, scenario.processes, options, args.seed, solution=solution, **limits)


class ProgressLine:
    """ProgressLine on stderr, in every phase of the check: on a terminal one line redrawn at most
    twice a second; elsewhere (a pipe, a file, also under --json: stdout stays one JSON
    document) a line per report, which the check hands over every ``PROGRESS_EVERY`` seconds."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.last = time.monotonic()
        self.shown = False

    def __call__(self, r, final: bool) -> None:
        if final:
            if self.shown and self.tty:
                sys.stderr.write("\r\033[K")
                sys.stderr.flush()
            return
        from ..check.budget import PROGRESS_EVERY
        from ..check.result import rss_mb

        now = time.monotonic()
        if now - self.last < (0.5 if self.tty else PROGRESS_EVERY - 1):
            return
        self.last = now
        rate = r.states / r.seconds if r.seconds > 0 else 0
        line = f"{r.states:,} states, {rate:,.0f} states/s, {rss_mb():.0f} MB, {r.seconds:.0f} s" + (
            f" ({r.phase})" if r.phase and r.phase != "search" else ""
        )
        sys.stderr.write(f"\r\033[K{line}" if self.tty else f"check: {line}\n")
        sys.stderr.flush()
        self.shown = True


def properties_checked(model) -> list[str]:
    from ..check.properties import invariant_for

    if model is None:  # stopped before the model was built: nothing was checked
        return []
    _, invariant = invariant_for(model)
    out = ["capacity of every resource"]
    if invariant:
        out.append(invariant)
    out += ["no rejected input", "deadlock", "liveness (every request served, weak fairness)"]
    return out


def refused_unchecked(result) -> list[str]:
    """What a search that met a refused step (a dead end) could not check."""
    out = ["every world past a refused step", "deadlock and liveness where a refused step leads on"]
    if result.liveness_unjudged:
        out.append("liveness of the cycles closed after the first refusal (not judged)")
    return out


def summary(config: CheckConfig, result, model, scenario_path, reproduced, cross=None) -> dict:
    from ..check.reductions import notes_of

    rate = result.states / result.seconds if result.seconds > 0 else None
    out = {
        "algorithm": config.algorithm,
        "processes": config.processes,
        "options": config.options,
        "seed": config.seed,
        "search": result.search,
        "reductions": model.reductions if model is not None else [],
        "reduction_notes": [n.as_dict() for n in notes_of(model)] if model is not None else [],
        "partial_order_dropped": model is not None and model.por_dropped,
        "endless": config.endless,
        "reorder": config.reorder,
        "duplicate": config.duplicate,
        "states": result.states,
        "transitions": result.transitions,
        "depth": result.depth,
        "final_worlds": result.finals,
        "seconds": round(result.seconds, 3),
        "states_per_second": round(rate) if rate else None,
        "peak_mb": round(result.peak_mb, 1),
        "complete": result.complete,
        "verdict": result.verdict,
        "stopped": result.stopped,
        "cycles": result.cycles,
        "fingerprints": "exact" if result.exact else "64-bit",
        "collision_bound": result.collision_bound,
        "properties": properties_checked(model),
        "findings": [f.as_dict(model) for f in result.findings],
    }
    if model is not None and model.setup.params.get("plan"):  # the elves' contracts: --seed drew them
        out["plan"] = model.setup.params["plan"]
    if result.refusal is not None:  # a refused step, taken as a dead end: what it leaves unchecked
        out["refused"] = result.refusal
        out["refused_steps"] = result.refusals
        out["not_checked"] = refused_unchecked(result)
    if scenario_path:
        out["counterexample"] = str(scenario_path)
        out["reproduced"] = reproduced
    if cross is not None:
        out["cross_check"] = cross.as_dict()
        if cross.agrees is False:
            out["verdict_with_reductions"] = result.verdict
            if cross.unsound and cross.plain is not None and cross.plain_model is not None:
                # the reductions were unsound for this code: the search without them stands
                plain = cross.plain
                out["verdict"] = plain.verdict
                out["complete"], out["stopped"], out["cycles"] = plain.complete, plain.stopped, plain.cycles
                out["findings_with_reductions"] = out["findings"]
                out["findings"] = [f.as_dict(cross.plain_model) for f in plain.findings]
            else:  # the plain search missed a finding that replays: never a verdict on the protocol
                out["verdict"] = "tool-error"
    return out


def notes_lines(notes: list[dict]) -> list[str]:
    """What each reduction did and why (nothing under --no-reduction: the first line says none)."""
    if any(n["reduction"] == "every reduction" for n in notes):
        return []
    lines = []
    for applied, label in ((True, "applied:"), (False, "not applied:")):
        chosen = [n for n in notes if n["applied"] is applied]
        for k, n in enumerate(chosen):
            lines.append(f"{label if k == 0 else '':<14}{n['reduction']} — {n['why']}")
    return lines


def render(s: dict) -> str:
    lines = [
        f"{registry.shown(s['algorithm'])}: {s['processes']} processes, "
        + settings(s["options"])
        + f", seed {s['seed']}"
        + (", endless requests" if s["endless"] else "")
        + (", links reorder" if s["reorder"] else "")
        + (f", up to {count(s['duplicate'], 'duplicate')} per message" if s["duplicate"] else "")
        + f" — {'depth' if s['search'] == 'dfs' else 'breadth'}-first, reductions: "
        + (", ".join(s["reductions"]) or "none")
        + (
            " (partial-order reduction dropped: the reduced graph has a cycle, searched again in full)"
            if s["partial_order_dropped"]
            else ""
        ),
        *plan_lines(s.get("plan") or []),  # the elves' contracts its seed drew
        f"states:       {s['states']:,}",
        f"transitions:  {s['transitions']:,}",
        f"depth:        {s['depth']}",
        f"time:         {s['seconds']:.2f} s"
        + (f" ({s['states_per_second']:,} states/s)" if s["states_per_second"] else ""),
        f"peak memory:  {s['peak_mb']:.0f} MB",
        f"worlds kept:  {s['fingerprints']} fingerprints"
        + (
            f" (probability of a collision < {s['collision_bound']:.0e})"
            if s["fingerprints"] != "exact"
            else ""
        ),
        "checked:      "
        + (", ".join(s["properties"]) or "nothing (stopped before the first world)")
        + (" — short of the refused steps (refused: below)" if s.get("refused") else ""),
        *notes_lines(s["reduction_notes"]),
    ]
    unsound = bool(s.get("cross_check", {}).get("reductions_unsound"))
    verdict = s["verdict"] if unsound else s.get("verdict_with_reductions", s["verdict"])
    if unsound:
        lines.append(
            "reductions:   UNSOUND for this code (cross-check below): the verdict is the search's "
            "without reductions"
        )
    if s["verdict"] == "tool-error":
        lines.append(
            "verdict:      TOOL ERROR — the searches with and without reductions disagree (cross-check "
            "below): nothing is proven"
        )
    elif verdict == "pass":
        lines.append(
            "verdict:      PASS — every reachable world checked, nothing found"
            + ("" if s["cycles"] else " (no cycles: every run ends)")
        )
    elif verdict == "incomplete":
        lines.append(f"verdict:      INCOMPLETE — {s['stopped']}: nothing is proven")
    elif verdict == "refused":
        lines.append(
            "verdict:      REFUSED (exit 2) — a step leaves a state of no name; no violation found "
            "in the worlds before it: nothing is proven"
        )
    if s["findings"]:
        f = s["findings"][0]
        if s["verdict"] in ("violation", "not-judged"):
            judged = "VIOLATION" if s["verdict"] == "violation" else "NOT JUDGED (exit 2)"
            lines.append(f"verdict:      {judged} — {f['kind']}: {f['message']}")
        else:
            lines.append(f"with reductions: {f['kind']}: {f['message']}")
        steps = f["steps"]
        lines.append(f"path ({count(len(steps), 'step')}):")
        lines += [f"  {n:>3}. {step}" for n, step in enumerate(steps, 1)]
        if f.get("cycle"):
            lines.append(f"then forever ({count(len(f['cycle']), 'step')}):")
            lines += [f"  {n:>3}. {step}" for n, step in enumerate(f["cycle"], 1)]
        if f.get("unexplained"):
            lines.append(f"{cannot(f['kind'])}: {f['unexplained']}. {WaitsRaised.ADVICE}")
    if s.get("refused"):
        lines.append(
            f"refused:      {s['refused']} ({count(s['refused_steps'], 'refused step')}: each a dead end, "
            f"the search went on past it; not checked: {'; '.join(s['not_checked'])})"
        )
    if s.get("counterexample"):
        lines.append(
            f"counterexample {'of ' + s['counterexample_of'] + ' ' if s.get('counterexample_of') else ''}"
            f"written to {s['counterexample']} "
            f"(replay reproduces it: {'yes' if s['reproduced'][0] else 'NO'} — {s['reproduced'][1]})"
        )
    if s.get("cross_check") is not None:
        from ..check.cross import cross_words

        lines.append(cross_words(s["cross_check"]))
    return "\n".join(lines)


def run(args) -> int:
    from ..check.counterexample import reproduces, scenario_of, write_scenario
    from ..check.cross import cross_check
    from ..check.engine import run_check
    from ..check.largest import past_largest
    from ..check.sampling import Refused

    try:
        config = config_of(args)
        wrong = checkfigures.refused(args) or checkswarm.refused(args)
        if wrong:
            raise ConfigError(wrong)
        bound = checkbound.interpreter_bound(config)
        if bound is not None:
            return checkbound.report(args, config, bound)
        if args.swarm:
            return checkswarm.run(args, config)
        warning = past_largest(config.algorithm, config.processes, config.options)
        if warning is not None:
            print(warning, file=sys.stderr)
        progress = None if args.quiet else ProgressLine(sys.stderr.isatty())
        refused: dict[str, str] = {}
        while True:
            result, model = run_check(config, progress, refused=refused)
            try:
                judged = not result.findings or result.findings[0].unexplained is None
                metrics = (  # a stall not explained: nothing more is asked of the solution
                    checkfigures.run_metrics(args, config, result, model=model)
                    if args.metrics and judged
                    else None
                )
                break
            except Refused as no:  # the figures' search sampled what the check's did not: as the
                refused.update(no.refusals)  # check does, both search again without the reduction
        cross = cross_check(config, result, model) if args.cross_check and model and judged else None
    except ConfigError as exc:
        return fail(str(exc))
    # the finding to write: this search's, or the plain search's that this one missed
    shown, shown_model = result, model
    if (
        cross is not None
        and cross.plain is not None
        and cross.plain_model is not None
        and cross.plain.findings
        and (not result.findings or cross.unsound)
    ):
        shown, shown_model = cross.plain, cross.plain_model
    scenario_path, reproduced = None, None
    if shown.findings:  # also words each step (an overtake) for the summary
        assert shown_model is not None  # a finding comes from a search, so from a model
        finding = shown.findings[0]
        scenario = scenario_of(
            shown_model, finding, config.algorithm, config.processes, config.options, config.seed
        )
    if shown.findings and args.counterexample:
        try:
            scenario_path = write_scenario(scenario, args.counterexample)
        except OSError as exc:
            return fail(f"cannot write counterexample {args.counterexample}: {exc.strerror}")
        reproduced = reproduces(scenario, finding, config.solution)
    s = summary(config, result, model, scenario_path, reproduced, cross)
    if scenario_path and shown is not result:
        s["counterexample_of"] = "the search without reductions"
    if metrics is not None:
        s["metrics"] = metrics
    if args.json:
        print_json(s)
    else:
        print("\n".join([render(s), *(checkfigures.lines(metrics) if metrics is not None else [])]))
    if result.refusal is not None:  # on stderr too, as simulate says a refusal (beside a finding, or alone)
        said = "refused as well" if result.findings else "error"
        print(f"mutexlab: {said}: {result.refusal}", file=sys.stderr)
    if cross is not None and cross.agrees is False:
        if not cross.unsound or cross.plain is None:
            return EXIT_DISAGREE
        plain = cross.plain  # the reductions were unsound: the search without them stands
        if plain.findings or plain.refusal is not None:
            return EXIT_FINDING if plain.findings else EXIT_BAD
        return EXIT_PASS if plain.complete else EXIT_INCOMPLETE
    if result.findings:
        return EXIT_FINDING if judged else EXIT_BAD
    if result.refusal is not None:  # nothing found, a step refused: never a pass (as before, exit 2)
        return EXIT_BAD
    if cross is not None and cross.agrees is None:
        return EXIT_INCOMPLETE
    if metrics is not None and not metrics["complete"]:
        return EXIT_INCOMPLETE
    return EXIT_PASS if result.complete else EXIT_INCOMPLETE


COMMAND = Command(
    "check",
    "model-check a bounded workload: every interleaving, every world",
    """Explore every reachable world (every interleaving FIFO links and local decisions allow) and check
    capacities, the scenario's invariants, deadlock and liveness under weak fairness. Exit 0 complete and
    nothing found, 1 a finding, 2 bad arguments, 3 a limit stopped the search (incomplete), 4 --cross-check
    found the searches with and without reductions disagreeing (an error of the tool), 5 --swarm found
    nothing in its budget (never a pass).""",
    scenarios=tuple(
        scenario(f, f.check.help, run, _variant_arguments(f.check), f.check.description)
        if f.check is not None
        else scenario(
            f,
            f"{f.title}: {f.sizes}",
            run,
            _problem_arguments(f),
            f"Model-check {f.title}. Same configuration flags as `simulate {f.command}` (timing flags aside).",
        )
        for f in registry.families()
    ),
)
