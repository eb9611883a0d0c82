"""The configuration flags of every family, declared once by its spec (``spec.Flags``), for every command.

``simulate``, ``run``, ``explore`` and ``check`` get a family's flags as an argparse parent parser
(``registry.Command`` with ``flags``) and turn the parsed arguments into a ``SetupArgs`` with
``scenario_config(args)``: what ``build_setup(algorithm, processes, options, seed)`` takes. One
declaration per flag, so a flag has the same type and validation in every command; a flag a
command does not give a value stays out of ``options`` and ``make_setup``'s default applies.

``--algorithm`` takes a registered name of the family, a dotted module or a ``.py`` file
(``protocols.registry.resolve``); a file is passed on as its absolute path.

Timing flags (``--work``, ``--think`` ...) are not configuration: they mean virtual time in the
simulator and seconds over RabbitMQ, so each command declares its own from the spec's ``dwell``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import limits
from ..protocols import registry
from ..setups import ConfigError
from ..spec import AlgorithmSpec, Flag, Flags
from .common import count, non_negative, positive, seconds


@dataclass(frozen=True)
class SetupArgs:
    """One algorithm's configuration: ``build_setup(algorithm, processes, options, seed)``."""

    algorithm: str
    processes: int
    options: dict


def parent(add_arguments: Callable[..., None], *args, **kwargs) -> argparse.ArgumentParser:
    """An argparse parent parser (``add_parser(..., parents=[...])``) holding the flags
    ``add_arguments(parser, *args, **kwargs)`` declares."""
    holder = argparse.ArgumentParser(add_help=False)
    add_arguments(holder, *args, **kwargs)
    return holder


