"""The documents held to the code (tests/doc_truth.py does the reading): every path and file name
README.md, CONTRIBUTING.md and docs/*.md state exists; docs/exit-codes.md gives each command the
codes its ``--help`` states, and the commands exit with them; the quick tests' time is stated in
one place, docs/install.md, as measured. Each check is shown reporting a planted error."""

from __future__ import annotations

import json
import re

import pytest
from doc_truth import (
    DOCS,
    QUICK,
    ROOT,
    TIME_HOME,
    command_file_findings,
    documented_codes,
    exit_code_findings,
    missing_paths,
    time_findings,
)

from mutexlab.cli import main

EXIT_CODES = ROOT / "docs" / "exit-codes.md"


def help_of(capsys):
    """``mutexlab <argv> --help``'s text, in this process."""

    def run(argv: list[str]) -> str:
        with pytest.raises(SystemExit):
            main([*argv, "--help"])
        return capsys.readouterr().out

    return run


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_a_document_names_exists(doc):
    assert missing_paths(doc) == []


def test_the_path_check_reports_a_planted_wrong_path(tmp_path):
    doc = ROOT / "CONTRIBUTING.md"
    text = doc.read_text(encoding="utf-8") + (
        "\n  transport/   pika internals in pika_internals.py\n"
        "The classic invariants are in `audit/classic.py`; see [the tour](docs/no-such-tour.md).\n"
        "\n| layer | folder | what |\n|---|---|---|\n"
        "| | `audit/` | capacity (`capacity.py`), the classic family's invariants (`classic.py`) |\n"
    )
    copy = tmp_path / "CONTRIBUTING.md"
    copy.write_text(text, encoding="utf-8")  # a temporary copy; checked as the document it copies
    found = missing_paths(doc, copy.read_text(encoding="utf-8"))
    assert [f.split(": ", 1)[1] for f in found] == [
        "pika_internals.py does not exist",
        "audit/classic.py does not exist",
        "docs/no-such-tour.md does not exist",
        "classic.py does not exist in audit/",
    ]
    assert all(f.startswith("CONTRIBUTING.md:") for f in found)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_an_inline_command_takes_is_there_from_the_top(doc):
    assert command_file_findings(doc) == []


def test_the_command_file_check_reports_a_planted_tail_only_path():
    """``./bees_reed_tokens.py`` passed the path check (the tail of examples/solutions/...), yet a
    reader typing the command at the top of the checkout got `does not exist`."""
    doc = ROOT / "docs" / "your-bees.md"
    text = doc.read_text(encoding="utf-8") + (
        "\nRun `mutexlab run bees -a ./bees_reed_tokens.py -P 3` or `mutexlab simulate\n"
        "./chandy_misra.py --meals 1`; yours: `mutexlab check mutex -a ./my_algo.py`.\n"
    )
    found = command_file_findings(doc, text)
    assert [f.split(": ", 1)[1] for f in found] == [
        "`mutexlab …` takes ./bees_reed_tokens.py, no file from the top",
        "`mutexlab …` takes ./chandy_misra.py, no file from the top",
    ]
    assert all(f.startswith("docs/your-bees.md:") for f in found)
    assert missing_paths(doc, text) == []  # what the path check alone let through


def test_the_exit_codes_table_matches_every_commands_help(capsys):
    table = EXIT_CODES.read_text(encoding="utf-8")
    assert len(documented_codes(table)) >= 7  # simulate, replay, verify, export, report, compare, run
    assert exit_code_findings(table, help_of(capsys)) == []


def test_the_exit_code_check_reports_a_planted_wrong_code(capsys, tmp_path):
    """verify's 3 (INCOMPLETE) taken out of the table, and a 1 given to export, which has none."""
    table = EXIT_CODES.read_text(encoding="utf-8")
    lines = table.splitlines()
    for i, line in enumerate(lines):
        cells = line.split(" | ")
        if line.startswith("| `mutexlab verify` |"):
            cells[4] = "—"  # the column of 3
            lines[i] = " | ".join(cells)
        elif line.startswith("| `mutexlab export` |"):
            cells[2] = "a planted code"
            lines[i] = " | ".join(cells)
    copy = tmp_path / "exit-codes.md"
    copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = exit_code_findings(copy.read_text(encoding="utf-8"), help_of(capsys))
    assert found == [
        "mutexlab verify: --help states [0, 1, 2, 3], docs/exit-codes.md [0, 1, 2]",
        "mutexlab export: --help states [2], docs/exit-codes.md [0, 1, 2]",
    ]


def _trace(cli, tmp_path):
    path = tmp_path / "ra.jsonl"
    ran = cli("simulate", "mutex", "-a", "ricart-agrawala", "-N", "3", "--requests", "1", "--trace", path)
    assert ran.returncode == 0, ran.stderr
    return path


def test_the_commands_exit_as_the_table_says(cli, tmp_path):
    """A few real runs, each code held to the table's row: a cell for it, not "—"."""
    codes = documented_codes(EXIT_CODES.read_text(encoding="utf-8"))
    trace = _trace(cli, tmp_path)
    lines = trace.read_text().splitlines()
    cut = tmp_path / "cut.jsonl"  # the run header and the first events: safe so far, unfinished
    cut.write_text("\n".join(lines[: len(lines) // 3]) + "\n")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("this is no trace\n")
    runs = [
        ("verify", [trace], 0),
        ("verify", [cut], 3),
        ("verify", [garbage], 2),
        ("export", [tmp_path / "missing.jsonl"], 2),
        ("report", [tmp_path / "missing.jsonl"], 2),
        ("simulate bees\\|elves\\|mutex", ["--bees", "0"], 2),
        ("replay", [tmp_path / "missing.json"], 2),
    ]
    for row, args, code in runs:
        argv = (["simulate", "bees"] if row.startswith("simulate") else [row]) + [str(a) for a in args]
        ran = cli(*argv)
        assert ran.returncode == code, (argv, ran.stdout, ran.stderr)
        assert code in codes[row], (
            f"mutexlab {' '.join(argv)} exits {code}; docs/exit-codes.md gives it no meaning"
        )
    assert "Traceback" not in ran.stderr


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_quick_tests_time_is_stated_in_one_place(doc):
    assert time_findings(doc) == []


def test_the_one_place_states_the_time_as_measured_with_its_conditions():
    row = next(line for line in TIME_HOME.read_text(encoding="utf-8").splitlines() if f"`{QUICK}`" in line)
    measured = row.split(" | ")[-1]
    assert re.search(r"\d+ s\b", measured) and re.search(r"\d{4}-\d{2}-\d{2}", measured), measured
    assert "cores" in measured and "another job" in measured, "say on what machine, and under what load"


def test_the_time_check_reports_a_planted_time(tmp_path):
    doc = ROOT / "README.md"
    text = doc.read_text(encoding="utf-8").replace("(measured: docs/install.md)", "— under a minute")
    assert text != doc.read_text(encoding="utf-8")
    copy = tmp_path / "README.md"
    copy.write_text(text, encoding="utf-8")
    found = time_findings(doc, copy.read_text(encoding="utf-8"))
    assert len(found) == 1 and found[0].startswith("README.md:") and "quick tests' time" in found[0]


def test_the_allow_list_is_small_and_each_entry_says_why():
    from doc_truth import NOT_IN_THE_CHECKOUT

    assert len(NOT_IN_THE_CHECKOUT) <= 6
    assert all(len(why.split()) >= 3 for why in NOT_IN_THE_CHECKOUT.values())
    json.dumps(NOT_IN_THE_CHECKOUT)  # plain data
