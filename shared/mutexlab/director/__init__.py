"""``mutexlab test``: any program as the nodes of a run, every delivery chosen by mutexlab.

mutexlab starts N copies of an executable, speaks the node protocol with each over its standard
input and output (``lines.py``, ``process.py``; docs/test-any-program.md), holds every message
between them and delivers it when a strategy says (``world.py``, ``strategies.py``,
``search.py``). Each run's trace is built here, vector clocks and all, and decided by the audit
(``judge.py``); a failing schedule is shrunk (``shrink.py``) into a scenario that ``replay``
plays again on the program (``scenario.py``).
"""
