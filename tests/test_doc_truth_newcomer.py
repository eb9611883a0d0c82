"""What a newcomer reads on the way from the README through the tour, held to the code: claims
made in prose (not in a console block, which tests/test_docs_commands.py runs) about what the
explorer serves, how the full test run is run, and what a command prints. Each check is shown
catching a planted error."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from doc_truth import DOCS, ROOT, documented_codes
from test_explore_server import _explorer, _state, _stop
from test_report import chromium, open_in_chromium  # noqa: F401  (the fixture)

from mutexlab.explore.server import STATIC

WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
PAGE_FILES = re.compile(r"the page's (\w+) files")


def page_file_findings(docs: dict[str, str]) -> list[str]:
    """Every "the page's N files" that does not count the files the explorer serves."""
    found = []
    for name, text in docs.items():
        for m in PAGE_FILES.finditer(text):
            said = WORDS.get(m.group(1).lower())
            if said != len(STATIC):
                line = text.count("\n", 0, m.start()) + 1
                found.append(
                    f"{name}:{line}: says {m.group(0)!r}; the explorer serves {len(STATIC)}: {sorted(STATIC)}"
                )
    return found


def documents() -> dict[str, str]:
    return {str(doc.relative_to(ROOT)): doc.read_text(encoding="utf-8") for doc in DOCS}


def test_the_explorers_page_files_are_counted_as_it_serves_them():
    texts = documents()
    assert any(PAGE_FILES.search(t) for t in texts.values()), "the docs no longer count the page's files"
    assert page_file_findings(texts) == []


def test_the_page_file_count_check_reports_a_planted_count():
    planted = {"docs/x.md": "intro\nserves only the page's three files, the diagram"}
    found = page_file_findings(planted)
    assert len(found) == 1 and found[0].startswith("docs/x.md:2:"), found


# The full run is the README's command, on two workers; a sentence telling to run it without -n
# (as docs/install.md said, from before the broker tests ran under xdist) sends a newcomer to a
# run twice as long, against what the README, CONTRIBUTING.md and CI do.
FULL_RUN = "python -m pytest -q -n 2 --dist loadfile"
WITHOUT_N = re.compile(r"full (?:test )?run[^.]*\bwithout\s+`-n`", re.S)


def full_run_findings(docs: dict[str, str]) -> list[str]:
    found = []
    for name, text in docs.items():
        for m in WITHOUT_N.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{name}:{line}: {m.group(0)!r}, but the full run is `{FULL_RUN}`")
    return found


def test_the_full_run_is_told_one_way():
    texts = documents()
    assert FULL_RUN in texts["README.md"] and FULL_RUN in texts["docs/install.md"]
    assert full_run_findings(texts) == []


def test_the_full_run_check_reports_a_planted_contradiction():
    planted = {
        "docs/i.md": "a\nb. The full run is meant to run without\n`-n` (the broker tests share one broker)."
    }
    found = full_run_findings(planted)
    assert len(found) == 1 and found[0].startswith("docs/i.md:2:"), found


def test_explore_says_as_many_processes_as_the_page_shows():
    """The elves' page shows the mayor's card beside P elves' ("5 processes (P = 4, and mayor)");
    the command's first line said "elves, 4 processes", one fewer than the page beside it."""
    proc, host, port, first = _explorer("elves", "--elves", "4")
    try:
        state = _state(host, port)
    finally:
        _stop(proc)
    cards = len(state["procs"])
    assert cards == 5 and state["processes"] == 4
    assert first.startswith(f"mutexlab explore: elves, {cards} processes (P = 4, and mayor)"), first


