"""k-mutual exclusion à la Ricart–Agrawala (examples/solutions/kmutex_ricart_agrawala.py) whose table refuses an answer that can come.

Bug: the table says a REPLY never reaches a node inside the critical section. But a node enters
on N−K answers and N−1 were asked: with K ≥ 2 the K−1 others still come, and the first one that
arrives while the node is inside is refused — a rejected input.

Caught by: mutexlab check FILE --nodes 3 -k 2
Expect: error — cannot take REPLY in state HELD
"""

import sys
from pathlib import Path

# the correct solution this one mutates, beside the other examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "solutions"))

from kmutex_ricart_agrawala import SPEC as CORRECT  # noqa: E402
from kmutex_ricart_agrawala import KRicartAgrawalaNode, Reply, Request  # noqa: E402

from mutexlab.protocols.kit import HELD, RELEASED, WANTED, classic_algorithm, classic_table, ignore, on  # noqa: E402


class ExtraReplyRefusingNode(KRicartAgrawalaNode):
    TABLE = classic_table(
        request="REQUEST to the others (K = N: enter) → WANTED",
        exit="REPLY to the deferred → RELEASED",
        rows={
            RELEASED: {
                "REQUEST": on("REPLY", "_on_request"),
                "REPLY": ignore("a late answer to a request I was already served for", "_receive"),
            },
            WANTED: {
                "REQUEST": on("mine first: defer; else REPLY", "_on_request"),
                "REPLY": on("count it; N−K answers → HELD", "_on_reply", to=[HELD]),
            },
            HELD: {"REQUEST": on("defer", "_on_request")},  # the bug: REPLY can arrive here
        },
        never="a REPLY comes before I enter (the bug: the K−1 beyond the N−K needed come later)",
    )


SPEC = classic_algorithm(
    "mutant-k-ricart-agrawala-refuses-extra-reply",
    "k-Ricart–Agrawala refusing a reply inside",
    ExtraReplyRefusingNode,
    Request,
    Reply,
    problem="kmutex",
    literature=CORRECT.literature,
)
