"""Every ``$ mutexlab …`` command shown in README.md and docs/*.md runs, and prints what the docs show.

How the docs are read (CONTRIBUTING.md#doc-examples says the same for authors):

* A fenced code block with lines starting ``$ `` is a console session. Each ``$`` line is a shell
  command (run by bash); the lines up to the next ``$`` line are its output (stdout and stderr
  together, as on a terminal). A block is run when one of its commands calls ``mutexlab``; blocks
  of other tools (``python -m bench.run``, a hand-started service) are not.
* The blocks of one document share a working directory and run in document order, so a later
  block may use a file an earlier one wrote (README: ``sk.jsonl``). ``examples/`` of the
  repository is reachable there (and ``tests/``, for the broken variants); ``mutexlab`` is this checkout's.
* ``$ echo $?`` prints the previous command's exit code. An output ending in ``(exit N)`` also
  asserts the exit code N. Otherwise the exit code is not checked.
* ``mutexlab explore`` (a server) is interrupted with SIGINT once it serves, as Ctrl-C would.
* After a document's last block, every file its commands wrote must be ignored by git at the top of
  a checkout, where a reader runs them (``left_unignored``; a reader's own ``.py`` aside).
* ``mutexlab check``'s measured lines (``time:``, ``peak memory:``) are compared by label and unit.
* Elisions: a line that is only ``...`` or ``…`` stands for any number of lines; ``…`` inside a
  line stands for any text.
* A block that calls ``mutexlab run`` (or ``replay --over-rabbitmq``) needs RabbitMQ (mark ``broker``); its output varies from run
  to run (times, message counts, run ids), so only its stable lines are compared, in order: the
  verdict (``NAME: SAFE``), ``checked:``, ``entries:`` and ``final states:``, and the ``transport:``
  line by its counters' names (each number stands for any number).

Everything else is compared exactly, after stripping trailing spaces and trailing blank lines.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(\s*)(```|~~~)")
MUTEXLAB = re.compile(r"(^|[\s;&|(])mutexlab(\s|$)")
# ``mutexlab explore`` serves until Ctrl-C; the docs show it with --no-browser and its start-up
# lines, so the test interrupts it once it says it serves (its exit code after SIGINT is 0).
SERVER = re.compile(r"(^|[\s;&|(])mutexlab explore\b")
SERVER_SECONDS = 60  # at most this long for a server to say it serves
EXIT_NOTE = re.compile(r"^\(exit (?:status )?(\d+)\)$")
BROKER_STABLE = re.compile(
    r"^(\S+: (SAFE|VIOLATION\b.*)|checked: .*|entries: .*|final states: .*|transport: .*)$"
)
# A broker run's line whose numbers vary but whose words do not: each number matches any number.
COUNTED = re.compile(r"^transport: ")
ELISION_LINES = {"...", "…"}
TIMEOUT = 300


@dataclass
class Command:
    line: int  # 1-based line of the ``$`` line in its document
    text: str  # the shell command, without ``$ ``
    expected: list[str] = field(default_factory=list)
    exit_code: int | None = None  # from a trailing ``(exit N)``

    @property
    def broker(self) -> bool:
        return re.search(r"(^|[\s;&|(])mutexlab run\b|--over-rabbitmq\b", self.text) is not None


@dataclass
class Block:
    doc: Path
    line: int  # line of the opening fence
    commands: list[Command]

    @property
    def name(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"

    @property
    def runnable(self) -> bool:
        return any(MUTEXLAB.search(c.text) for c in self.commands)

    @property
    def broker(self) -> bool:
        return any(c.broker for c in self.commands)


def parse_blocks(doc: Path, text: str | None = None) -> list[Block]:
    """The console blocks of a Markdown document (fenced blocks with ``$`` lines), in order."""
    lines = (doc.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks: list[Block] = []
    n = 0
    while n < len(lines):
        opening = FENCE.match(lines[n])
        if not opening:
            n += 1
            continue
        indent, fence = opening.group(1), opening.group(2)
        start, body = n + 1, []
        n += 1
        while n < len(lines) and not lines[n].strip().startswith(fence):
            body.append(
                (n + 1, lines[n][len(indent) :] if lines[n].startswith(indent) else lines[n].lstrip())
            )
            n += 1
        n += 1
        commands: list[Command] = []
        for number, line in body:
            if line.startswith("$ "):
                commands.append(Command(number, line[2:].strip()))
            elif commands:
                commands[-1].expected.append(line.rstrip())
        if not commands:
            continue
        for command in commands:
            while command.expected and not command.expected[-1].strip():
                command.expected.pop()
            if command.expected and (note := EXIT_NOTE.match(command.expected[-1].strip())):
                command.exit_code = int(note.group(1))
                command.expected.pop()
        blocks.append(Block(doc, start, commands))
    return blocks


# -- comparing ---------------------------------------------------------------------------

# Measured lines of `mutexlab check` (wall time, rate, memory) differ from run to run: the docs show
# a real run's figures, and the test compares only their labels and units.
MEASURED = re.compile(r"^(time:\s+|peak memory:\s+)")


def _line_pattern(expected: str) -> re.Pattern:
    if label := MEASURED.match(expected):
        return re.compile(re.escape(label.group(1)) + r"[\d.,]+ (s \([\d,]+ states/s\)|MB)\Z")
    return re.compile(".*".join(re.escape(part) for part in expected.split("…")) + r"\Z", re.S)


def _counted_pattern(expected: str) -> re.Pattern:
    """The line with each of its numbers standing for any number (a broker run's counters)."""
    return re.compile(r"\d+".join(re.escape(part) for part in re.split(r"\d+", expected)) + r"\Z")


def matches(expected: list[str], actual: list[str]) -> bool:
    """``actual`` equals ``expected`` with elisions: ``...``/``…`` lines match any number of lines,
    ``…`` inside a line any text."""
    tokens = [None if line.strip() in ELISION_LINES else _line_pattern(line) for line in expected]
    memo: dict[tuple[int, int], bool] = {}

    def match(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(tokens):
            result = j == len(actual)
        elif tokens[i] is None:
            result = any(match(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            result = j < len(actual) and tokens[i].match(actual[j]) is not None and match(i + 1, j + 1)
        memo[(i, j)] = result
        return result

    return match(0, 0)


def stable_lines_in_order(expected: list[str], actual: list[str]) -> list[str]:
    """For a broker run: the documented stable lines missing from ``actual`` (in order)."""
    missing, position = [], 0
    for line in (e for e in expected if BROKER_STABLE.match(e.strip())):
        pattern = _counted_pattern(line) if COUNTED.match(line.strip()) else _line_pattern(line)
        found = next((k for k in range(position, len(actual)) if pattern.match(actual[k])), None)
        if found is None:
            missing.append(line)
        else:
            position = found + 1
    return missing


def normalise(output: str) -> list[str]:
    lines = [line.rstrip() for line in output.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def check_command(block: Block, command: Command, output: str, code: int) -> list[str]:
    """Problems with one command's result, each a readable message naming the doc and line."""
    where = f"{block.doc.relative_to(ROOT)}:{command.line}: $ {command.text}"
    problems = []
    actual = normalise(output)
    if command.exit_code is not None and code != command.exit_code:
        problems.append(
            f"{where}\n  exit code {code}, the doc says (exit {command.exit_code})\n"
            + "\n".join("  | " + line for line in actual[-20:])
        )
    if command.broker:
        missing = stable_lines_in_order(command.expected, actual)
        if missing:
            problems.append(
                f"{where}\n  stable lines of a RabbitMQ run not found (in order):\n"
                + "\n".join("  - " + line for line in missing)
                + "\n  actual output:\n"
                + "\n".join("  | " + line for line in actual)
            )
    elif not matches(command.expected, actual):
        diff = difflib.unified_diff(
            command.expected, actual, f"{where} (documented)", "actual output", lineterm="", n=2
        )
        problems.append(
            "\n".join(diff) + "\n  (a line '...' or '…' matches any lines; '…' in a line any text)"
        )
    return problems


# -- running -----------------------------------------------------------------------------


def _environment(workdir: Path, amqp_url: str | None) -> dict[str, str]:
    bin_dir = workdir / ".bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "mutexlab"
    # This checkout's code first, whatever PYTHONPATH a documented command sets for itself
    # (``PYTHONPATH=tests mutexlab check … -a mutexlab_broken.…``).
    code = shlex.quote(os.pathsep.join([str(ROOT / "shared"), str(ROOT)]))
    shim.write_text(
        f"#!/bin/sh\nPYTHONPATH={code}${{PYTHONPATH:+{os.pathsep}$PYTHONPATH}} "
        f'exec {shlex.quote(sys.executable)} -m mutexlab "$@"\n'
    )
    shim.chmod(0o755)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("RUN_", "MUTEXLAB_"))}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=os.pathsep.join([str(ROOT / "shared"), str(ROOT), env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        ),
        PYTHONUNBUFFERED="1",
        COLUMNS="80",
        LC_ALL="C.UTF-8",
        TERM="dumb",
    )
    env.pop("AMQP_URL", None)
    if amqp_url:
        env["AMQP_URL"] = amqp_url
    return env


@dataclass
class Outcome:
    results: list[tuple[str, int]]  # (output, exit code) per command


class DocSession:
    """One working directory per document; its blocks run at most once each, in document order."""

    def __init__(self, doc: Path, workdir: Path) -> None:
        self.blocks = [b for b in parse_blocks(doc) if b.runnable]
        self.workdir = workdir
        (workdir / "examples").symlink_to(ROOT / "examples")
        (workdir / "tests").symlink_to(ROOT / "tests")  # the broken variants some docs run
        self.outcomes: dict[int, Outcome] = {}
        self.last_code = 0

    def outcome(self, index: int, amqp_url: str | None) -> Outcome:
        for earlier in range(index):
            if earlier not in self.outcomes and (amqp_url or not self.blocks[earlier].broker):
                self._run(earlier, amqp_url)
        if index not in self.outcomes:
            self._run(index, amqp_url)
        return self.outcomes[index]

    def _run(self, index: int, amqp_url: str | None) -> None:
        env = _environment(self.workdir, amqp_url)
        results = []
        for command in self.blocks[index].commands:
            if command.text.strip() == "echo $?":
                results.append((f"{self.last_code}\n", 0))
                continue
            text = command.text
            if SERVER.search(text):  # a server runs until Ctrl-C: interrupt it once it serves
                output, code = _serve_then_interrupt(text, self.workdir, env)
                self.last_code = code
                results.append((output, code))
                continue
            try:
                done = subprocess.run(
                    ["bash", "-c", text],
                    cwd=self.workdir,
                    env=env,
                    text=True,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    timeout=TIMEOUT,
                )
                output, code = done.stdout, done.returncode
            except subprocess.TimeoutExpired as exc:
                output, code = f"{exc.stdout or ''}\n(timed out after {TIMEOUT}s)", -1
            self.last_code = code
            results.append((output, code))
        self.outcomes[index] = Outcome(results)


def _serve_then_interrupt(text: str, cwd: Path, env: dict[str, str]) -> tuple[str, int]:
    """Run a server command, and send SIGINT (Ctrl-C) to it once it has printed ``serving`` (or
    after SERVER_SECONDS without it, or when it exits by itself): its output and exit code."""
    import signal
    import threading
    import time

    child = subprocess.Popen(
        ["bash", "-c", text],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # SIGINT to the group: bash and the server
    )
    lines: list[str] = []
    serving = threading.Event()

    def read() -> None:
        for line in child.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if line.startswith("serving "):
                serving.set()
        serving.set()  # ended by itself

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    started = time.monotonic()
    while not serving.wait(0.1):
        if time.monotonic() - started > SERVER_SECONDS:
            break
    time.sleep(0.5)  # the lines it prints right after "serving"
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGINT)
    try:
        code = child.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        child.kill()
        code = -1
    reader.join(timeout=10)
    return "".join(lines), code


# The docs whose commands build and test programs (minutes each under load) are run by
# tests/test_docs_commands_programs.py: under `--dist loadfile` (the README's command) a module
# runs on one worker, and with them this one took longer than the rest of the suite on the other.
PROGRAM_DOCS = [ROOT / "docs" / name for name in ("mpi.md",)]


def _cases(docs=tuple(doc for doc in DOCS if doc not in PROGRAM_DOCS)):
    cases = []
    for doc in docs:
        for index, block in enumerate(b for b in parse_blocks(doc) if b.runnable):
            # Every documented command in a child process: minutes for all of them, so out of the
            # quick subset (the full run checks every one); the link checks below stay quick.
            marks = [pytest.mark.slow, *([pytest.mark.broker] if block.broker else [])]
            cases.append(pytest.param(doc, index, id=block.name, marks=marks))
    return cases


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    return doc_sessions(tmp_path_factory)


def doc_sessions(tmp_path_factory):
    """Each doc's one session (its working directory), made on its first block."""
    made: dict[Path, DocSession] = {}

    def get(doc: Path) -> DocSession:
        if doc not in made:
            made[doc] = DocSession(doc, tmp_path_factory.mktemp(doc.stem))
        return made[doc]

    return get


@pytest.mark.parametrize("doc, index", _cases())
def test_documented_commands_print_what_the_docs_show(doc, index, sessions, request):
    check_documented_block(doc, index, sessions, request)


def check_documented_block(doc: Path, index: int, sessions, request) -> None:
    session = sessions(doc)
    block = session.blocks[index]
    amqp_url = request.getfixturevalue("amqp_url") if block.broker else None
    outcome = session.outcome(index, amqp_url)
    problems = [
        p
        for command, (output, code) in zip(block.commands, outcome.results)
        for p in check_command(block, command, output, code)
    ]
    if index == len(session.blocks) - 1:  # the doc's last block: what a reader has at the top now
        problems += left_unignored(session.workdir, doc)
    assert not problems, "\n\n".join(problems)


# What a session's directory holds besides what the commands wrote (see DocSession).
SESSION_OWN = {".bin", "examples", "tests"}


def left_unignored(workdir: Path, doc: Path) -> list[str]:
    """The files the doc's commands wrote that git would not ignore at the top of a checkout,
    where the reader runs them (``git status`` would list them, ``git add -A`` take them); a
    reader's own source (``my_algo.py``) is theirs to keep and is not counted."""
    names = sorted(p.name for p in workdir.iterdir() if p.name not in SESSION_OWN and p.suffix != ".py")
    if not names:
        return []
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=ROOT,
        input="\n".join(names) + "\n",
        capture_output=True,
        text=True,
    )
    left = sorted(set(names) - set(done.stdout.split()))
    return (
        [f"{doc.relative_to(ROOT)}: its commands leave {', '.join(left)} at the top, not ignored by git"]
        if left
        else []
    )


# -- the reader itself -------------------------------------------------------------------


def test_every_dollar_mutexlab_line_of_the_docs_is_collected():
    """No console line escapes the parser (an odd fence, an indented block)."""
    for doc in DOCS:
        shown = [
            n
            for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
            if re.match(r"\s*\$ .*\bmutexlab\b", line)
        ]
        collected = [
            c.line for b in parse_blocks(doc) if b.runnable for c in b.commands if MUTEXLAB.search(c.text)
        ]
        assert collected == shown, f"{doc.relative_to(ROOT)}: $-lines {shown}, collected {collected}"
    assert len(_cases()) >= 30


SAMPLE = """\
Some prose.

```console
$ mutexlab verify a.jsonl
bees: SAFE
checked: …
...
$ echo $?
0
$ mutexlab simulate bees --bees 0
...
(exit 2)
```

```bash
docker compose up
```
"""


def test_the_reader_splits_commands_outputs_and_exit_notes():
    blocks = parse_blocks(ROOT / "README.md", SAMPLE)
    assert len(blocks) == 1 and blocks[0].line == 3
    first, echo, bad = blocks[0].commands
    assert (first.line, first.text, first.expected) == (
        4,
        "mutexlab verify a.jsonl",
        ["bees: SAFE", "checked: …", "..."],
    )
    assert (echo.text, echo.expected, echo.exit_code) == ("echo $?", ["0"], None)
    assert (bad.expected, bad.exit_code) == (["..."], 2)


def test_the_comparison_catches_a_wrong_doc_and_names_file_and_line():
    block = parse_blocks(ROOT / "README.md", SAMPLE)[0]
    first, _, bad = block.commands
    assert check_command(block, first, "bees: SAFE\nchecked: capacity\nevents: send 3\n", 0) == []
    wrong = check_command(block, first, "bees: VIOLATION (1)\nchecked: capacity\n", 1)
    assert len(wrong) == 1 and "README.md:4: $ mutexlab verify a.jsonl" in wrong[0]
    assert "-bees: SAFE" in wrong[0] and "+bees: VIOLATION (1)" in wrong[0]
    assert check_command(block, bad, "usage: …\n", 2) == []
    wrong_code = check_command(block, bad, "usage: …\n", 0)
    assert len(wrong_code) == 1 and "README.md:10" in wrong_code[0] and "exit code 0" in wrong_code[0]


def test_elisions_match_only_what_they_stand_for():
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "d"], ["a", "d"])
    assert not matches(["a", "...", "d"], ["a", "b", "c"])
    assert matches(["trace written to …/x.jsonl"], ["trace written to /tmp/q/x.jsonl"])
    assert matches(["time:         1.38 s (9,789 states/s)"], ["time:         0.43 s (31,126 states/s)"])
    assert not matches(["time:         1.38 s (9,789 states/s)"], ["time:         gave up"])
    assert not matches(["peak memory:  41 MB"], ["peak memory:  41 GB"])
    assert not matches(["trace written to …/x.jsonl"], ["trace written to /tmp/q/y.jsonl"])
    assert not matches(["a"], ["a", "extra"])
    assert not matches(["a (1)"], ["a 1"])  # no regular expression leaks from the doc