def test_an_elfs_card_shows_its_contract_and_queues_as_what_they_are():
    """docs/explore.md: requests ``(ts, pid)`` read ``ts@pid``. An elf's ``holding`` is (contract,
    hamsters) and its queues map pid → (ts, units): the card showed contract 1 of 4 hamsters as
    ``1@4`` and pid 2's pins request at 14 as ``2: 14@1``, requests by pids that do not exist."""
    from mutexlab.explore.session import Config, Session

    s = Session(Config("elves", 4, {}))
    s.random(40, seed=1)
    cards = {p["name"]: dict(p["fields"]) for p in s.state()["procs"]}
    protocols = s.world.run.protocols
    checked = 0
    for pid, proto in protocols.items():
        if not hasattr(proto, "queues"):
            continue  # the mayor
        card = cards[f"elf-{pid}"]
        if proto.holding is not None:
            index, hamsters = proto.holding
            assert card["holding"] == f"contract {index} ({hamsters} hamsters)", card
            checked += 1
        for kind in ("pins", "poison"):
            queue = proto.queues[kind]
            said = sorted((ts, who, units) for who, (ts, units) in queue.items())
            assert card[f"{kind} queue"] == "[" + ", ".join(f"{t}@{w} ×{u}" for t, w, u in said) + "]", card
            checked += len(queue)
    assert checked >= 4, "the walk no longer reaches held contracts and queued pins"


def test_every_command_has_its_exit_codes_in_the_table():
    """docs/exit-codes.md is "what every command's exit code means": `explore` and `tables` had no
    row (and `explore` exits 0 on Ctrl-C, where the page said every command exits 130)."""
    from mutexlab.cli import COMMANDS

    table = (ROOT / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    first_cells = [line.split(" | ")[0] for line in table.splitlines() if line.startswith("| `mutexlab ")]
    rows = {name for cell in first_cells for name in re.findall(r"`mutexlab ([\w-]+)", cell)}
    assert {command.split()[0] for command in documented_codes(table)} <= rows
    missing = sorted(
        c for c in COMMANDS if c not in rows and f"`mutexlab {c}` says its own codes" not in table
    )
    assert missing == [], f"commands without exit codes in docs/exit-codes.md: {missing}"
    assert "`explore` is the exception" in table


def test_tables_takes_a_file_and_refuses_an_unwritable_one_with_exit_2(cli, tmp_path):
    """Every command takes a solution by path (README); `tables ./file.py` said "cannot be
    imported", and `--write` to a folder that does not exist was an internal error, exit 4."""
    ran = cli("tables", str(ROOT / "examples" / "protocols" / "central.py"))
    assert ran.returncode == 0, ran.stderr
    assert "`CentralNode`:" in ran.stdout and "central.py`)." in ran.stdout
    ran = cli("tables", "--write", str(tmp_path / "no-such-folder" / "protocols.md"))
    assert ran.returncode == 2 and "cannot write" in ran.stderr and "Traceback" not in ran.stderr, ran.stderr


def test_the_problem_is_called_a_problem_and_a_scenario_file_is_pointed_to_scenario(cli):
    """The README's words: a scenario is a script of steps (what --scenario FILE opens); bees,
    elves, mutex ... are problems. Usage said `mutexlab explore SCENARIO`, so a newcomer gave it a
    scenario file and read "argument SCENARIO: invalid choice: '….json'"."""
    example = str(ROOT / "examples" / "scenarios" / "maekawa-inquire-yield.json")
    ran = cli("explore", example)
    assert ran.returncode == 2
    assert "argument PROBLEM: invalid choice" in ran.stderr, ran.stderr
    assert f"mutexlab explore mutex --scenario {example}" in ran.stderr, ran.stderr
    for command in ("simulate", "run", "check", "explore"):
        ran = cli(command)
        assert ran.returncode == 2 and "required: PROBLEM" in ran.stderr, (command, ran.stderr)


PORT_COMMAND = "docker compose port rabbitmq 15672"


def management_port_findings(texts: dict[str, str]) -> list[str]:
    """Each mention of the command that prints the management UI's port must say it answers only
    while the stack runs: after `up --exit-code-from` it says `service "rabbitmq" is not running`."""
    found = []
    for name, text in texts.items():
        start = text.find(PORT_COMMAND)
        while start >= 0:
            after = " ".join(text[start : start + 200].replace("#", " ").split())
            if "while the stack runs" not in after:
                found.append(f"{name}:{text.count(chr(10), 0, start) + 1}: {after[:90]!r}")
            start = text.find(PORT_COMMAND, start + 1)
    return found


def test_the_management_port_is_said_to_be_printed_while_the_stack_runs():
    texts = {**documents(), ".env.example": (ROOT / ".env.example").read_text(encoding="utf-8")}
    assert sum(t.count(PORT_COMMAND) for t in texts.values()) >= 3
    assert management_port_findings(texts) == []
    planted = {"docs/t.md": f"a port Docker picks — `{PORT_COMMAND}` prints it."}
    assert len(management_port_findings(planted)) == 1


SERVICE_BY_HAND = re.compile(r"services/\w+/main\.py|python -m mutexlab\.services \w")


def by_hand_findings(texts: dict[str, str]) -> list[str]:
    """A code block that starts services by hand must give them the run's secret: without it
    each refuses to start (`bad configuration: settings: no run secret`), exit 2."""
    found = []
    for name, text in texts.items():
        for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M):
            started = [
                line for line in block.splitlines() if line.startswith("$ ") and SERVICE_BY_HAND.search(line)
            ]
            if started and "MUTEXLAB_RUN_SECRET" not in block:
                found.append(f"{name}: {started[0]!r} without MUTEXLAB_RUN_SECRET")
    return found


