"""How a ``mutexlab`` subcommand is declared: one ``Command`` per parser, and the one function
that turns the declarations into argparse parsers.

Each command module ends with ``COMMAND = Command(...)``: the name, the one-line help, the
description, its handler and a function adding its flags. A command with one subcommand per
scenario (``simulate``, ``run``, ``explore``, ``check``) declares them in ``scenarios``; a
scenario of a family (``bees``, ``elves``, ``mutex``) gets that family's configuration flags
first (``flags.FAMILIES``, an argparse parent parser) and finds ``family`` and the family's
``scenario_config(args)`` in its parsed arguments.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .flags import FAMILIES, parent


@dataclass(frozen=True)
class Command:
    """One parser: ``add_parser(name, help=help, description=description)``, then
    ``arguments(parser)`` and ``func=run``; or, with ``scenarios``, a group of subcommands."""

    name: str
    help: str
    description: str | None = None
    run: Callable[[argparse.Namespace], int] | None = None
    arguments: Callable[[argparse.ArgumentParser], None] | None = None
    family: str | None = None  # bees, elves or mutex: that family's configuration flags come first
    family_options: Mapping = field(default_factory=dict)  # what the family's flags take (defaults ...)
    scenarios: tuple[Command, ...] = ()
    dest: str = "scenario"  # with scenarios: the attribute naming the one chosen


def add_command(sub, command: Command) -> None:
    """Add ``command`` (and its scenarios) to ``sub``, an ``add_subparsers()`` result."""
    parents, defaults = [], {}
    if command.family is not None:
        family = FAMILIES[command.family]
        parents.append(parent(family.add_arguments, **command.family_options))
        defaults = {"family": command.family, "scenario_config": family.config}
    parser = sub.add_parser(command.name, parents=parents, help=command.help, description=command.description)
    if command.scenarios:
        group = parser.add_subparsers(dest=command.dest, metavar="SCENARIO", required=True)
        for scenario in command.scenarios:
            add_command(group, scenario)
        return
    if command.arguments is not None:
        command.arguments(parser)
    parser.set_defaults(func=command.run, **defaults)


def scenario(family: str, help: str, run, arguments=None, description=None, **family_options) -> Command:
    """The subcommand named after its scenario family (``run bees``): a ``Command`` with that
    family's flags, given ``family_options`` (``nodes=5`` ...)."""
    return Command(family, help, description, run, arguments, family=family, family_options=family_options)