def test_a_broker_run_is_compared_on_its_stable_lines_only():
    command = Command(
        7,
        "mutexlab run bees --bees 2",
        ["monitor: run run-…: started", "messages: 99", "entries: flower 10, reed 2", "bees: SAFE"],
    )
    block = Block(ROOT / "README.md", 6, [command])
    assert check_command(block, command, "messages: 12\nentries: flower 10, reed 2\nbees: SAFE\n", 0) == []
    missing = check_command(block, command, "messages: 99\nentries: flower 9, reed 2\nbees: SAFE\n", 0)
    assert len(missing) == 1 and "- entries: flower 10, reed 2" in missing[0] and "README.md:7" in missing[0]


def test_a_broker_runs_transport_line_is_compared_by_its_counters_names():
    shown = "transport: duplicates dropped 0, refused joiners 0"
    command = Command(7, "mutexlab run bees --bees 2", [shown, "bees: SAFE"])
    block = Block(ROOT / "README.md", 6, [command])
    ran = "transport: duplicates dropped 3, refused joiners 12{}\nbees: SAFE\n"
    assert check_command(block, command, ran.format(""), 0) == []
    grown = check_command(block, command, ran.format(", forged (no valid MAC) 0"), 0)
    assert len(grown) == 1 and f"- {shown}" in grown[0]