def test_services_started_by_hand_are_given_the_runs_secret():
    texts = documents()
    assert any(SERVICE_BY_HAND.search(t) for t in texts.values())
    assert by_hand_findings(texts) == []
    planted = {"docs/r.md": "```\n$ export RUN_ID=x\n$ python services/monitor/main.py &\n```\n"}
    assert len(by_hand_findings(planted)) == 1


def test_a_finding_whose_rule_is_its_kind_says_the_kind_once(chromium, tmp_path, capsys):  # noqa: F811
    """docs/report.md: an INCOMPLETE box lists the unfinished findings. The bees' rule
    ``unfinished`` (a bee that ends neither DEAD nor RETIRED) read "unfinished [unfinished] bee-3
    ended in ON_FLOWER" there; the other findings keep their kind: "unfinished [left-waiting] …"."""
    from mutexlab.cli import main
    from mutexlab.report import build_model
    from mutexlab.trace import read_trace

    trace = tmp_path / "b.jsonl"
    small = ["--bees", "3", "--flowers", "1", "--reeds", "2", "--eggs", "1", "--cocoons", "1"]
    assert main(["simulate", "bees", *small, "--trace", str(trace)]) == 0
    cut = tmp_path / "cut.jsonl"
    lines = trace.read_text(encoding="utf-8").splitlines(keepends=True)
    cut.write_text("".join(lines[:60]), encoding="utf-8")
    rules = {v["rule"] for v in build_model(read_trace(cut))["verdict"]["violations"]}
    assert {"unfinished", "left-waiting"} <= rules, rules
    page = tmp_path / "cut.html"
    assert main(["report", str(cut), "-o", str(page)]) == 0
    check = open_in_chromium(chromium, page)
    assert check["errors"] == [] and check["status"] == "INCOMPLETE"
    verdict = re.search(
        r'<section id="verdict" class="incomplete">(.*?)</section>', check["dom"], re.S
    ).group(1)
    text = " ".join(re.sub(r"<[^>]+>", "", verdict).split())
    assert "unfinished [unfinished]" not in text, text
    assert "[unfinished] bee-3 ended in" in text and "unfinished [left-waiting] bee-2" in text, text


# docs/install.md's test subsets, each row with the count of tests it selects today. The quick row
# said "1,972 tests" (2026-11-27) when the subset held 3,573, and nothing told the two apart.
COUNTED = re.compile(r"([\d,]+) tests \(counted with `--collect-only -q`, (\d{4}-\d{2}-\d{2})\)")
SUBSETS = {
    'python -m pytest -q -n auto -m "not slow and not broker"': ["-m", "not slow and not broker"],
    "python -m pytest -q -n 2 --dist loadfile": [],
}


def counted_in_install(text: str) -> dict[str, int]:
    """The count each subset's row of the table states as counted, by the row's command."""
    found = {}
    for line in text.splitlines():
        for command in SUBSETS:
            if line.startswith(f"| `{command}` |") and (m := COUNTED.search(line)):
                found[command] = int(m.group(1).replace(",", ""))
    return found


def test_each_test_subset_states_the_count_it_selects_as_counted():
    text = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    assert set(counted_in_install(text)) == set(SUBSETS)
    planted = text.replace("(counted with `--collect-only -q`, 2026-12-01)", "(2026-11-27)")
    assert counted_in_install(planted) == {}


