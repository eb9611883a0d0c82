"""``mutexlab check``: exhaustive model checking of the production protocol code.

``model`` (worlds and steps), ``search`` (depth-/breadth-first, limits), ``properties``
(scenario invariants, liveness), ``reductions``, ``counterexample`` (findings as replayable
scenarios), ``engine`` (one call that puts them together); ``metrics`` and ``witness`` (worst
and best cases over every interleaving, and the runs reaching them), ``swarm`` (randomised
bitstate searches for spaces too big to finish).
"""

SEARCHES = ("dfs", "bfs")  # the search orders (``CheckConfig.search``); here, so flags need no engine
