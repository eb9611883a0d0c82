"""Naimi–Tréhel's token along a dynamic tree (examples/protocols/naimi_trehel.py) that keeps a copy of the token it sends.

Requests travel ``last`` pointers to the root, which passes the token to the requester or queues
it behind itself in ``next``; node 1 starts as the root with the token.

Bug: passing the token does not clear ``self.token``: the node that gave it away still believes
it holds it and, asking again, enters at once while the new holder is inside.

Caught by: mutexlab check FILE --nodes 2
Expect: capacity — cs (capacity 1) held by node-1×1, node-2×1
"""

import sys
from pathlib import Path

# the correct algorithm this one mutates (docs/your-algorithm.md's), beside the other examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "protocols"))

from naimi_trehel import SPEC as CORRECT  # noqa: E402
from naimi_trehel import NaimiTrehelNode, Request, Token  # noqa: E402

from mutexlab.protocols.kit import Send, classic_algorithm  # noqa: E402


class TokenKeepingNode(NaimiTrehelNode):
    def _pass_token(self, to: int) -> list:
        # the bug: ``self.token = False`` is missing
        return [Send(to, Token(sender=self.pid, ts=self.clock.tick()))]


SPEC = classic_algorithm(
    "mutant-naimi-trehel-keeps-token",
    "Naimi–Tréhel keeping the token it passes on",
    TokenKeepingNode,
    Request,
    Token,
    literature=CORRECT.literature,
)
