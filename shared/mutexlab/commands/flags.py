"""The configuration flags of each algorithm family, declared once for every command.

``simulate``, ``run``, ``explore`` and ``check`` (and any later command that takes a scenario)
get a family's flags from ``FAMILIES[family]`` as an argparse parent parser (``registry.Command``
with ``family``) and turn the parsed arguments into a ``Scenario`` with its ``config(args)``: what
``make_setup(algorithm, processes, options, seed)`` takes. One declaration per flag, so a flag
has the same type and validation in every command; a flag a command does not give a value
stays out of ``options`` and ``make_setup``'s default applies.

Timing flags (``--work``, ``--think`` ...) are not configuration: they mean virtual time in the
simulator and seconds over RabbitMQ, so each command declares its own.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import limits
from ..protocols.classic import WORKLOAD_OPTIONS
from ..protocols.elves import DEFAULTS as ELVES_DEFAULTS
from ..protocols.elves import hamster_range
from ..protocols.registry import CLASSIC, SPECS
from ..setup import ConfigError
from .common import non_negative, positive, seconds


@dataclass(frozen=True)
class Scenario:
    """One algorithm's configuration: ``make_setup(algorithm, processes, options, seed)``."""

    algorithm: str
    processes: int
    options: dict


def parent(add_arguments: Callable[..., None], **kwargs) -> argparse.ArgumentParser:
    """An argparse parent parser (``add_parser(..., parents=[...])``) holding the flags
    ``add_arguments(parser, **kwargs)`` declares."""
    holder = argparse.ArgumentParser(add_help=False)
    add_arguments(holder, **kwargs)
    return holder


# -- bees ------------------------------------------------------------------------------------
BEES_DEFAULTS = {"bees": 10, "flowers": 3, "reeds": 3, "eggs": 5, "cocoons": 15}


@dataclass(frozen=True)
class Flag:
    """One configuration flag: ``--<key with dashes>``, its help before ``(default …)``."""

    key: str
    help: str
    metavar: str | None = None
    short: str | None = None
    type: Callable[[str], Any] = positive


def shown(value: Any) -> str:
    """A default as the help shows it: a range ``[1, 3]`` as ``1-3``."""
    return "-".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def add_flags(parser, flags: list[Flag], shown_defaults: dict, defaults: dict) -> None:
    """Declare ``flags``: each defaults to ``defaults.get(key)``; its help names ``shown_defaults[key]``."""
    for flag in flags:
        names = [f"--{flag.key.replace('_', '-')}"] + ([flag.short] if flag.short else [])
        parser.add_argument(
            *names,
            type=flag.type,
            default=defaults.get(flag.key),
            metavar=flag.metavar,
            help=f"{flag.help} (default {shown(shown_defaults[flag.key])})",
        )


BEES_FLAGS = [
    Flag("bees", "number of bees", "P", "-P"),
    Flag("flowers", "number of flowers", "K", "-K"),
    Flag("reeds", "number of reeds", "T", "-T"),
    Flag("eggs", "eggs per bee"),
    Flag("cocoons", "cocoons per reed, a multiple of --eggs"),
]


def add_bees_arguments(parser, defaults: dict | None = None) -> None:
    """The bees' flags; ``defaults`` replaces the simulator's defaults (``check`` starts small)."""
    d = {**BEES_DEFAULTS, **(defaults or {})}
    add_flags(parser, BEES_FLAGS, d, d)


def bees_config(args) -> Scenario:
    return Scenario(
        "bees",
        args.bees,
        {"flowers": args.flowers, "reeds": args.reeds, "eggs": args.eggs, "cocoons": args.cocoons},
    )


