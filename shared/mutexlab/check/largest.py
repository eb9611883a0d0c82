"""A warning before a check larger than any docs/check.md lists as complete (the data:
``protocols/checked.py``, read through the registry). It says what is known — nothing of this
size — and no more: a check past the list may well complete (``check bees -P 3 -K 1 -T 2`` does,
in minutes), so it never predicts an incomplete one."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..protocols.registry import largest_checked


def sizes(processes: int, options: dict[str, Any], names: Iterable[str]) -> dict[str, int]:
    """The configuration's sizes among ``names``, in their order (an option that is not a number is
    left out): the same words on every run, whatever the string hash seed."""
    out = {"processes": processes}
    for name in names:
        if name == "processes":
            continue
        value = options.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            out[name] = value
    return out


def covered(entry: dict[str, int], mine: dict[str, int]) -> bool:
    return all(value <= entry[name] for name, value in mine.items() if name in entry)


def show(entry: dict[str, int]) -> str:
    return ", ".join(f"{name} {value}" for name, value in entry.items())


def past_largest(algorithm: str, processes: int, options: dict[str, Any]) -> str | None:
    """The warning for a configuration no listed complete one covers, or None (also for an
    algorithm with no list: a variant by file or module)."""
    entries = largest_checked(algorithm)
    if not entries:
        return None
    names = list(dict.fromkeys(name for entry in entries for name in entry))  # first seen first
    mine = sizes(processes, options, names)
    if any(covered(entry, mine) for entry in entries):
        return None
    return (
        f"warning: {algorithm} with {show(mine)} is past the largest configurations docs/check.md "
        f"lists as complete ({'; '.join(show(e) for e in entries)}): nothing is known of its size; it "
        "may take long, or stop at --max-memory or --max-states (incomplete, exit 3)"
    )
