"""The explorer in a real browser: Playwright driving Debian's Chromium (``/usr/bin/chromium``;
nothing downloads a browser).

Clicks what a person clicks, reads what the page shows, and fails on any console error or
uncaught exception (of the page or of the diagram frame). Screenshots go to ``artifacts/``
(gitignored; ``MUTEXLAB_ARTIFACTS`` overrides). Without Playwright or Chromium the tests skip
saying why — under CI (``CI`` set) that is a failure instead.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import missing

from mutexlab.explore.server import make_server
from mutexlab.explore.session import Config, Session

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "scenarios"
ARTIFACTS = Path(os.environ.get("MUTEXLAB_ARTIFACTS", ROOT / "artifacts"))
CHROMIUM = "/usr/bin/chromium"
TIMEOUT_MS = 60_000  # generous: the machine running the tests may be busy

try:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=60_000)  # = TIMEOUT_MS: the machine running the tests may be busy
except ImportError:  # pragma: no cover - depends on the environment
    sync_playwright = None


def _unavailable() -> str | None:
    if sync_playwright is None:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _unavailable()
    if reason:
        missing(f"the browser tests cannot run: {reason}")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


class Explorer:
    """One server with one session, and one page on it that records every console error."""

    def __init__(self, browser, session: Session, tmp_path: Path) -> None:
        self.server = make_server(session, "127.0.0.1", 0)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        self.context.set_default_timeout(TIMEOUT_MS)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on(
            "console",
            lambda m: self.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
        )
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.tmp = tmp_path
        self.page.goto(self.server.url)
        expect(self.page.locator("#steps button, #steps .none").first).to_be_visible()

    def close(self) -> None:
        self.context.close()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)

    # -- reading the page ----------------------------------------------------------------
    def position(self) -> int:
        return int(self.page.locator("#position").inner_text())

    def wait_position(self, n: int) -> None:
        expect(self.page.locator("#position")).to_have_text(str(n))
        expect(self.page.locator("#undo")).to_be_enabled() if n else None

    def step_ids(self) -> list[str]:
        return [b.get_attribute("data-step-id") for b in self.page.locator("#steps button").all()]

    def entered(self) -> list[str]:
        text = self.page.locator("#entered").inner_text()
        names = text.split(":", 1)[1].strip()
        return [] if names == "nobody yet" else [n.strip() for n in names.split(",")]

    def card(self, name: str):
        return self.page.locator(f".card[data-name='{name}']")

    def diagram(self) -> dict:
        """The report's self-check of the diagram frame, once it shows the current position."""
        expect(self.page.locator("#diagram")).to_have_attribute("src", re.compile(rf"at={self.position()}&"))
        check = self.page.frame_locator("#diagram").locator("#selfcheck")
        expect(check).to_contain_text('"rendered":true')
        return json.loads(check.text_content())

    # -- acting ----------------------------------------------------------------------------
    def click_step(self, sid: str) -> None:
        n = self.position()
        self.page.locator(f"#steps button[data-step-id='{sid}']").click()
        self.wait_position(n + 1)

    def click(self, button: str, expect_position: int) -> None:
        self.page.locator(button).click()
        expect(self.page.locator("#position")).to_have_text(str(expect_position))

    def shot(self, name: str, full_page: bool = True) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / name
        self.page.wait_for_timeout(300)  # let the diagram frame settle its height
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


@pytest.fixture
def explorer(browser, tmp_path):
    made: list[Explorer] = []

    def make(session: Session) -> Explorer:
        e = Explorer(browser, session, tmp_path)
        made.append(e)
        return e

    yield make
    for e in made:
        e.close()
    for e in made:
        assert e.errors == [], e.errors


