"""Ricart–Agrawala (_ricart_agrawala.py, beside it) comparing timestamps as text, under a clock-offset reduction it declares.

Bug: a WANTED node defers a request when ``(str(ts), pid)`` of its own is smaller — right while
stamps have one digit, wrong from two on ("10" < "9"): a node that answered a request and then
asks with a later, two-digit stamp believes it comes first, and both enter.

The file also declares ``ClockOffsets`` ("only the order of timestamps is read"), which is
false for this code: applied, it would shift every world down to stamps 0, 1, 2 … where the bug
never shows. ``check`` samples every declared reduction on the worlds it visits and refuses this
one (``not applied: clock-offset normalisation — refused: …``), so the search runs on the real
stamps, from clocks at 8.

Caught by: mutexlab check FILE --nodes 3 -o 'initial_clocks={"1": 8, "2": 8, "3": 8}'
Expect: capacity — cs (capacity 1) held by
Refused: clock-offset normalisation
"""

import copy

from _ricart_agrawala import Reply, Request, RicartAgrawalaNode

from mutexlab.protocols.kit import ClockOffsets, Reductions, classic_algorithm


class TextStampNode(RicartAgrawalaNode):
    def _mine_first(self, msg: Request) -> bool:
        return (str(self.mine[0]), self.pid) < (str(msg.ts), msg.sender)  # the bug: "10" < "9"


def _low(node: TextStampNode) -> int:
    return min(node.clock.time, node.mine[0]) if node.mine else node.clock.time


def _shift(node: TextStampNode, d: int) -> TextStampNode:
    twin = copy.deepcopy(node)
    twin.clock.time = node.clock.time - d
    if node.mine is not None:
        twin.mine = (node.mine[0] - d, node.mine[1])
    return twin


# The declaration the bug makes false: the stamps are read as text, not only in order.
REDUCTIONS = Reductions(
    frozenset({TextStampNode}),
    clocks=ClockOffsets(_low, _shift, "timestamps are only compared, as (ts, pid)"),
)

SPEC = classic_algorithm(
    "mutant-ra-text-stamps-declared",
    "Ricart–Agrawala comparing stamps as text",
    TextStampNode,
    Request,
    Reply,
    reductions=REDUCTIONS,
)
