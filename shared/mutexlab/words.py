"""Counted nouns and articles in output: ``count(4, "elf")`` → "4 elves", ``article("elf")`` →
"an elf", ``ordinal(3)`` → "3rd". One place for English, so no output says "4 elfs", "a elf" or "1 samples"."""

from __future__ import annotations


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