# -- what the docs point at exists -------------------------------------------------------


def repository_files() -> list[Path]:
    """The repository's text files (git's list when there is one, else a walk)."""
    done = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True
    )
    names = (
        done.stdout.splitlines()
        if done.returncode == 0
        else [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts]
    )
    text = (".py", ".md", ".json", ".yml", ".yaml", ".toml", ".txt", ".sh", ".example", ".cfg", ".ini", "")
    return [ROOT / n for n in names if Path(n).suffix in text and (ROOT / n).is_file()]


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    text = doc.read_text(encoding="utf-8")
    found = set(re.findall(r'<a id="([^"]+)"></a>', text))
    found |= {slug(m) for m in re.findall(r"^#+ (.+)$", text, re.M)}
    return found


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
REPO_PATH = re.compile(r"`((?:examples|tests|shared|services|bench|docs|scripts|\.ci)/[\w./-]*)(?:::\w+)?`")
GENERATED = {"bench/results.json"}


def link_problems(doc: Path, text: str | None = None) -> list[str]:
    """Links to missing files or anchors, and repository paths in backticks that do not exist."""
    problems = []
    text = doc.read_text(encoding="utf-8") if text is None else text
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{doc.relative_to(ROOT)}:{number}"
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            if not file.exists():
                problems.append(f"{where}: link to {target}: no such file")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                problems.append(f"{where}: link to {target}: no such anchor in {file.name}")
        for path in REPO_PATH.findall(line):
            if path not in GENERATED and not (ROOT / path).exists():
                problems.append(f"{where}: `{path}` does not exist")
    return problems


