"""Counted nouns and articles in output: ``count(4, "elf")`` → "4 elves", ``article("elf")`` →
"an elf", ``ordinal(3)`` → "3rd". One place for English, so no output says "4 elfs", "a elf" or
"1 samples", nor a dict where it means what a process waits for (``waits``) or a configuration
(``settings``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from difflib import get_close_matches


def plural(noun: str) -> str:
    """English's regular rules, with "-lf" → "-lves" (elf, shelf, wolf, half)."""
    if noun.endswith("lf"):
        return noun[:-1] + "ves"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


def count(n: int, noun: str) -> str:
    """``n`` and the noun, singular for exactly one."""
    return f"{n} {noun if n == 1 else plural(noun)}"


def ordinal(n: int) -> str:
    """``n`` as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 102nd."""
    if n % 100 in (11, 12, 13):
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def article(noun: str) -> str:
    """The noun with "a" or "an" (by its first letter: enough for the project's own words)."""
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def settings(options: Mapping[str, object]) -> str:
    """A configuration's options as one types them (``--option KEY=JSON``), never a Python repr:
    ``requests=1, parents={"2": 1, "3": 1}`` (a string as it is, anything else as JSON)."""
    return ", ".join(
        f"{k}={v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)}"
        for k, v in options.items()
    )


def waits(stuck: dict[str, dict[str, list[str]]]) -> str:
    """What each unfinished process waits for (``WorldModel.waiters``), in words: ``node-1 REPLY
    from node-2, node-3; node-3 TOKEN from a sender its waiting_for() does not name``."""
    return "; ".join(f"{name} {lacks(what)}" for name, what in stuck.items())


def lacks(what: dict[str, list[str]]) -> str:
    """One process's ``waiting_for()`` (senders by name) in words. It may name no sender (the
    kit's default knows only that a WANTED node waits to enter, ``{"entry": []}``): said so,
    never a ``?``."""
    if not what:
        return "(unfinished; its waiting_for() names nothing)"
    return ", ".join(
        f"{kind} from {', '.join(whom)}"
        if whom
        else "to enter (its waiting_for() names no message nor sender)"
        if kind == "entry"
        else f"{kind} from a sender its waiting_for() does not name"
        for kind, whom in what.items()
    )


# Where a hosted program's fault happened (``run --node``, ``test``): said in a handler's error
# (``protocol.raised_at``) and read back from a participant's reasons (``transport.outcome``).
PROGRAM_FAULT = "the program's answer (what it did, not a line of mutexlab)"


def closest(wrong: Iterable[str], known: Iterable[str]) -> str:
    """``; 'meal': did you mean 'meals'?`` for each ``wrong`` key close to a ``known`` one, by
    letters whatever their case (``K`` is ``k`` miswritten), else empty."""
    lowered = {k.lower(): k for k in known}
    return "".join(
        f"; {key!r}: did you mean {lowered[close[0]]!r}?"
        for key in wrong
        if (close := get_close_matches(key.lower(), list(lowered), 1))
    )