# -- elves -----------------------------------------------------------------------------------
def hamsters(text: str) -> list[int]:
    """An argparse type: ``MIN-MAX`` (or one number) hamsters per contract → [min, max]."""
    try:
        low, high = hamster_range(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return [low, high]


ELVES_FLAGS = [
    Flag("elves", "number of elves", "N", "-N"),
    Flag("pins", "safety pins in town", "A"),
    Flag("poison", "poison portions", "B"),
    Flag("contracts", "contracts per round", "C"),
    Flag("hamsters", "hamsters per contract, drawn by the mayor", "MIN-MAX", type=hamsters),
    Flag("rounds", "rounds", "R"),
    Flag("pins_per_elf", "pins an elf needs for any contract", "K"),
    Flag("poison_per_hamster", "poison portions per hamster", "K"),
]


def add_elves_arguments(parser, defaults: dict | None = None) -> None:
    """Every option but ``--elves`` defaults to None, so ``make_setup``'s default (the help's)
    applies; ``defaults`` sets others explicitly (``check`` starts small)."""
    given = dict(defaults or {})
    d = {**ELVES_DEFAULTS, "elves": 4, **given}
    add_flags(parser, ELVES_FLAGS, d, {**given, "elves": d["elves"]})


def elves_config(args) -> Scenario:
    keys = ("rounds", "contracts", "pins", "poison", "pins_per_elf", "poison_per_hamster", "hamsters")
    return Scenario("elves", args.elves, {k: getattr(args, k) for k in keys if getattr(args, k) is not None})


# -- the classic algorithms ------------------------------------------------------------------
def algorithm_name(modules: bool = False) -> Callable[[str], str]:
    """An argparse type: a classic algorithm's name; with ``modules`` also a dotted module path
    offering ``make_setup`` (``run``'s experiments and deliberately broken variants)."""

    def parse(text: str) -> str:
        if text in CLASSIC or (modules and "." in text and all(p.isidentifier() for p in text.split("."))):
            return text
        raise argparse.ArgumentTypeError(
            f"invalid choice: {text!r} (choose from {', '.join(CLASSIC)}"
            + (", or a module path offering make_setup)" if modules else ")")
        )

    parse.__name__ = "algorithm"
    return parse


def own_options() -> str:
    """The option keys each classic algorithm adds to the shared workload ones (from its spec)."""
    own = {name: [k for k in SPECS[name].options if k not in WORKLOAD_OPTIONS] for name in CLASSIC}
    return "own keys: " + "; ".join(f"{name} {', '.join(keys)}" for name, keys in own.items() if keys)


def option_pair(text: str) -> tuple[str, object]:
    """``key=JSON`` → (key, value); a value that is not JSON is taken as a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=JSON, got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


def add_mutex_arguments(
    parser,
    *,
    algorithm: str | None = None,
    nodes: int | None = None,
    modules: bool = False,
    choose: bool = True,
    requests: int = 3,
) -> None:
    """``--algorithm``, ``--nodes``, ``--requests``, ``--option``, ``--options``. ``algorithm`` and
    ``nodes`` are the defaults (None: the flag is required); ``modules`` also accepts a module
    path for ``--algorithm``; ``choose=False`` leaves out the algorithm and its options (a
    command that runs every algorithm, such as ``compare``)."""
    if choose:
        parser.add_argument(
            "--algorithm",
            "-a",
            type=algorithm_name(modules),
            required=algorithm is None,
            default=algorithm,
            metavar="NAME",
            help="one of: "
            + ", ".join(CLASSIC)
            + (", or a module path offering make_setup" if modules else "")
            + (f" (default {algorithm})" if algorithm else ""),
        )
    parser.add_argument(
        "--nodes",
        "-N",
        type=positive,
        required=nodes is None,
        default=nodes,
        metavar="N",
        help="number of nodes" + (f" (default {nodes})" if nodes else ""),
    )
    parser.add_argument(
        "--requests",
        "-M",
        "-r",
        type=positive,
        default=requests,
        metavar="M",
        help=f"critical-section requests per node (default {requests})",
    )
    if choose:
        parser.add_argument(
            "--option",
            "-o",
            type=option_pair,
            action="append",
            metavar="KEY=JSON",
            help="an algorithm option, repeatable, e.g. -o token_holder=2 or "
            '-o \'parents={"2": 1, "3": 2}\'; ' + own_options(),
        )
        parser.add_argument(
            "--options", metavar="FILE.json", help="algorithm options from a JSON object file"
        )


# For the commands that run a classic algorithm without being told which (``run``, ``explore``):
# Ricart–Agrawala by default, and any module path offering make_setup.
MUTEX_EXAMPLE = {"algorithm": "ricart-agrawala", "modules": True}


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


def mutex_config(args, algorithm: str | None = None) -> Scenario:
    """The classic algorithm's configuration (``algorithm`` for a command without
    ``--algorithm``); ``options`` holds ``requests``. Raises ConfigError."""
    options = collect_options(args)
    if "requests" in options:
        raise ConfigError("give the number of requests with --requests, not as an option")
    return Scenario(algorithm or args.algorithm, args.nodes, {"requests": args.requests, **options})


@dataclass(frozen=True)
class Family:
    """A family's configuration flags (``add_arguments(parser, ...)``) and the ``Scenario`` they
    describe (``config(args)``)."""

    add_arguments: Callable[..., None]
    config: Callable[..., Scenario]


FAMILIES = {
    "bees": Family(add_bees_arguments, bees_config),
    "elves": Family(add_elves_arguments, elves_config),
    "mutex": Family(add_mutex_arguments, mutex_config),
}


# -- the simulator's workload (simulate mutex, compare) --------------------------------------
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


def add_workload_arguments(parser) -> None:
    add_simulator_arguments(parser, "random seed")
    add_dwell_arguments(
        parser,
        {
            "think": "mean think time before each request, in message delays",
            "cs": "mean time inside the critical section, in message delays",
        },
    )
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
