"""The documented commands of the docs that build and test programs (PROGRAM_DOCS: docs/mpi.md),
run and compared exactly as tests/test_docs_commands.py does for every other doc (its docstring
says how). A module of their own so that `--dist loadfile` can give them to the other worker:
docs/mpi.md alone took about as long as the rest of that module."""

from __future__ import annotations

import pytest
from test_docs_commands import PROGRAM_DOCS, _cases, check_documented_block, doc_sessions


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    return doc_sessions(tmp_path_factory)


@pytest.mark.parametrize("doc, index", _cases(PROGRAM_DOCS))
def test_documented_programs_print_what_the_docs_show(doc, index, sessions, request):
    check_documented_block(doc, index, sessions, request)
