"""Mason bees with a token per reed (examples/solutions/bees_reed_tokens.py) laying on the wrong reed.

Bug: leaving the flower, a bee notes its egg on the next reed (``reed mod T + 1``) instead of the
one it holds: the problem's rule "each egg laid on the held reed after a flower visit" is broken
at the first egg.

Caught by: mutexlab check FILE -P 2 -T 2 -K 1 --eggs 1 --cocoons 1
Expect: invariant — [egg-off-reed] bee-1 laid an egg in reed:2 while holding reed:1
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

# the correct solution this one mutates, beside the other examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "solutions"))

from bees_reed_tokens import SPEC as CORRECT  # noqa: E402
from bees_reed_tokens import ReedTokenBee  # noqa: E402
from bees_reed_tokens import make_setup as correct_setup  # noqa: E402

from mutexlab.protocol import Note  # noqa: E402
from mutexlab.setups import Setup  # noqa: E402

NAME = "mutant-bees-egg-on-wrong-reed"


class WrongReedBee(ReedTokenBee):
    def _leave_flower(self, action: str) -> list:
        wrong = self.reed % self.reeds + 1  # the bug: not the reed I hold
        return [
            Note("egg", {**e.fields, "reed": wrong}) if isinstance(e, Note) and e.event == "egg" else e
            for e in super()._leave_flower(action)
        ]


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    setup = correct_setup(processes, options, seed)
    for bee in setup.protocols.values():
        bee.__class__ = WrongReedBee
    return replace(setup, algorithm=NAME)


SPEC = replace(
    CORRECT, name=NAME, summary="bees_reed_tokens, laying on the wrong reed", make_setup=make_setup
)
