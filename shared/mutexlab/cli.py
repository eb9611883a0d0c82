"""The ``mutexlab`` command. Each subcommand lives in ``mutexlab.commands.<name>``, declared
there as ``COMMAND`` (``commands.registry.Command``); its handler returns the exit code (0
fine, 1 a violation or failed run, 2 bad input). What reaches ``main`` uncaught: a refused input
or a handler of the algorithm that raised is a finding (exit 1, never a traceback); anything else
is a bug of mutexlab (exit 4, "internal error", with its traceback for the report)."""

from __future__ import annotations

import argparse
import atexit
import difflib
import gc
import importlib
import shlex
import sys
import time
import traceback

from . import __version__
from .commands.common import cut_short, said_seen, stdout_to_devnull
from .commands.registry import add_command
from .interrupts import Terminated
from .protocol import HandlerError, ProtocolError
from .setups import ConfigError, NoName

# The subcommands in the order help lists them: module ``mutexlab.commands.<name>`` each.
COMMANDS = (
    "simulate",
    "replay",
    "verify",
    "export",
    "run",
    "report",
    "compare",
    "explore",
    "check",
    "test",
    "tables",
    "mpicc",
    "mpicxx",
)
# Commands whose arguments are another program's (gcc's): passed on as given, not parsed.
RAW = ("mpicc", "mpicxx")


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors also name unknown flags: argparse stops at missing
    required arguments without a word about a mistyped flag beside them."""

    _tokens: list[str]  # the arguments of the last parse_known_args

    def parse_known_args(self, args=None, namespace=None):
        self._tokens = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def unknown_flags(self) -> list[str]:
        flags = self._option_string_actions
        found = []
        for token in getattr(self, "_tokens", []):
            if token == "--":
                break
            name = token.split("=", 1)[0]
            if not name.startswith("-") or name == "-" or self._negative_number_matcher.match(name):
                continue
            known = (
                name in flags
                or (name.startswith("--") and any(f.startswith(name) for f in flags))
                or (not name.startswith("--") and name[:2] in flags)
            )  # -N4, --bee (abbreviation)
            if not known:
                found.append(token)
        return found

    def close_flags(self, unknown: list[str], message: str) -> str:
        """``; did you mean --bees?``: this parser's long flags close to the misspelt ones in
        ``unknown`` (``--bes``), each a flag ``message`` does not explain already."""
        # compared without their "--": shared by every flag, it made `--pins` close to `--options`
        flags = [f[2:] for f in self._option_string_actions if f.startswith("--")]
        said = []
        for token in unknown:
            name = token.split("=", 1)[0]
            close = (
                difflib.get_close_matches(name[2:], flags, n=1, cutoff=0.75) if name.startswith("--") else []
            )
            if close and f"{name} is " not in message:
                said.append((name, f"--{close[0]}"))
        if not said:
            return ""
        if len(said) == 1:
            return f"; did you mean {said[0][1]}?"
        return "; did you mean " + ", ".join(f"{right} for {wrong}" for wrong, right in said) + "?"

    def error(self, message: str):
        unknown = self.unknown_flags()
        if unknown and "unrecognized arguments" not in message:
            message += f"; unrecognized arguments: {' '.join(unknown)}"
        given = message.partition("argument PROBLEM: invalid choice: '")[2].partition("'")[0]
        if given.endswith(".json") and self.prog == "mutexlab explore":  # a scenario where the problem goes
            from .commands.explore import problem_of_scenario

            message += (
                "; open a scenario file with --scenario after its problem: "
                f"mutexlab explore {problem_of_scenario(given)} --scenario {given}"
            )
        super().error(message + self.close_flags(unknown, message))


def build_parser(only: str | None = None, scenario: str | None = None) -> Parser:
    """The whole parser; with ``only`` (one of ``COMMANDS``) that command's parser in full and the
    others as bare names, so that a command imports none of the other commands' modules (``check``
    and ``run`` alone cost about 0.3 s of CPU at start-up); with ``scenario`` too (``run mutex``),
    that one of its subcommands in full (``registry.add_command``)."""
    parser = Parser(
        prog="mutexlab",
        description="Distributed mutual exclusion: simulate, replay, run over RabbitMQ, and audit.",
    )
    parser.add_argument("--version", action="version", version=f"mutexlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        if only is None or name == only:
            add_command(sub, importlib.import_module(f"{__package__}.commands.{name}").COMMAND, only=scenario)
        else:
            sub.add_parser(name)
    return parser


def chosen_command(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not a flag (the top level's own flags
    take no value), if that is a command."""
    first = next((token for token in argv if not token.startswith("-")), None)
    return first if first in COMMANDS else None


def chosen_scenario(argv: list[str], command: str | None) -> str | None:
    """The word right after ``command`` in ``argv`` (``run mutex``: ``mutex``), unless a flag: the
    scenario of a command with one subcommand per problem (any other command ignores it)."""
    if command is None or command not in argv:
        return None
    at = argv.index(command) + 1
    return argv[at] if at < len(argv) and not argv[at].startswith("-") else None


