"""Mason bees with a token per reed (examples/solutions/bees_reed_tokens.py) whose dying bee keeps the token.

Bug: a bee that dies says GONE to every bee, its heir too, instead of sending its heir the
reed's TOKEN: the next bee of the reed waits for the token forever. With two bees sharing one
reed of two cocoons, the second bee never lays.

Caught by: mutexlab check FILE -P 2 -T 1 -K 1 --eggs 1 --cocoons 2
Expect: deadlock — nothing can move; waiting: bee-2 TOKEN from bee-1
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

# the correct solution this one mutates, beside the other examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "solutions"))

from bees_reed_tokens import SPEC as CORRECT  # noqa: E402
from bees_reed_tokens import Gone, ReedTokenBee, Token  # noqa: E402
from bees_reed_tokens import make_setup as correct_setup  # noqa: E402

from mutexlab.protocol import Send  # noqa: E402
from mutexlab.setups import Setup  # noqa: E402

NAME = "mutant-bees-token-not-handed-on"


class TokenKeepingBee(ReedTokenBee):
    def _leave_flower(self, action: str) -> list:
        return [  # the bug: the heir's TOKEN becomes a GONE
            Send(e.to, Gone(sender=e.msg.sender, ts=e.msg.ts))
            if isinstance(e, Send) and isinstance(e.msg, Token)
            else e
            for e in super()._leave_flower(action)
        ]


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    setup = correct_setup(processes, options, seed)
    for bee in setup.protocols.values():
        bee.__class__ = TokenKeepingBee
    return replace(setup, algorithm=NAME)


SPEC = replace(
    CORRECT, name=NAME, summary="bees_reed_tokens, keeping the token at death", make_setup=make_setup
)