LINKED = [*DOCS, *(ROOT / name for name in ("CONTRIBUTING.md", "BENCHMARKS.md", "CHANGELOG.md"))]


def test_links_and_repository_paths_in_the_docs_exist():
    problems = [p for doc in LINKED for p in link_problems(doc)]
    assert not problems, "\n".join(problems)


def test_the_link_check_catches_missing_files_anchors_and_paths():
    text = (
        "[ok](architecture.md#trace-format) [gone](nothere.md) [bad](architecture.md#no-such-part)\n"
        "`examples/scenarios/suzuki-kasami-notes.json` `examples/scenarios/missing.json`\n"
    )
    found = link_problems(ROOT / "docs" / "x.md", text)
    assert len(found) == 3, found
    assert "docs/x.md:1: link to nothere.md: no such file" in found
    assert "docs/x.md:1: link to architecture.md#no-such-part: no such anchor in architecture.md" in found
    assert "docs/x.md:2: `examples/scenarios/missing.json` does not exist" in found
    assert slug("The monitor's live view (a table, 2 lines)") == "the-monitors-live-view-a-table-2-lines"


def section_problems(paths: list[Path]) -> list[str]:
    """References ``architecture.md#anchor`` (in code and docs) to sections that do not exist."""
    known = anchors(ROOT / "docs" / "architecture.md")
    return [
        f"{path.name}:{number}: architecture.md#{anchor}"
        for path in paths
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        for anchor in re.findall(r"architecture\.md#([\w-]+)", line)
        if anchor not in known
    ]


