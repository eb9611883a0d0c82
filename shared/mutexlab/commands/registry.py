"""How a ``mutexlab`` subcommand is declared: one ``Command`` per parser, and the one function
that turns the declarations into argparse parsers.

Each command module ends with ``COMMAND = Command(...)``: the name, the one-line help, the
description, its handler and a function adding its flags. A command with one subcommand per
family (``simulate``, ``run``, ``explore``, ``check``) declares them in ``scenarios``, made from
the registered families (``family_scenarios``): each gets its family's configuration flags first
(``flags.add_family_arguments``, an argparse parent parser, with the defaults the spec gives that
command) and finds ``flags``, ``family`` (the subcommand's name) and ``scenario_config(args)`` in
its parsed arguments.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..protocols import registry
from ..spec import Flags
from .flags import add_family_arguments, as_workload, parent, scenario_config


@dataclass(frozen=True)
class Command:
    """One parser: ``add_parser(name, help=help, description=description)``, then
    ``arguments(parser)`` and ``func=run``; or, with ``scenarios``, a group of subcommands."""

    name: str
    help: str
    description: str | None = None
    run: Callable[[argparse.Namespace], int] | None = None
    arguments: Callable[[argparse.ArgumentParser], None] | None = None
    flags: Flags | None = None  # a family's: its configuration flags come first
    family_options: Mapping = field(default_factory=dict)  # the family's flags' defaults here; choose=False
    scenarios: tuple[Command, ...] = ()
    dest: str = "scenario"  # with scenarios: the attribute naming the one chosen


def add_command(sub, command: Command, within: str | None = None, only: str | None = None) -> None:
    """Add ``command`` (and its scenarios) to ``sub``, an ``add_subparsers()`` result; ``within``:
    the command whose scenario it is (its family's defaults there apply). ``only``: when it names
    one of the scenarios, that one's parser in full and the others' as bare names (with their help),
    so that a command imports no other family's solutions (``--help`` of the command builds all)."""
    parents, defaults = [], {}
    if command.flags is not None:
        options = dict(command.family_options)
        choose = options.pop("choose", True)
        overrides = {**options.pop("defaults", {}), **options}
        overrides.pop("modules", None)  # every command takes modules and files now
        parents.append(parent(add_family_arguments, command.flags, within or command.name, overrides, choose))
        defaults = {
            "family": command.flags.command,
            "flags": command.flags,
            "scenario_config": scenario_config,
        }
    parser = sub.add_parser(command.name, parents=parents, help=command.help, description=command.description)
    if command.scenarios:
        group = parser.add_subparsers(dest=command.dest, metavar="PROBLEM", required=True)
        whole = only not in {scenario.name for scenario in command.scenarios}
        for scenario in command.scenarios:
            if whole or scenario.name == only:
                add_command(group, scenario, command.name)
            else:
                group.add_parser(scenario.name, help=scenario.help)
        return
    if command.arguments is not None:
        command.arguments(parser)
    if defaults and parser.get_default("unknown_hint") is None:  # unless the command has its own
        defaults["unknown_hint"] = as_workload  # test's --requests given here: the family's own flag
    parser.set_defaults(func=command.run, **defaults)


def family_of_command(name: str) -> Flags:
    """The registered family whose subcommand is ``name``."""
    return next(f for f in registry.families() if f.command == name)


def scenario(
    family: str | Flags, help: str, run, arguments=None, description=None, **family_options
) -> Command:
    """The subcommand of a family (``run <family's command>``): a ``Command`` with that family's
    flags, given ``family_options`` (``nodes=5`` ...)."""
    flags = family if isinstance(family, Flags) else family_of_command(family)
    return Command(
        flags.command, help, description, run, arguments, flags=flags, family_options=family_options
    )


def family_scenarios(
    run,
    arguments: Callable[[Flags], Callable[[argparse.ArgumentParser], None]],
    help: Callable[[Flags], str] = lambda f: f"{f.title}: {f.sizes}",
    description: Callable[[Flags], str | None] = lambda f: None,
) -> tuple[Command, ...]:
    """One subcommand per registered family, in the registry's order."""
    return tuple(scenario(f, help(f), run, arguments(f), description(f)) for f in registry.families())