@pytest.mark.slow
def test_the_counted_numbers_of_tests_are_within_a_tenth_of_what_pytest_collects():
    """Slow (collecting imports every test module, about 30 s of CPU): the full run keeps it.
    One collection gives both counts: "3573/3941 tests collected (368 deselected)"."""
    said = counted_in_install((ROOT / "docs" / "install.md").read_text(encoding="utf-8"))
    quick, every = SUBSETS
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *SUBSETS[quick]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    selected, collected = map(int, re.search(r"(\d+)/(\d+) tests collected", ran.stdout).groups())
    for command, count in ((quick, selected), (every, collected)):
        assert abs(said[command] - count) <= count // 10, (
            f"docs/install.md says {said[command]} tests for `{command}`; pytest collects {count}: "
            "count them again with --collect-only -q and date the count"
        )


# The tour's start-up time of a small run over RabbitMQ is BENCHMARKS.md's measured figure: it said
# "about 1 s on an idle 2-core machine", where the benchmark measured 0.67 s and a loaded machine 6-7 s.
STARTUP = "`mutexlab run mutex -N 5 --requests 20 --dwell 0`"


def startup_findings(tour: str, benchmarks: str) -> list[str]:
    row = next(line for line in benchmarks.splitlines() if line.startswith("| start-up, " + STARTUP))
    figure, date = re.search(r"\| ([\d.]+ s) \(median of \d+\) \|.*\| (\d{4}-\d{2}-\d{2}),", row).groups()
    found = []
    for m in re.finditer(re.escape(STARTUP), tour):
        after = " ".join(tour[m.end() : m.end() + 200].split())
        if not after.startswith(f"took {figure} end to end") or date not in after:
            found.append(
                f"docs/tour.md:{tour.count(chr(10), 0, m.start()) + 1}: {after[:80]!r}, measured {figure} ({date})"
            )
    return found


def test_the_tours_start_up_time_is_the_measured_one():
    tour = (ROOT / "docs" / "tour.md").read_text(encoding="utf-8")
    benchmarks = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert STARTUP in tour
    assert startup_findings(tour, benchmarks) == []
    planted = tour.replace("took 0.67 s end to end", "takes about 1 s end to end")
    assert len(startup_findings(planted, benchmarks)) == 1


# The README said "a run is audited as it goes (unless `--no-audit`)", as if every run took it;
# only `simulate bees` does (its audit is fed as the run goes): elves, mutex, run, replay, check
# answer "unrecognized arguments: --no-audit", exit 2.
AUDITED_COMMANDS = (
    [["simulate", p] for p in ("bees", "elves", "mutex", "kmutex", "philosophers")]
    + [["run", p] for p in ("bees", "elves", "mutex")]
    + [["replay"], ["check", "mutex"], ["compare"]]
)


def no_audit_findings(text: str, takers: list[str]) -> list[str]:
    """Each `--no-audit` of ``text`` must name, just before it, a command that takes the flag."""
    found = []
    for m in re.finditer(r"`[^`]*--no-audit[^`]*`", text):
        said = " ".join(text[max(0, m.start() - 60) : m.end()].split())
        if not any(command in said for command in takers):
            found.append(f"README.md:{text.count(chr(10), 0, m.start()) + 1}: {said!r}")
    return found


def test_the_readme_names_the_one_command_that_skips_the_audit(capsys):
    from mutexlab.cli import main

    takers = []
    for argv in AUDITED_COMMANDS:
        with pytest.raises(SystemExit):
            main([*argv, "--help"])
        if "--no-audit" in capsys.readouterr().out:
            takers.append(" ".join(argv))
    assert takers == ["simulate bees"], takers
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "--no-audit" in readme
    assert no_audit_findings(readme, takers) == []
    planted = "as separate processes. A run is audited as it goes (unless `--no-audit`) and writes"
    assert len(no_audit_findings(planted, takers)) == 1


# The README lists the languages of examples/nodes/; ricart_agrawala.pl came and the list kept
# "C, C++, Java, JavaScript, Python, Rust and awk".
LANGUAGES = {
    ".c": "C",
    ".cpp": "C++",
    ".java": "Java",
    ".js": "JavaScript",
    ".py": "Python",
    ".pl": "Perl",
    ".rs": "Rust",
    ".awk": "awk",
}


