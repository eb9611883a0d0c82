"""What README.md, CONTRIBUTING.md and docs/*.md state that the code can hold them to
(tests/test_doc_truth.py): the paths and file names they name (and the files their inline
``mutexlab`` commands take, from the top of the checkout), the exit codes of
docs/exit-codes.md against each command's ``--help``, and where the quick tests' time is stated.

Each check takes text and gives findings (strings naming the document, the line and what is
wrong), so a test can plant an error in a copy and see it reported.
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]

# Names the documents mention that are not in the checkout, on purpose (a pattern each, with why).
# Kept small: a name that should exist is fixed in its document, never added here.
NOT_IN_THE_CHECKOUT = {
    r"my_algo\.py|\./algos/x\.py": "a user's own algorithm, written by the reader",
    r"\.env": "copied from .env.example by the reader, ignored by git",
    r"artifacts/": "the browser tests' screenshots, ignored by git",
    r"bench/results\.json|reed\.json": "what a command writes (ignored by git)",
    r"(?:cs|reed)-(?:messages|sync|bypass)-(?:max|min)\.json": "the scenarios --metrics-witness writes",
}
# Whole kinds of name that are outputs, never inputs: traces, pages, logs a command writes.
OUTPUT_SUFFIXES = (".jsonl", ".html", ".log", ".txt", ".csv", ".svg")
# The package's code lives under shared/mutexlab; the documents name its modules from there.
PACKAGE = "shared/mutexlab/"

_BACKTICK = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
_PY = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.py)\b")
_PATHLIKE = re.compile(
    r"^(?:\.{0,2}/)?(?:[\w.-]+/)*[\w.-]+(?:\.(?:py|md|json|sh|yml|yaml|toml|js|css|png|cfg|ini)|/)$"
)


@cache
def tracked() -> tuple[frozenset[str], frozenset[str]]:
    """The checkout's files, tracked or new (not ignored), and their directories (from the top)."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    files = frozenset(out.split())
    dirs = frozenset(str(parent) + "/" for f in files for parent in Path(f).parents if str(parent) != ".")
    return files, dirs


def exists(name: str, doc: Path, folder_of_row: str | None = None) -> bool:
    """Whether ``name``, as ``doc`` writes it, names a tracked file or directory: from the top,
    from the document's folder, inside the package, or as the tail of a path (``bees/flags.py``,
    ``rabbit.py``: the documents name modules by their folder within the package). In a table row
    about a folder (a cell ``audit/``), a bare name is that folder's, or of a folder inside it."""
    files, dirs = tracked()
    everything = files | dirs
    name = name.removeprefix("./")
    if folder_of_row and "/" not in name:
        return any(
            f.startswith(top + folder_of_row) and f.endswith("/" + name)
            for f in everything
            for top in ("", PACKAGE)
        )
    folder = str(doc.parent.relative_to(ROOT))
    candidates = {name, PACKAGE + name, (f"{folder}/{name}" if folder != "." else name)}
    if any(c in everything or str(Path(c)) in everything for c in candidates):
        return True
    if ".." in name:  # a link up from docs/
        up = str((doc.parent / name).resolve().relative_to(ROOT))
        return up + ("/" if name.endswith("/") else "") in everything
    return any(f == name or f.endswith("/" + name) for f in everything)


_FOLDER_CELL = re.compile(r"^\|[^|]*\| `([\w/-]+/)` \|")


def named_paths(text: str) -> list[tuple[int, str, str | None]]:
    """(line, name, folder) of every path or file name ``text`` states: in backticks or a link
    (what looks like a path), and any ``*.py`` anywhere (code blocks and trees included); folder:
    the folder a table row is about (``| | `audit/` | ...``), whose files its bare names are."""
    found: list[tuple[int, str, str | None]] = []
    for number, line in enumerate(text.splitlines(), 1):
        row = _FOLDER_CELL.match(line)
        folder = row.group(1) if row else None
        tokens = [(t, folder) for t in _BACKTICK.findall(line)] + [(t, None) for t in _LINK.findall(line)]
        for token, context in tokens:  # a link is to a document, whatever the row is about
            token = token.strip()
            if "://" in token or token.startswith(("-", "$", "<", "~", "/")) or "*" in token or "…" in token:
                continue
            if _PATHLIKE.match(token) and not token.endswith(OUTPUT_SUFFIXES):
                found.append((number, token, context))
        for token in _PY.findall(line):  # outside backticks: prose, not a cell naming a file of the row
            found.append((number, token, None))
    return sorted(set(found), key=lambda f: (f[0], f[1]))


def missing_paths(doc: Path, text: str | None = None) -> list[str]:
    """Findings: the names ``doc`` (or ``text`` written as ``doc``) states that name nothing."""
    text = doc.read_text(encoding="utf-8") if text is None else text
    out = []
    for number, name, folder in named_paths(text):
        if any(re.fullmatch(pattern, name) for pattern in NOT_IN_THE_CHECKOUT):
            continue
        if not exists(name, doc, folder):
            where = f" in {folder}" if folder and "/" not in name else ""
            out.append(f"{doc.relative_to(ROOT)}:{number}: {name} does not exist{where}")
    return out