def _replay(path: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "shared"), str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "mutexlab", "replay", str(path), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_ricart_agrawala_click_until_someone_enters_undo_branch_export_and_replay(explorer):
    e = explorer(Session(Config("ricart-agrawala", 3, {"requests": 1})))
    page = e.page
    assert e.step_ids() == ["request:1", "request:2", "request:3"]
    # click the first enabled step until someone holds the critical section
    taken = []
    while not page.locator(".card.holder").count():
        sid = e.step_ids()[0]
        e.click_step(sid)
        taken.append(sid)
        assert len(taken) < 40
    first = e.entered()
    assert len(first) == 1
    expect(e.card(first[0])).to_have_class(re.compile(r"\bholder\b"))
    expect(e.card(first[0])).to_contain_text("holds cs")
    grown = e.diagram()
    assert grown["arrows"] > 0 and grown["errors"] == []
    # undo: the entry is gone, the step is ahead
    e.click("#undo", len(taken) - 1)
    expect(page.locator(".card.holder")).to_have_count(0)
    assert e.entered() == []
    expect(page.locator("#history li.ahead")).to_have_count(1)
    # a different branch: another enabled step than the one undone
    other = [s for s in e.step_ids() if s != taken[-1]]
    assert other, "only one step was enabled: no other branch to take"
    e.click_step(other[0])
    expect(page.locator("#history li.ahead")).to_have_count(0)
    # on to the end, always the last button (deliveries before new local decisions)
    while e.step_ids():
        e.click_step(e.step_ids()[-1])
        assert e.position() < 200
    expect(page.locator("#status")).to_have_attribute("data-status", "end")
    entered = e.entered()
    assert sorted(entered) == ["node-1", "node-2", "node-3"]
    final = e.diagram()
    assert final["arrows"] > grown["arrows"] and final["safe"] is True
    e.shot("explore-ricart-agrawala.png")
    # export (a real download) and replay it with `mutexlab replay`: the same entry order
    with page.expect_download() as info:
        page.locator("#export").click()
    target = e.tmp / info.value.suggested_filename
    info.value.save_as(target)
    scenario = json.loads(target.read_text())
    assert len(scenario["steps"]) == e.position()
    outcome = _replay(target)
    assert outcome["entered"] == entered and outcome["safe"] is True


def test_suzuki_kasami_notes_from_the_menu_stepped_to_the_end(explorer):
    e = explorer(Session(Config("ricart-agrawala", 2, {"requests": 1})))
    page = e.page
    expect(page.locator("#examples option[value='suzuki-kasami-notes']")).to_have_count(1)
    page.select_option("#examples", "suzuki-kasami-notes")
    expect(page.locator("#algorithm")).to_have_text("suzuki-kasami")
    expect(page.locator("#ahead")).to_have_text(" (10 ahead)")
    assert e.position() == 0
    expect(e.card("node-2")).to_contain_text("L = [0, 0, 0], Q = []")
    for n in range(1, 11):  # step through it, one redo at a time
        e.click("#redo", n)
    expect(e.card("node-3")).to_contain_text("L = [1, 0, 1], Q = []")
    expect(e.card("node-1")).to_contain_text("no token")
    expect(page.locator("#status")).to_have_attribute("data-status", "end")
    assert e.entered() == ["node-1", "node-3"]
    expect(page.locator("#links")).to_contain_text("nothing in flight")
    assert e.diagram()["errors"] == []
    e.shot("explore-suzuki-kasami.png")
    # and back: jump to step 6 from the history (node-1 inside with the token; it knows 3 asked)
    page.locator("#history li[data-n='6']").click()
    expect(page.locator("#position")).to_have_text("6")
    expect(e.card("node-1")).to_have_class(re.compile(r"\bholder\b"))
    expect(e.card("node-1")).to_contain_text("L = [0, 0, 0], Q = []")
    expect(e.card("node-1")).to_contain_text("RN[1, 0, 1]")
    e.click("#redo", 7)  # node-1 leaves: L[1] = 1, 3 is owed the token, which goes out
    expect(page.locator(".link[data-link='1-3'] .chip.head")).to_contain_text(
        "TOKEN ts 5 last [1, 0, 0] queue []"
    )


def test_a_broken_variant_shows_its_violation_the_moment_it_happens(explorer):
    e = explorer(Session(Config("tests.mutexlab_broken.ricart_agrawala", 2, {"requests": 1})))
    page = e.page
    e.click_step("request:1")
    expect(page.locator("#status")).to_have_attribute("data-status", "running")
    e.click_step("request:2")
    status = page.locator("#status")
    expect(status).to_have_attribute("data-status", "violation")
    expect(page.locator("#summary")).to_contain_text("VIOLATION after 2 steps")
    expect(page.locator("#violations")).to_contain_text("cs (capacity 1) held by node-1×1, node-2×1 at once")
    expect(page.locator("#violations")).to_contain_text("[capacity]")
    expect(page.locator(".card.bad")).to_have_count(2)
    expect(page.locator("#capacity tr.over")).to_contain_text("OVER CAPACITY")
    assert e.diagram()["safe"] is False
    e.shot("explore-broken-ricart-agrawala.png")


def test_a_deadlock_is_shown_with_the_stall_explanation(explorer):
    e = explorer(Session(Config("tests.mutexlab_broken.ricart_agrawala_proud", 2, {"requests": 1})))
    for sid in ["request:1", "request:2", "deliver:1-2", "deliver:2-1"]:
        e.click_step(sid)
    expect(e.page.locator("#status")).to_have_attribute("data-status", "deadlock")
    expect(e.page.locator("#deadlock")).to_contain_text("deadlock: wait-for cycle node-1 → node-2 → node-1")
    expect(e.page.locator("#steps")).to_contain_text("none: the path has ended")