def subcommand_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the deepest subcommand ``args`` selected (``simulate bees`` → its own)."""
    while True:
        action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)  # noqa: SLF001 - argparse lists no subparsers publicly
        if action is None:
            return parser
        chosen = getattr(args, action.dest, None)
        if not isinstance(chosen, str) or chosen not in action.choices:
            return parser
        parser = action.choices[chosen]


# The commands with one subcommand per problem: ``mutexlab simulate FILE.py …`` implies it.
BY_PROBLEM = ("simulate", "run", "explore", "check")


def by_file(argv: list[str]) -> list[str]:
    """``mutexlab simulate ./solution.py …``: the file names the problem it solves, so the
    command is that problem's (``simulate philosophers --algorithm ./solution.py …``). Raises
    ConfigError when the file cannot be loaded."""
    if len(argv) < 2 or argv[0] not in BY_PROBLEM or not argv[1].endswith(".py"):
        return argv
    from .protocols import registry

    flags = registry.flags_of(registry.solution(registry.canonical(argv[1])).spec)
    return [argv[0], flags.command, "--algorithm", argv[1], *argv[2:]]


def left_behind(args: argparse.Namespace, since: float) -> str:
    """What an interrupted ``simulate`` or ``replay`` leaves: the ``--trace`` file it was writing
    since ``since`` (``commands.common.cut_short``), said after "interrupted"."""
    left = cut_short(args.trace, since) if args.command in ("simulate", "replay") else ""
    return f"; {left}" if left else ""


def main(argv: list[str] | None = None) -> int:
    started = time.time()
    if argv is None:  # the program itself, not a caller in this process
        # At exit the interpreter's last collection would go through every object the imports made
        # (0.06–0.25 s measured); frozen, they are skipped. Files and connections are closed explicitly.
        atexit.register(gc.freeze)
    given = sys.argv[1:] if argv is None else argv
    if given and given[0] in RAW:
        from .commands.mpicc import raw

        return raw(given[0], given[1:])
    try:
        implied = by_file(given)
    except ConfigError as exc:
        print(f"mutexlab: error: {exc}", file=sys.stderr)
        return 2
    if implied is not given:
        given = argv = implied
    command = chosen_command(given)
    parser = build_parser(command, chosen_scenario(given, command))
    if "--mpi" in given:  # ``test PROBLEM --mpi --np N ./program``: the options before the program
        from .commands.mpitest import options_first

        given = argv = options_first(parser, given)
    if not given:
        # Bare ``mutexlab``: what it can do, not argparse's "COMMAND is required".
        print(parser.format_help().rstrip(), file=sys.stderr)
        print("\nRun 'mutexlab COMMAND --help' for a command's options.", file=sys.stderr)
        return 2
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # argparse would blame the top-level parser and print its usage; a flag given after a
        # subcommand belongs to it, so its usage is the one that helps (exits 2).
        tokens = parser._tokens  # noqa: SLF001 - the tokens the parser kept for this
        before = tokens.index(unknown[0]) < tokens.index(args.command) if args.command in tokens else False
        hint = getattr(args, "unknown_hint", None)  # a command's word on what it was meant to be
        (parser if before else subcommand_parser(parser, args)).error(
            f"unrecognized arguments: {' '.join(unknown)}"
            + (hint(args, unknown) if hint and not before else "")
        )
    try:
        return int(args.func(args) or 0)
    except HandlerError as exc:  # the algorithm's code raised: a finding, the run stops here
        said_seen(exc, "a handler raised", getattr(args, "json", False), alone="handler-raised")
        print(f"mutexlab: finding: {exc.finding()}", file=sys.stderr)
        seed = getattr(args, "seed", None)
        if exc.scenario and isinstance(seed, int):
            again = given if "--seed" in given else [*given, "--seed", str(seed)]
            print(f"mutexlab: 'mutexlab {shlex.join(again)}' reaches it again", file=sys.stderr)
        return 1
    except ProtocolError as exc:  # a simulated process refused an input: the run stops here
        said_seen(exc, "an input was refused", getattr(args, "json", False), alone="rejected-input")
        print(f"mutexlab: protocol error: {exc}", file=sys.stderr)
        return 1
    except ConfigError as exc:  # found mid-run (a handler left a state of a plain Enum): exit 2
        alone = "refused" if isinstance(exc, NoName) else None  # a state of no name: a stop, in JSON too
        if said_seen(exc, stop_words(exc), getattr(args, "json", False), alone):
            print(f"mutexlab: {'refused' if alone else 'stopped'} as well: {exc}", file=sys.stderr)
            return 1  # the refusal never hides the violation seen before it
        print(f"mutexlab: error: {str(exc) or type(exc).__name__}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:
        print("interrupted" + left_behind(args, started), file=sys.stderr)
        return stop.code if isinstance(stop, Terminated) else 130  # 128 + the signal, as a shell says
    except BrokenPipeError:  # the reader went away (`| head`): what it did not read was no verdict
        stdout_to_devnull()
        return SIGPIPE_EXIT
    except Exception as exc:  # not the algorithm's: mutexlab's own code failed
        traceback.print_exc(file=sys.stderr)
        print(
            f"mutexlab: internal error (a bug in mutexlab, not in your algorithm): {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return 4


def stop_words(exc: ConfigError) -> str:
    """What stopped a run midway, in words: a state of no name as such; any other error by its own
    words (a ``waiting_for()`` that raised: which, and what it raised), never another's."""
    if isinstance(exc, NoName):
        return "a handler left a state of no name: refused"
    return getattr(exc, "short", None) or str(exc) or type(exc).__name__


SIGPIPE_EXIT = 141  # 128 + SIGPIPE, as a shell reports a command the signal ended; never 0


if __name__ == "__main__":
    sys.exit(main())