def shown(value: Any) -> str:
    """A default as the help shows it: a range ``[1, 3]`` as ``1-3``."""
    return "-".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def flag_type(flag: Flag) -> Callable[[str], Any]:
    """The argparse type of ``flag``: a whole number ≥ 1, or its own parser (a ValueError's
    message is the error argparse shows)."""
    read = flag.parse
    if read is None:
        return positive

    def parse(text: str) -> Any:
        try:
            return read(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = flag.key
    return parse


def algorithm_name(names: list[str]) -> Callable[[str], str]:
    """An argparse type: one of ``names``, a dotted module, or a ``.py`` file (its absolute path)."""

    def parse(text: str) -> str:
        if text in names:
            return text
        if registry.is_file(text):
            return registry.canonical(text)
        if registry.is_module(text) and text not in registry.SPECS:
            return text
        built_in = f"choose from {', '.join(names)}, or " if names else "no algorithm is built in: "
        raise argparse.ArgumentTypeError(
            f"invalid choice: {text!r} ({built_in}a dotted module or .py file declaring SPEC)"
        )

    parse.__name__ = "algorithm"
    return parse


def own_options(flags: Flags) -> str:
    """The option keys each algorithm of ``flags`` adds to those they all take (from their specs)."""
    specs = [registry.SPECS[name] for name in registry.members(flags)]
    shared = set.intersection(*(set(s.options) for s in specs)) if specs else set()
    own = {s.name: [k for k in s.options if k not in shared] for s in specs}
    listed = "; ".join(f"{name} {', '.join(keys)}" for name, keys in own.items() if keys)
    return f"own keys: {listed}" if listed else "a solution's own keys"


def option_pair(text: str) -> tuple[str, object]:
    """``key=JSON`` → (key, value); a value that is not JSON is taken as a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=JSON, got {text!r}")
    try:
        value = json.loads(raw, object_pairs_hook=limits.unique_keys)
    except limits.InputError as exc:  # JSON, but not what it seems: never taken as a string
        raise argparse.ArgumentTypeError(f"{key.strip()}={raw[:80]}: {exc}") from None
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


def parse_options(given: list[str]) -> dict[str, Any]:
    """``test``'s ``--option KEY=JSON`` values (a value that is no JSON is taken as a string; JSON
    with a key twice in one object is refused, ConfigError)."""
    options: dict[str, Any] = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--option {item!r}: expected KEY=JSON")
        try:
            options[key] = json.loads(value, object_pairs_hook=limits.unique_keys)
        except limits.InputError as exc:
            raise ConfigError(f"--option {key}: {exc}") from None
        except ValueError:
            options[key] = value
    return options


def add_family_arguments(
    parser, flags: Flags, command: str, overrides: Mapping[str, Any] | None = None, choose: bool = True
) -> None:
    """``--algorithm`` (with ``choose``), ``flags``' flags, and with ``free_options`` (and
    ``choose``) ``--option``/``--options``. Each takes its default in ``command`` (``overrides``
    first); one without a default is required."""
    overrides = dict(overrides or {})

    def default(key: str) -> tuple[bool, Any]:
        return (True, overrides[key]) if key in overrides else flags.default(command, key)

    names = registry.members(flags)
    if choose:
        has, value = default("algorithm")
        if not has:
            value = registry.default_solution(flags, command)
            has = value is not None
        parser.add_argument(
            "--algorithm",
            "-a",
            type=algorithm_name(names),
            required=not has,
            default=value,
            metavar="NAME",
            help=("one of: " + ", ".join(names) + "; or a" if names else "a")
            + " dotted module or a .py file declaring SPEC"
            + (f" (default {value})" if has and value is not None else ""),
        )
    for flag in flags.flags:
        has, value = default(flag.key)
        named = value if value is not None else flags.shown.get(flag.key)
        parser.add_argument(
            f"--{flag.key.replace('_', '-')}",
            *flag.shorts,
            type=flag_type(flag),
            required=not has,
            default=value,
            metavar=flag.metavar,
            help=flag.help + (f" (default {shown(named)})" if has and named is not None else ""),
        )
    if choose and flags.free_options:
        parser.add_argument(
            "--option",
            "-o",
            type=option_pair,
            action="append",
            metavar="KEY=JSON",
            help="an algorithm option, repeatable, e.g. -o token_holder=2 or "
            '-o \'parents={"2": 1, "3": 2}\'; ' + own_options(flags),
        )
        parser.add_argument(
            "--options", metavar="FILE.json", help="algorithm options from a JSON object file"
        )


def collect_options(args) -> dict:
    """``--options FILE`` first, then each ``--option key=JSON`` on top. Raises ConfigError."""
    options: dict = {}
    if getattr(args, "options", None):
        try:
            loaded = limits.loads(limits.read_file(args.options, "an options file"))
        except OSError as exc:
            raise ConfigError(f"cannot read options file {args.options}: {exc.strerror or exc}") from None
        except limits.InputError as exc:
            raise ConfigError(f"options file {args.options}: {exc}") from None
        except ValueError as exc:  # not JSON, not UTF-8
            raise ConfigError(f"options file {args.options} is not JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"options file {args.options} must hold a JSON object")
        options.update(loaded)
    for key, value in getattr(args, "option", None) or []:
        options[key] = value
    return options


def scenario_config(args) -> SetupArgs:
    """The configuration the family's flags describe: P from the first flag, the others' values
    (those given) as options, then ``--options``/``--option``. Raises ConfigError."""
    flags: Flags = args.flags
    options = {f.key: getattr(args, f.key) for f in flags.flags[1:] if getattr(args, f.key, None) is not None}
    if flags.free_options:
        for key, value in collect_options(args).items():
            # a flag's key, whatever its case or dashes (-o K=2, -o initial-clocks): the flag's spelling
            flag = next((f for f in flags.flags if f.key == key.lower().replace("-", "_")), None)
            if flag is not None:
                raise ConfigError(
                    f"give the number of {flag.key} with --{flag.key.replace('_', '-')}, not as an option"
                )
            options[key] = value
    return SetupArgs(args.algorithm, getattr(args, flags.flags[0].key), options)


def resolved(args, scenario: SetupArgs, command: str) -> registry.Solution:
    """The scenario's solution (``registry.solution``: resolved once, here, at the command's edge,
    and passed down), which ``command``'s subcommand must present. Raises ConfigError."""
    solution = registry.solution(scenario.algorithm)
    found, said = solution.spec, registry.shown(scenario.algorithm)
    flags = registry.flags_of(found)
    if all(flags is not f for f in registry.families()):
        raise ConfigError(
            f"{said} declares {found.name} with flags of its own (`{flags.command}`), which no "
            f"command presents: give its SPEC the flags of one of {', '.join(f.command for f in registry.families())}"
        )
    if flags is not args.flags:
        raise ConfigError(
            f"{said} declares {found.name}, {flags.title}: "
            f"run it with `mutexlab {command} {flags.command} --algorithm {said}`"
        )
    return solution


# -- the algorithm a trace or scenario names (verify, report, replay) -----------------------------
def add_algorithm_argument(parser, what: str) -> None:
    parser.add_argument(
        "--algorithm",
        "-a",
        metavar="FILE",
        help=f"the dotted module or .py file that declares the algorithm {what} names, when it is not "
        "built in (without it, such a trace cannot be checked for that algorithm's own invariants)",
    )


def named_algorithm(args) -> AlgorithmSpec | None:
    """The spec ``--algorithm`` names, loaded (a trace naming it is then checked as it), or None.
    Raises ConfigError."""
    return registry.solution(registry.canonical(args.algorithm)).spec if args.algorithm else None


def disagreement(found: AlgorithmSpec | None, named: str | None, given: str, what: str) -> str | None:
    """The error when ``--algorithm`` (``given``, declaring ``found``) is not the algorithm ``what``
    names (``named``), else None."""
    if found is None or named in (found.name, given, registry.canonical(given)):
        return None
    said = registry.shown(named) if named else named  # a file as the user would type it here
    return f"{what} is of the algorithm {said!r}, but {registry.shown(given)} declares {found.name!r}"


