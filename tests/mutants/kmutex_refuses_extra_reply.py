"""k-mutual exclusion à la Ricart–Agrawala (examples/solutions/kmutex_ricart_agrawala.py) whose table refuses an answer that can come.

Bug: the table says a REPLY never reaches a node inside the critical section. But a node enters
on N−K answers and N−1 were asked: with K ≥ 2 the K−1 others still come, and the first one that
arrives while the node is inside is refused — a rejected input.

Caught by: mutexlab check FILE --nodes 3 -k 2
Expect: error — cannot take REPLY in state HELD
"""

import sys
from dataclasses import replace
from pathlib import Path

# the correct solution this one mutates, beside the other examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "solutions"))

from kmutex_ricart_agrawala import SPEC as CORRECT  # noqa: E402
from kmutex_ricart_agrawala import KRicartAgrawalaNode, Reply, Request  # noqa: E402

from mutexlab.protocols.kit import HELD, classic_algorithm  # noqa: E402

ROWS = KRicartAgrawalaNode.TABLE.rows


class ExtraReplyRefusingNode(KRicartAgrawalaNode):
    TABLE = replace(
        KRicartAgrawalaNode.TABLE,
        # the bug: HELD refuses REPLY, yet the K−1 answers beyond the N−K needed arrive there
        rows={**ROWS, HELD: {key: cell for key, cell in ROWS[HELD].items() if key != "REPLY"}},
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