def languages_left_out(readme: str) -> list[str]:
    listed = re.search(r"Examples in ([^:]+): `examples/nodes/`", readme)
    assert listed, "the README no longer lists the node examples' languages"
    said = set(re.split(r",\s*|\s+and\s+", " ".join(listed.group(1).split())))
    present = {path.suffix for path in (ROOT / "examples" / "nodes").iterdir()}
    unknown = present - set(LANGUAGES) - {"", ".h", ".yml"}
    assert not unknown, f"examples/nodes/ holds {sorted(unknown)}: name their language here"
    return sorted(LANGUAGES[s] for s in present & set(LANGUAGES) if LANGUAGES[s] not in said)


def test_the_readme_names_every_language_of_the_node_examples():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert languages_left_out(readme) == []
    assert languages_left_out(readme.replace("Python, Perl, Rust", "Python, Rust")) == ["Perl"]


# `mutexlab check|explore|run bees|elves|mutex` in the tour, check.md, explore.md and rabbitmq.md:
# each command takes kmutex and philosophers too (with a solution file), as the README's
# `simulate bees|elves|mutex|kmutex|philosophers` says for simulate.
PROBLEM_LIST = re.compile(r"`mutexlab (simulate|check|explore|run) ([a-z]+(?:\|[a-z]+)+)`")


def problem_list_findings(texts: dict[str, str], problems_of) -> list[str]:
    found = []
    for name, text in texts.items():
        for m in PROBLEM_LIST.finditer(text):
            said, takes = m.group(2).split("|"), problems_of(m.group(1))
            if said != takes:
                line = text.count("\n", 0, m.start()) + 1
                found.append(f"{name}:{line}: {m.group(0)}; the command takes {'|'.join(takes)}")
    return found


def test_each_commands_list_of_problems_is_the_one_it_takes(capsys):
    from mutexlab.cli import main

    def problems_of(command: str) -> list[str]:
        with pytest.raises(SystemExit):
            main([command, "--help"])
        listed = capsys.readouterr().out.split("positional arguments:")[1].split("options:")[0]
        return re.findall(r"^    ([a-z]+)\b", listed, re.M)

    texts = documents()
    assert sum(len(PROBLEM_LIST.findall(t)) for t in texts.values()) >= 7
    assert problem_list_findings(texts, problems_of) == []
    planted = {"docs/t.md": "a\n`mutexlab explore bees|elves|mutex` serves"}
    assert len(problem_list_findings(planted, problems_of)) == 1


# rabbitmq.md gave `run`'s whole time as "most of it six Python interpreters starting", from before
# `run` forked its participants (the same page: "none of them pays an interpreter's start-up").
# Only containers and MUTEXLAB_SPAWN=exec start interpreters.
INTERPRETERS = re.compile(r"Python interpreters starting")


def interpreter_findings(texts: dict[str, str]) -> list[str]:
    found = []
    for name, text in texts.items():
        for m in INTERPRETERS.finditer(text):
            before = text[max(0, m.start() - 400) : m.start()]
            if not re.search(r"compose|container|MUTEXLAB_SPAWN=exec", before):
                found.append(
                    f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r} of a forked run"
                )
    return found


def test_a_runs_time_is_not_put_on_interpreters_it_no_longer_starts():
    texts = documents()
    assert "forked from the command" in texts["docs/rabbitmq.md"]
    assert interpreter_findings(texts) == []
    planted = {
        "docs/r.md": "a run\n\nWith `--dwell 0`: 2.581 s in all, most of it six Python interpreters starting."
    }
    assert len(interpreter_findings(planted)) == 1


def test_the_tour_shows_every_command_as_it_says():
    """The tour is "every command of mutexlab once" (its first line, and docs/README.md); `test`,
    `mpicc` and `mpicxx`, the commands for a program written elsewhere, were not in it."""
    from mutexlab.cli import COMMANDS

    tour = (ROOT / "docs" / "tour.md").read_text(encoding="utf-8")
    assert "every command of mutexlab once" in tour
    missing = sorted(c for c in COMMANDS if f"`mutexlab {c}" not in tour and f"$ mutexlab {c} " not in tour)
    assert missing == [], f"commands the tour never shows: {missing}"
