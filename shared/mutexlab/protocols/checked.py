"""The largest configurations ``mutexlab check`` has completed, per protocol: the data behind
docs/check.md's table "The largest configurations checked" (a test keeps the two in step).
``check`` warns up front when asked for a configuration no entry covers (``check/largest.py``):
larger than every listed one in some dimension, so expect it to run into its limits.

Each entry names the sizes of one completed configuration: ``processes`` and the option values
that grow the state space (a configuration is covered by an entry when none of its sizes is
larger; an option an entry does not name is not compared)."""

from __future__ import annotations

LARGEST: dict[str, tuple[dict[str, int], ...]] = {
    "ricart-agrawala": ({"processes": 4, "requests": 1}, {"processes": 3, "requests": 2}),
    "lamport": ({"processes": 3, "requests": 1},),
    "maekawa": ({"processes": 3, "requests": 2},),
    "sanders": ({"processes": 3, "requests": 1},),
    "suzuki-kasami": ({"processes": 4, "requests": 1},),
    "raymond": ({"processes": 4, "requests": 2}, {"processes": 5, "requests": 1}),
    "bees": ({"processes": 3, "flowers": 1, "reeds": 1, "eggs": 5, "cocoons": 15},),
    "elves": (
        {"processes": 3, "rounds": 2, "contracts": 1},
        {"processes": 2, "rounds": 2, "contracts": 2},
    ),
}