# -- the simulator's settings (simulate, compare) --------------------------------------------
def add_simulator_arguments(parser, seed: str) -> None:
    """``--seed`` (``seed``: what it draws) and ``--delay``: what every simulation takes."""
    parser.add_argument("--seed", type=non_negative, default=0, help=f"{seed} (default 0)")
    parser.add_argument(
        "--delay",
        choices=("exp", "uniform", "fixed"),
        default="exp",
        help="message delay model, mean 1 (default exp)",
    )


def add_dwell_arguments(parser, helps: dict[str, str]) -> None:
    """A mean dwell time per kind, in virtual time, default 1: ``--<kind>`` for each kind → help."""
    for kind, help in helps.items():
        parser.add_argument(
            f"--{kind}", type=seconds, default=1.0, metavar="MEAN", help=f"{help} (default 1)"
        )


def as_option(args, unknown: list[str]) -> str:
    """``test kmutex -k 2``, ``compare … -k 3``: a problem's own flag (``simulate``'s and
    ``run``'s ``-k``/``--k``) is an option to a command taking one set of flags for every
    problem, ``-o k=2``: said so, naming that spelling (``test``'s problem's flags, or any
    family's); its workload flag (``--meals``) is ``--requests`` there."""
    problem = getattr(args, "problem", None)
    families = [f for f in registry.families() if problem in (None, f.command)]
    said = []
    for at, token in enumerate(unknown):
        name, _, value = token.partition("=")
        found = next(
            (
                (fl, f)
                for fl in families
                for f in fl.flags[1:]
                if name in (f"--{f.key.replace('_', '-')}", *f.shorts)
            ),
            None,
        )
        if found is None:
            continue
        family, flag = found
        value = value or (unknown[at + 1] if at + 1 < len(unknown) else flag.metavar or "VALUE")
        workload = flag.key == _workload(family)
        whose = (
            family.command
            + ("' " if family.command.endswith("s") else "'s ")
            + ("workload" if workload else f"option {flag.key}")
        )
        right = f"--requests {value}" if workload else f"-o {flag.key}={value}"
        said.append(f"; {name} is {whose} here: {right}")
    return "".join(said)


def as_workload(args, unknown: list[str]) -> str:
    """``run philosophers --requests 2``: ``test``'s workload flag given to a family's own
    command, whose workload flag has its own name there (``--meals``): said so, naming it."""
    family = getattr(args, "flags", None)
    key = None if family is None else _workload(family)
    if family is None or key is None or key == "requests":
        return ""
    for at, token in enumerate(unknown):
        name, _, value = token.partition("=")
        if name in ("--requests", "-R"):
            value = value or (unknown[at + 1] if at + 1 < len(unknown) else "N")
            whose = family.command + ("' " if family.command.endswith("s") else "'s ")
            return f"; {name} is {whose}workload here: --{key.replace('_', '-')} {value}"
    return ""


def as_program(args, unknown: list[str]) -> str:
    """``test -a FILE``: ``test`` runs a program, it takes no algorithm: said so, with what to
    write instead (``--node CMD``; ``check -a FILE`` for an algorithm's Python file); then
    ``as_option``'s word on a problem's own flags."""
    from ..director.problem import choices

    said = as_option(args, unknown)
    for at, token in enumerate(unknown):
        name, _, value = token.partition("=")
        glued = name.startswith("-a") and not name.startswith("-a-") and len(name) > 2  # -aFILE
        if name not in ("-a", "--algorithm") and not glued:
            continue
        value = name[2:] if glued else value
        problem = getattr(args, "problem", None)
        named = problem if problem in choices() else None  # `test -a FILE`: FILE taken for it
        if not value:
            value = unknown[at + 1] if at + 1 < len(unknown) else str(problem or "" if named is None else "")
        file = str(value or "FILE")
        command = f"python3 {file}" if file.endswith(".py") else file
        said += (
            f"; {'-a' if glued else name} is no flag of test: it tests a program, not an algorithm — "
            f"write `mutexlab test {named or 'PROBLEM'} --node '{command}'` (docs/test-any-program.md)"
        )
        if file.endswith(".py"):
            said += (
                f"; an algorithm in Python is checked with `mutexlab check {named or 'PROBLEM'} -a {file}`"
            )
        break
    return said


def _workload(family: Flags) -> str | None:
    problem = registry.presented(family)
    return None if problem is None else problem.endless


def entries(text: str) -> int | list[int]:
    """``--entries``: K (each rank K times, K ≥ 1) or K0,K1,… (rank by rank, each ≥ 0, one ≥ 1)."""
    if "," not in text:
        return count(1)(text)
    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 0 or max(counts) < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give K (each rank enters K times) or K0,K1,… one whole number per rank, one of them ≥ 1"
        )
    return counts