def test_import_a_file_random_steps_and_run_to_the_end(explorer):
    config = Config("lamport", 3, {"requests": 1})
    same = Session(config)  # the same walk, without the page: the seed decides it
    same.random(5, 3)
    same.run_to_end(3)
    e = explorer(Session(config))
    page = e.page
    page.locator("#count").fill("5")
    page.locator("#seed").fill("3")
    e.click("#random", 5)
    e.click("#run", same.state()["position"])
    expect(page.locator("#status")).to_have_attribute("data-status", "end")
    e.click("#reset", 0)
    page.set_input_files("#import", str(EXAMPLES / "bees-late-ackflower.json"))
    expect(page.locator("#algorithm")).to_have_text("bees")
    expect(page.locator("#ahead")).to_have_text(" (24 ahead)")
    e.click("#forward", 24)
    expect(page.locator("#status")).to_have_attribute("data-status", "end")
    # a file that is not a scenario: a clear message, nothing changes
    bad = e.tmp / "bad.json"
    bad.write_text('{"algorithm": "bees", "processes": 3, "steps": [{"op": "exit", "pid": 2}]}')
    page.set_input_files("#import", str(bad))
    expect(page.locator("#error")).to_contain_text(
        "step 1 (exit): bee-2 cannot take exit in state REST: it is not on a flower"
    )
    assert e.position() == 24
    refused = "Failed to load resource: the server responded with a status of 422"
    assert any(refused in x for x in e.errors)  # the browser logs the refused request itself ...
    e.errors[:] = [
        x for x in e.errors if refused not in x
    ]  # ... which is the expected answer, not a page error


def test_walkthrough_maekawa_inquire_yield(explorer):
    """The tour's walkthrough (docs/tour.md): the notes' Maekawa example, clicked through to the YIELD."""
    e = explorer(Session(Config("ricart-agrawala", 2, {"requests": 1})))
    page = e.page
    page.select_option("#examples", "maekawa-inquire-yield")
    expect(page.locator("#ahead")).to_have_text(" (24 ahead)")
    for n in range(1, 15):
        e.click("#redo", n)
    # step 14: node-3 was inquired by 6 and holds the INQUIRE; the FAILED from 4 is next on 4→3
    expect(e.card("node-3")).to_contain_text("INQUIRE from")
    expect(page.locator(".link[data-link='4-3'] .chip.head")).to_contain_text("FAILED")
    e.click("#redo", 15)
    # step 15: the FAILED arrived; node-3 yields to 6 — the YIELD is in flight
    expect(e.card("node-3")).to_contain_text("yielded to")
    expect(page.locator(".link[data-link='3-6'] .chip.head")).to_contain_text("YIELD")
    e.diagram()
    e.shot("explore-maekawa-yield.png", full_page=False)
    e.click("#redo", 16)
    e.click("#redo", 17)
    expect(e.card("node-2")).to_have_class(re.compile(r"\bholder\b"))
    assert e.entered() == ["node-2"]


@pytest.mark.parametrize(
    "config, said",
    [
        (Config("ricart-agrawala", 3, {"requests": 1}), "Lamport clocks start at 0 and tick"),
        (
            Config("ricart-agrawala", 3, {"requests": 1, "initial_clocks": {"1": 5, "2": 7}}),
            "Lamport clocks start at node-1 5, node-2 7, node-3 0 (as the setup gives them",
        ),
        (
            Config(str(ROOT / "examples" / "solutions" / "bees_reed_tokens.py"), 3, {}),
            "Lamport clocks start at bee-1 ",
        ),
    ],
    ids=["zero", "option", "solution"],
)
def test_the_page_says_where_the_clocks_start_as_the_cards_show_it(explorer, config, said):
    """The page said "Lamport clocks start at 0" above cards showing node-1 at 5 (the option
    initial_clocks) or bee-1 at 21 (docs/your-bees.md's solution draws its own): it now names each
    process's clock as the setup built it, which the cards show at step 0."""
    e = explorer(Session(config))
    text = e.page.locator("#clocks").inner_text()
    assert text.startswith(said), text
    clocks = [
        int(e.card(f"{name}-{pid}").locator(".clock").inner_text().split()[-1])
        for name in ("node", "bee")
        for pid in (1, 2, 3)
        if e.card(f"{name}-{pid}").count()
    ]
    if "start at 0" in said:
        assert clocks == [0, 0, 0]
    else:
        listed = text.removeprefix("Lamport clocks start at ").split(" (")[0].split(", ")
        starts = [int(item.split()[1]) for item in listed]
        assert len(listed) == 3 and starts == clocks and any(starts), (text, clocks)
