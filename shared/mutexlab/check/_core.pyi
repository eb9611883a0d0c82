# The compiled search core (_core.c); core.PyCore is its pure-Python twin, with the same methods.
from typing import Any

INTERFACE: int

class Core:
    def __init__(
        self,
        tables: Any,
        n: int,
        link_to: tuple[int, ...],
        check: bool,
        *reduce: Any,  # core_reduce.ReduceTables.reduce_config(): the reductions, if any
    ) -> None: ...
    def dfs(
        self, root: tuple[int, ...]
    ) -> tuple[int, tuple[int, ...] | None, tuple[int, int, int] | None, list]: ...
    def counts(self) -> tuple[int, int, int, int, int]: ...
    def reduce_counts(self) -> tuple[int, int]: ...
    def fingerprint(self, world: tuple[int, ...]) -> int: ...

def tables_selftest(n: int, seed: int) -> bool: ...
