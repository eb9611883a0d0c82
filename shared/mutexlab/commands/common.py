"""Helpers the subcommands share: argument types, errors, JSON output."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def count(minimum: int):
    """An argparse type: a whole number ≥ ``minimum``, with a clear error otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = f"whole number ≥ {minimum}"
    return parse


positive = count(1)
non_negative = count(0)


def seconds(text: str) -> float:
    """An argparse type: a duration in seconds, ≥ 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be ≥ 0, got {text}")
    return value


def fail(message: str, code: int = 2) -> int:
    print(f"mutexlab: error: {message}", file=sys.stderr)
    return code


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")