def test_every_reference_to_an_architecture_section_resolves():
    problems = section_problems([p for p in repository_files() if p != Path(__file__).resolve()])
    assert not problems, "no such section in docs/architecture.md:\n" + "\n".join(problems)


def test_the_section_check_catches_a_dangling_reference(tmp_path):
    module = tmp_path / "mod.py"
    module.write_text(
        '"""The trace (docs/architecture.md#trace-format).\n\nSee docs/architecture.md#trace-formats."""\n'
    )
    assert section_problems([module]) == ["mod.py:3: architecture.md#trace-formats"]


# Material outside the repository that the project must not cite (docs/architecture.md#sources).
# (The names are written in pieces, so this file does not cite them itself.)
DESIGN_NOTES, SHARED = "DESIGN" + ".md", "shared" + "/"
OUTSIDE = re.compile(
    "|".join(
        [
            re.escape(DESIGN_NOTES),
            SHARED + r"spec\b",
            SHARED + r"seeds\b",
            r"\bspec/(?:bees|elves)\.md",
            r"(?<!-)\bseed 0\d\d\b",
        ]
    )
)


def test_the_project_cites_nothing_outside_itself():
    problems = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in repository_files()
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not problems, "cite docs/architecture.md instead of material outside the project:\n" + "\n".join(
        problems
    )


def test_the_citation_check_catches_each_kind():
    for text in (
        f"see {DESIGN_NOTES} §5",
        f"../{SHARED}spec/bees.md",
        f"../{SHARED}seeds/000_x.txt",
        "spec/elves.md",
        "(seed 002)",
    ):
        assert OUTSIDE.search(text), text
    assert not OUTSIDE.search("--seed 002 and seed 3 and seeds 0-39")


def test_the_leftover_check_names_what_git_would_list(tmp_path):
    """After the reading order, a reader's `git status` listed 25 files the documents' commands
    wrote at the top (bug.json, ring.log, ra-broken, ...): what is not ignored is named."""
    for name in (".bin", "examples", "bug.json", "ring.log", "ra-broken", "my_algo.py", "notes.txt", "a.out"):
        (tmp_path / name).write_text("")
    assert left_unignored(tmp_path, ROOT / "docs" / "tour.md") == [
        "docs/tour.md: its commands leave a.out, notes.txt at the top, not ignored by git"
    ]
