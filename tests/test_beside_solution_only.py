"""The modules beside a solution are watched only for a file mutexlab loaded as a solution: a
module Python imported itself (a test module beside its conftest.py, whose globals the harness
changes between runs) keeps its helpers to itself — else their globals read as shared state."""

from __future__ import annotations

import importlib
import sys

from mutexlab.beside import beside
from mutexlab.protocols.registry import _load_file


def test_only_a_solution_file_has_its_siblings_watched(tmp_path, monkeypatch):
    (tmp_path / "helper_o16b.py").write_text("SEEN: dict = {}\n\ndef note(x):\n    SEEN[x] = 1\n")
    (tmp_path / "plain_o16b.py").write_text("from helper_o16b import note\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        plain = importlib.import_module("plain_o16b")  # as pytest imports a test module
        assert beside(plain) == []
        solution = _load_file(str(tmp_path / "plain_o16b.py"), tmp_path / "plain_o16b.py")
        assert [m.__name__ for m in beside(solution)] == ["helper_o16b"]
    finally:
        for name in [n for n in sys.modules if n.endswith("o16b") or "plain_o16b" in n]:
            del sys.modules[name]
