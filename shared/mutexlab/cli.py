"""The ``mutexlab`` command. Each subcommand lives in ``mutexlab.commands.<name>`` and offers
``register(subparsers)``; its handler returns the exit code (0 fine, 1 a violation or failed
run, 2 bad input)."""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__

COMMANDS = [
    "mutexlab.commands.simulate",
    "mutexlab.commands.replay",
    "mutexlab.commands.verify",
    "mutexlab.commands.run",
    "mutexlab.commands.report",
    "mutexlab.commands.compare",
    "mutexlab.commands.check",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mutexlab",
        description="Distributed mutual exclusion: simulate, replay, run over RabbitMQ, and audit.")
    parser.add_argument("--version", action="version", version=f"mutexlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
