"""A counterexample on a program: the steps that make it fail, saved as JSON and played again.

The file names the problem, its size and options, the seed, the faults, the program it was found
on (its command and a digest of the files it names), every step (``{"do": "deliver", "node": 2,
"id": "node-1#1"}``, ``{"do": "request", "node": 1}``) and a digest of every answer the nodes
gave; replaying it on that program plays the steps exactly and compares the answers: a step no
longer possible, or an answer that differs, is the program's nondeterminism, named by step and
node.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..limits import loads, read_file
from .judge import Finding
from .problem import MAX_NODES, has_role
from .search import Outcome, Settings
from .world import Action, Faults

KIND = "mutexlab-program-scenario"


class ScenarioFileError(ValueError):
    """A scenario file that cannot be used; the message names the file and what is wrong."""


@dataclass
class ProgramScenario:
    problem: str
    nodes: int
    requests: int
    options: dict[str, Any]
    seed: int
    faults: Faults
    program: list[str]
    steps: list[Action]
    answers: list[str]
    finding: dict[str, Any] | None
    files: str | None = None  # ``program_files`` when it was found (older scenarios: unknown)
    end_grace: float = 0.0  # its run's end waits this long for a node that ends (search.END_GRACE)


def program_files(argv: list[str]) -> str:
    """A digest of the files ``argv`` names — its executable (found on PATH) and every argument
    that is a file: a program fixed in place, run by the same command, is another program."""
    digest = hashlib.sha256()
    for n, arg in enumerate(argv):
        path = shutil.which(arg) if n == 0 and os.sep not in arg else arg
        if path and os.path.isfile(path):
            try:
                with open(path, "rb") as handle:
                    digest.update(f"{n}:{hashlib.file_digest(handle, 'sha256').hexdigest()}\n".encode())
            except OSError:
                digest.update(f"{n}:unreadable\n".encode())
    return digest.hexdigest()[:16]


def is_program_scenario(path: str) -> bool:
    """Whether ``path`` holds a program scenario (a quick look at its first bytes)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return KIND.encode() in head


def to_dict(settings: Settings, outcome: Outcome, finding: Finding | None) -> dict[str, Any]:
    problem = settings.problem
    return {
        "kind": KIND,
        "problem": problem.name,
        "nodes": problem.nodes,
        "requests": problem.requests,
        "options": problem.given,
        "seed": settings.seed,
        "faults": {
            "reorder": settings.faults.reorder,
            "duplicate": settings.faults.duplicate,
            "crash": settings.faults.crash,
        },
        "program": settings.program,
        "files": program_files(settings.program),
        "finding": None if finding is None else {"rule": finding.rule, "message": finding.message},
        "steps": [_step(a) for a in outcome.steps],
        "answers": outcome.digests,
    } | ({"end_grace": settings.end_grace} if settings.end_grace else {})


def step_text(action: Action) -> str:
    """A step as a schedule shows it: ``deliver node-1#3→2``, ``wake 2``, ``linger 1`` (a linger's
    id says the rank's state, nothing a reader needs)."""
    kind, node, ident = action
    return f"{kind} {ident}→{node}" if ident and kind != "linger" else f"{kind} {node}"


def _step(action: Action) -> dict[str, Any]:
    kind, node, ident = action
    return {"do": kind, "node": node, **({"id": ident} if ident else {})}


def save(path: str, data: dict[str, Any]) -> None:
    """The scenario as JSON, one step and the answers on a line each (easy to read and to diff)."""
    head = {k: v for k, v in data.items() if k not in ("steps", "answers")}
    lines = ["{"] + [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    steps = [f"  {json.dumps(step)}" for step in data["steps"]]
    lines += [' "steps": [', ",\n".join(steps), " ],", f' "answers": {json.dumps(data["answers"])}', "}"]
    Path(path).write_text("\n".join(line for line in lines if line) + "\n", encoding="utf-8")


def _within(steps: list[Action], problem: str, nodes: int) -> None:
    """ValueError when a step names a node the run does not have (by itself, or as its message's
    sender): the file is wrong, not the program (else the replay called it nondeterministic)."""
    lowest = 0 if has_role(problem) else 1
    for n, (kind, node, ident) in enumerate(steps, 1):
        if not lowest <= node <= nodes:
            raise ValueError(
                f"step {n} ({kind} by node {node}) names a node the run of {nodes} does not have"
            )
        sender = re.fullmatch(r".*-(\d+)#\d+", ident) if kind in ("deliver", "land", "duplicate") else None
        if sender is not None and not lowest <= int(sender.group(1)) <= nodes:
            raise ValueError(f"step {n} ({kind} {ident}) names a sender the run of {nodes} does not have")


def load(path: str) -> ProgramScenario:
    try:
        data = loads(read_file(path, "a scenario"))
    except (OSError, ValueError) as exc:
        raise ScenarioFileError(f"{path}: cannot read the scenario: {exc}") from None
    try:
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if data.get("kind") != KIND:
            raise ValueError(f"not a program scenario (kind {data.get('kind')!r})")
        steps = []
        for field in ("steps", "problem", "nodes"):
            if field not in data:
                raise ValueError(f"it has no {field!r}")
        if (
            isinstance(data["nodes"], bool)
            or not isinstance(data["nodes"], int)
            or not 1 <= data["nodes"] <= MAX_NODES
        ):
            raise ValueError(
                f"its 'nodes' ({data['nodes']!r:.20}) are not a whole number from 1 to {MAX_NODES}"
            )
        if not isinstance(data["steps"], list):
            raise ValueError("its 'steps' are not a list")
        for n, step in enumerate(data["steps"], 1):
            if not isinstance(step, dict) or "do" not in step or "node" not in step:
                raise ValueError(f"step {n} is not a step (an object with 'do' and 'node'): {step!r:.80}")
            kind, node, ident = step["do"], step["node"], step.get("id", "")
            if kind not in (
                "request",
                "release",
                "deliver",
                "land",
                "duplicate",
                "crash",
                "wake",
                "linger",
            ) or not isinstance(node, int):
                raise ValueError(f"step {n} is not a step: {step!r}")
            steps.append((kind, node, str(ident)))
        _within(steps, str(data["problem"]), data["nodes"])
        faults = data.get("faults") or {}
        finding = data.get("finding")
        if finding is not None and not (
            isinstance(finding, dict)
            and all(isinstance(finding.get(k, ""), str) for k in ("rule", "message"))
        ):
            raise ValueError(f"its finding is not a rule and a message: {finding!r:.80}")
        return ProgramScenario(
            str(data["problem"]),
            int(data["nodes"]),
            int(data.get("requests", 0)),
            dict(data.get("options") or {}),
            int(data.get("seed", 0)),
            Faults(
                bool(faults.get("reorder", False)),
                int(faults.get("duplicate", 0)),
                int(faults.get("crash", 0)),
            ),
            [str(a) for a in data.get("program") or []],
            steps,
            [str(d) for d in data.get("answers") or []],
            finding,
            None if data.get("files") is None else str(data["files"]),
            float(data.get("end_grace", 0.0)),
        )
    except KeyError as exc:
        raise ScenarioFileError(f"{path}: malformed scenario: a field is missing: {exc}") from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise ScenarioFileError(f"{path}: malformed scenario: {exc}") from None