# A command a reader types from the top of the checkout (``mutexlab simulate --algorithm X.py``):
# its file is looked up from there, not as the tail of some path as a name in prose may be.
_COMMAND = re.compile(r"`(mutexlab [^`]+)`")


def command_file_findings(doc: Path, text: str | None = None) -> list[str]:
    """Findings: a ``.py`` file an inline ``mutexlab`` command of ``doc`` takes (a span in
    backticks, which may wrap onto the next line) that is no file from the top of the checkout,
    where the docs are run; placeholders (``FILE``, ``…``), absolute paths (inside a container)
    and the allowed names of NOT_IN_THE_CHECKOUT aside."""
    text = doc.read_text(encoding="utf-8") if text is None else text
    files, _ = tracked()
    out = []
    for span in _COMMAND.finditer(text):
        number = text.count("\n", 0, span.start()) + 1
        for word in span.group(1).split():
            name = word.removeprefix("./")
            if not name.endswith(".py") or word.startswith("/") or "FILE" in word or "…" in word:
                continue
            if any(re.fullmatch(pattern, name) for pattern in NOT_IN_THE_CHECKOUT):
                continue
            if name not in files:
                out.append(
                    f"{doc.relative_to(ROOT)}:{number}: `mutexlab …` takes {word}, no file from the top"
                )
    return out


# -- exit codes ------------------------------------------------------------------------------
_ROW = re.compile(r"^\| `mutexlab ([^`]+)` \|(.*)\|\s*$")


def documented_codes(table: str) -> dict[str, set[int]]:
    """docs/exit-codes.md's table: each ``mutexlab`` command and the codes it gives a meaning
    (a cell other than "—"); the header names the codes, in order."""
    header = next(line for line in table.splitlines() if line.startswith("| command |"))
    codes = [int(c) for c in header.strip("| \n").split("|")[1:]]
    out = {}
    for line in table.splitlines():
        m = _ROW.match(line)
        if m:
            cells = [c.strip() for c in m.group(2).split(" | ")]
            out[m.group(1)] = {code for code, cell in zip(codes, cells, strict=True) if cell not in ("—", "")}
    return out


def help_codes(text: str) -> set[int] | None:
    """The exit codes a ``--help`` text states (its sentences from the first "Exit"), or None."""
    flat = " ".join(text.split())
    start = flat.find("Exit ")
    if start < 0:
        return None
    stated = flat[start:].split(" positional arguments:")[0].split(" options:")[0].split(" usage:")[0]
    return {int(c) for c in re.findall(r"(?<![\w.+%-])([0-9])(?![\w.%])", stated)}


def exit_code_findings(table: str, help_of) -> list[str]:
    """Findings: every command of the table whose ``--help`` (``help_of(words)``: the text, for
    ``mutexlab simulate bees`` the words ["simulate", "bees"]) states other codes than the table.
    0 is always implied; a command named with alternatives (``simulate bees|elves|mutex``) is
    held to each; where a subcommand's help says nothing of exit codes, its parent's is read."""
    out = []
    for command, codes in documented_codes(table).items():
        words = command.split()
        variants = [[words[0], alt] for alt in words[1].split("\\|")] if len(words) > 1 else [words]
        for argv in variants:
            stated = help_codes(help_of(argv))
            if stated is None and len(argv) > 1:
                stated = help_codes(help_of(argv[:1]))
            if stated is None:
                out.append(f"mutexlab {' '.join(argv)} --help states no exit code")
                continue
            if stated - {0} != codes - {0}:
                out.append(
                    f"mutexlab {' '.join(argv)}: --help states {sorted(stated)}, "
                    f"docs/exit-codes.md {sorted(codes)}"
                )
    return out


# -- the quick tests' time -------------------------------------------------------------------
QUICK = 'python -m pytest -q -n auto -m "not slow and not broker"'
TIME_HOME = ROOT / "docs" / "install.md"  # the one place that states it, as measured
_DURATION = re.compile(r"\b\d+(?:[.,]\d+)?\s*(?:s|seconds?|min|minutes?)\b|\ba minute\b", re.I)


def time_findings(doc: Path, text: str | None = None) -> list[str]:
    """Findings: a line of ``doc`` other than docs/install.md's that states how long the quick
    tests take (a line naming them, and a duration)."""
    text = doc.read_text(encoding="utf-8") if text is None else text
    if doc == TIME_HOME:
        return []
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        about_quick = QUICK in line or re.search(r"quick (?:tests|subset)", line, re.I)
        if about_quick and _DURATION.search(line):
            out.append(
                f"{doc.relative_to(ROOT)}:{number}: states the quick tests' time (only docs/install.md does)"
            )
    return out
