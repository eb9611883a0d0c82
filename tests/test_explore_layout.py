"""The explorer's page and the report's diagram as a person sees them at 1280 and 1920 px
(Playwright driving Debian's Chromium, as tests/test_explore_browser.py does):

* no process name (``elf-4``, ``bee-3→bee-2``) is broken across lines: every name span, card
  name and link name has one client rect, one line high;
* the cards use the width they are given: their first row spans the grid, and cards cover most of
  the grid's area (no empty half-page);
* every arrow of the diagram, delivered or in flight, ends on its receiver's line, inside the
  plot: read from the drawn SVG (``line.msg``'s ``x2``/``y2`` and ``data-to`` against
  ``line.proc-line``), also with a window that cuts arrows at its right edge;
* the checks themselves catch a broken page (a name allowed to wrap, an arrow ending elsewhere).
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest
from test_explore_browser import EXAMPLES, TIMEOUT_MS, browser, expect  # noqa: F401 (browser: the fixture)

from mutexlab.explore.server import make_server
from mutexlab.explore.session import Config, Session, session_from_scenario

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WIDTHS = (1280, 1920)

# Every name-like element whose text must stay on one line: [description, rects, height, line].
BROKEN_NAMES = """() => {
  const out = [];
  for (const e of document.querySelectorAll(".nm, .card .name, .link .lname")) {
    const rects = e.getClientRects(), style = getComputedStyle(e);
    const line = parseFloat(style.lineHeight) || 1.4 * parseFloat(style.fontSize);
    const height = e.getBoundingClientRect().height;
    if (rects.length > 1 || height > 1.5 * line) out.push([e.textContent, rects.length, height, line]);
  }
  return out;
}"""

# How the cards fill #procs: the first row's share of the width, the cards' share of the area.
CARD_FILL = """() => {
  const box = document.getElementById("procs").getBoundingClientRect();
  const cards = [...document.querySelectorAll("#procs .card")].map(c => c.getBoundingClientRect());
  const top = Math.min(...cards.map(r => r.top));
  const row = cards.filter(r => Math.abs(r.top - top) < 2);
  const span = Math.max(...row.map(r => r.right)) - Math.min(...row.map(r => r.left));
  const area = cards.reduce((a, r) => a + r.width * r.height, 0);
  return {row: span / box.width, area: area / (box.width * box.height), cards: cards.length,
          widths: cards.map(r => Math.round(r.width))};
}"""

# Every arrow that does not end on its receiver's line, or ends outside the plot.
STRAY_ARROWS = """() => {
  const svg = document.getElementById("diagram");
  const check = JSON.parse(document.getElementById("selfcheck").textContent);
  const lineY = {};
  for (const l of svg.querySelectorAll("line.proc-line")) lineY[l.dataset.proc] = +l.getAttribute("y1");
  const out = [], arrows = svg.querySelectorAll("line.msg");
  for (const a of arrows) {
    const x2 = +a.getAttribute("x2"), y2 = +a.getAttribute("y2"), to = a.dataset.to;
    const inside = x2 >= check.left - 0.5 && x2 <= check.width - check.right + 0.5;
    if (!(to in lineY) || Math.abs(y2 - lineY[to]) > 0.5 || !inside)
      out.push([a.dataset.k, to, x2, y2, lineY[to]]);
  }
  return {stray: out, arrows: arrows.length, inflight: svg.querySelectorAll("line.msg.inflight").length,
          beyond: svg.querySelectorAll("line.msg.beyond").length};
}"""


class Page:
    """One explorer server on ``session`` and one page at ``width`` px."""

    def __init__(self, chromium, session: Session, width: int) -> None:
        self.server = make_server(session, "127.0.0.1", 0)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.context = chromium.new_context(viewport={"width": width, "height": 1000})
        self.context.set_default_timeout(TIMEOUT_MS)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(self.server.url)
        expect(self.page.locator("#procs .card").first).to_be_visible()

    def close(self) -> None:
        self.context.close()
        self.server.shutdown()
        self.server.server_close()

    def diagram(self, query: str):
        """The report page of the path so far, opened on its own (``/diagram?...#window``)."""
        page = self.context.new_page()
        page.goto(f"{self.server.url}diagram?{query}")
        expect(page.locator("#selfcheck")).to_contain_text('"rendered":true')
        return page


@pytest.fixture
def opened(browser):  # noqa: F811 (the fixture imported above)
    made: list[Page] = []

    def make(session: Session, width: int) -> Page:
        made.append(Page(browser, session, width))
        return made[-1]

    yield make
    for p in made:
        p.close()


def walked(algorithm: str, processes: int, options: dict, steps: int) -> Session:
    session = Session(Config(algorithm, processes, options))
    session.random(steps, seed=1)
    return session


SESSIONS = {
    "bees": lambda: walked("bees", 3, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}, 30),
    "elves": lambda: walked("elves", 4, {}, 40),
}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("family", sorted(SESSIONS))
def test_names_stay_whole_and_cards_use_the_width(opened, family, width):
    p = opened(SESSIONS[family](), width)
    assert p.page.locator(".nm").count() > 5, "the page marks the process names it shows"
    assert p.page.evaluate(BROKEN_NAMES) == []
    fill = p.page.evaluate(CARD_FILL)
    assert fill["row"] > 0.97, fill  # the first row spans the grid: no empty tracks to the right
    assert fill["area"] > 0.6, fill  # no empty half-page of cards
    header = p.page.locator("#config").inner_text()
    assert header.startswith(f"{fill['cards']} processes"), header  # it counts what it shows
    assert p.errors == []


def test_the_checks_catch_a_broken_name_and_a_half_empty_grid(opened):
    """A name allowed to wrap in a narrow card is reported; so is a grid whose cards leave tracks
    empty (the old ``auto-fill``: three bees' cards in five tracks at 1920 px)."""
    p = opened(SESSIONS["bees"](), 1920)
    # (the page's CSP allows no inline style sheet: the style is set element by element)
    p.page.evaluate(
        "document.querySelectorAll('.nm, .card .name').forEach(e => e.style.whiteSpace = 'normal');"
        "document.querySelectorAll('.card').forEach(e => e.style.width = '40px')"
    )
    assert p.page.evaluate(BROKEN_NAMES), "a name broken across lines must be reported"
    p.page.evaluate(
        "document.getElementById('procs').style.gridTemplateColumns = 'repeat(auto-fill, minmax(290px, 1fr))';"
        "document.querySelectorAll('.card').forEach(e => e.style.width = '')"
    )
    fill = p.page.evaluate(CARD_FILL)
    assert fill["row"] < 0.97 or fill["area"] < 0.6, fill


def test_the_page_explains_its_notation_clocks_and_shared_session(opened):
    p = opened(SESSIONS["bees"](), 1280)
    key = p.page.locator("#key").inner_text()
    for words in ("100@1", "live 1 of 2 needed", "not gone"):
        assert words in key
    clocks = p.page.locator("#clocks").inner_text()
    assert "start at bee-1 " in clocks and "seed" in clocks
    # the session was walked before the page opened: this tab says it shares it
    n = int(p.page.locator("#position").inner_text())
    assert n > 0
    expect(p.page.locator("#shared")).to_contain_text(f"shares the explorer's one session, at step {n} ")
    # another tab moves the path: this one, shown again, says so and shows the new step
    other = p.context.new_page()
    other.goto(p.server.url)
    other.locator("#undo").click()
    expect(other.locator("#position")).to_have_text(str(n - 1))
    p.page.bring_to_front()
    p.page.evaluate("window.dispatchEvent(new Event('focus'))")
    expect(p.page.locator("#shared")).to_contain_text("Another tab or window moved")
    expect(p.page.locator("#position")).to_have_text(str(n - 1))


SOLUTIONS = Path(__file__).resolve().parents[1] / "examples" / "solutions"
# Each problem's own words, which no other problem's key may use.
OWN_WORDS = {
    "bees": ("bee", "reed", "flower"),
    "elves": ("elf", "elves", "mayor", "pins", "poison", "contract"),
    "mutex": (),
    "kmutex": (),
    "philosophers": ("philosopher", "fork", "meal"),
}
KEY_SESSIONS = {
    **SESSIONS,
    "mutex": lambda: walked("lamport", 3, {"requests": 2}, 12),
    "kmutex": lambda: walked(str(SOLUTIONS / "kmutex_ricart_agrawala.py"), 3, {"requests": 2, "k": 2}, 12),
    "philosophers": lambda: walked(str(SOLUTIONS / "chandy_misra.py"), 3, {"meals": 2}, 12),
}
# What each key must explain, in the words its page shows.
KEY_SAYS = {
    "bees": ("100@1", "bee-1 (pid 1)", "live 1 of 2 needed", "not gone", "reed:* 1", "Lamport clock"),
    "elves": ("100@1", "20@1 ×2", "units of pins or poison", "contract:* 1", "Lamport clock"),
    "mutex": ("100@1", "node-1 (pid 1)", "Lamport clock"),
    "kmutex": ("100@1", "node-1 (pid 1)", "Lamport clock"),
    "philosophers": ("fork:* 1", "fork:1, fork:2", "Lamport clock"),
}


@pytest.mark.parametrize("problem", sorted(KEY_SESSIONS))
def test_the_key_speaks_the_problems_own_words(opened, problem):
    # before: one key for every page, "(elves) … pins or poison", "(bees) … bees still in the run"
    # on the k-mutex and the philosophers' pages too
    p = opened(KEY_SESSIONS[problem](), 1280)
    key = p.page.locator("#key").inner_text()
    for words in KEY_SAYS[problem]:
        assert words in key, (problem, words, key)
    for other, words in OWN_WORDS.items():
        for word in words if other != problem else ():
            assert word not in key.lower(), (problem, word, key)
    assert p.errors == []


def at_step_15() -> Session:
    session = session_from_scenario(EXAMPLES / "maekawa-inquire-yield.json")
    session.jump(15)
    assert any(link["from"] == 3 and link["to"] == 6 for link in session.state()["links"])
    return session


@pytest.mark.parametrize("width", WIDTHS)
def test_every_arrow_ends_on_its_receivers_line(opened, width):
    """The Maekawa example at step 15 (a YIELD from node-3 to node-6 in flight), drawn whole and
    through a window that cuts arrows at its right edge."""
    p = opened(at_step_15(), width)
    whole = p.diagram("at=15")
    drawn = whole.evaluate(STRAY_ARROWS)
    assert drawn["stray"] == [] and drawn["inflight"] > 0, drawn
    check = whole.evaluate("JSON.parse(document.getElementById('selfcheck').textContent)")
    assert check["outside_window"] == 0 and check["hidden"] == 0  # it opens on the whole run
    cut = p.diagram("at=15#axis=t&from=0&to=8")
    drawn = cut.evaluate(STRAY_ARROWS)
    assert drawn["stray"] == [] and drawn["beyond"] > drawn["inflight"], drawn
    # the check catches an arrow that ends on another process's line
    cut.evaluate("document.querySelector('line.msg').setAttribute('y2', '-40')")
    assert len(cut.evaluate(STRAY_ARROWS)["stray"]) == 1


@pytest.mark.parametrize("width", WIDTHS)
def test_bar_labels_are_readable_and_above_the_arrows(opened, width):
    p = opened(SESSIONS["bees"](), width)
    d = p.diagram("at=1")
    labels = d.evaluate(
        "[...document.querySelectorAll('.iv-label')].map(t => { const s = getComputedStyle(t);"
        " return [t.textContent, parseFloat(s.fontSize), s.fill, s.stroke]; })"
    )
    assert labels, "the bees' holdings are labelled where the bar is wide enough"
    for text, size, fill, halo in labels:
        assert size >= 10 and fill == "rgb(31, 35, 40)" and halo == "rgb(255, 255, 255)", (text, size, fill)
    # drawn after every arrow, so no arrow covers a label
    assert d.evaluate(
        "(() => { const a = [...document.querySelectorAll('line.msg')].pop(), l = document.querySelector('.iv-label');"
        " return !!(a.compareDocumentPosition(l) & Node.DOCUMENT_POSITION_FOLLOWING); })()"
    )
    assert d.evaluate(STRAY_ARROWS)["stray"] == []


def test_the_legend_hides_a_type_and_the_focus_keeps_one_process(opened):
    p = opened(at_step_15(), 1280)
    d = p.diagram("at=15")

    def check():
        return d.evaluate("JSON.parse(document.getElementById('selfcheck').textContent)")

    def until(ok) -> dict:  # the page redraws on the next animation frame
        for _ in range(200):
            found = check()
            if ok(found):
                return found
            d.wait_for_timeout(50)
        raise AssertionError(f"the diagram never showed it: {found}")

    total = check()["arrows"]
    first = d.locator("#legend button.type").first
    first.click()
    expect(first).to_have_attribute("aria-pressed", "false")
    after = until(lambda c: c["arrows"] < total)
    assert after["hidden"] == total - after["arrows"] > 0
    first.click()
    until(lambda c: c["arrows"] == total)
    d.locator("#focus").select_option(label="node-3")
    until(lambda c: c["hidden"] > 0)
    pid = d.evaluate("[...document.querySelectorAll('#focus option')].find(o => o.text == 'node-3').value")
    ends = d.evaluate("[...document.querySelectorAll('line.msg')].map(a => [a.dataset.from, a.dataset.to])")
    assert ends and all(pid in pair for pair in ends)
    assert d.evaluate(STRAY_ARROWS)["stray"] == []


def test_the_shared_session_notice_is_not_shown_for_a_fresh_scenario_nor_kept_after_a_move(opened):
    """`explore --scenario` opens at step 0 with the steps ahead: its first tab said "at step 0
    where it was left", and kept saying it after the tab's own clicks had moved the path on."""
    p = opened(session_from_scenario(EXAMPLES / "maekawa-inquire-yield.json"), 1280)
    expect(p.page.locator("#position")).to_have_text("0")
    assert p.page.locator("#shared").is_hidden(), p.page.locator("#shared").inner_text()
    walked_page = opened(walked("bees", 3, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}, 5), 1280)
    shared = walked_page.page.locator("#shared")
    expect(shared).to_contain_text("at step 5 where it was left")
    walked_page.page.locator("#undo").click()
    expect(walked_page.page.locator("#position")).to_have_text("4")
    expect(shared).to_be_hidden()
    assert p.errors == [] and walked_page.errors == []


# Every pair of the diagram's bar labels drawn on one spot, and every process name that runs past
# the names' column into the plot (read from the drawn SVG).
LABELS_AND_NAMES = """() => {
  const labels = [...document.querySelectorAll("text.iv-label")].map(t => [t.textContent, t.getBBox()]);
  const clash = [];
  labels.forEach(([a, r], i) => labels.slice(i + 1).forEach(([b, s]) => {
    if (Math.abs(r.y - s.y) < r.height / 2 && r.x < s.x + s.width && s.x < r.x + r.width) clash.push([a, b]);
  }));
  const left = JSON.parse(document.getElementById("selfcheck").textContent).left;
  const names = [...document.querySelectorAll("text.proc-name")].map(t => {
    const title = t.querySelector("title");
    return [title ? title.textContent : t.textContent, t.firstChild.nodeValue, t.getBBox().x + t.getBBox().width];
  });
  return {clash, left, labels: labels.map(l => l[0]), names};
}"""


def test_the_diagram_keeps_labels_apart_and_long_names_out_of_the_plot(browser, tmp_path):  # noqa: F811
    """A philosopher holds two forks at once in one lane: one label names both, never two labels
    on one spot (before: "fork:2" under "fork:3"). Names with spaces, unicode or 40 characters
    widen the names' column (before: fixed at 112 px, they ran under the arrows), and one longer
    than a third of the diagram is cut with "…", whole in its tooltip."""
    from mutexlab.cli import main

    trace, page = tmp_path / "phil.trace", tmp_path / "phil.html"
    chandy = str(SOLUTIONS / "chandy_misra.py")
    assert main(["simulate", "philosophers", "-a", chandy, "--philosophers", "5", "--trace", str(trace)]) == 0
    assert main(["report", str(trace), "-o", str(page)]) == 0
    names = {
        "philosopher-1": "worker on alpha.example.org",
        "philosopher-2": "Zoë-Δ 节点",
        "philosopher-3": "a very long process name number three",
        "philosopher-4": "p" * 120,
    }
    text = trace.read_text(encoding="utf-8")
    for old, new in names.items():
        text = text.replace(f'"{old}"', json.dumps(new, ensure_ascii=False))
    odd_trace, odd_page = tmp_path / "odd.trace", tmp_path / "odd.html"
    odd_trace.write_text(text, encoding="utf-8")
    assert main(["report", str(odd_trace), "-o", str(odd_page)]) == 0
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        tab = context.new_page()
        tab.goto(page.as_uri())
        seen = tab.evaluate(LABELS_AND_NAMES)
        assert seen["clash"] == [], seen
        assert any(re.fullmatch(r"fork:\d+(, fork:\d+|,\d+)", label) for label in seen["labels"]), seen
        tab.goto(odd_page.as_uri())
        seen = tab.evaluate(LABELS_AND_NAMES)
        assert seen["left"] > 112 and seen["clash"] == [], seen
        for whole, shown, right in seen["names"]:
            assert right < seen["left"], (whole, shown, right, seen["left"])
            assert shown == whole or (shown.endswith("…") and whole.startswith(shown[:-1])), (whole, shown)
        assert {w for w, s, _ in seen["names"] if s != w} == {"p" * 120}, seen["names"]
    finally:
        context.close()


# Every step button, history entry and chip whose text runs past its own box (a word wider than it).
OVERFLOWING = """() => [...document.querySelectorAll("#steps button, #history li, #links .chip")]
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => [e.tagName, e.textContent, e.scrollWidth, e.clientWidth])"""
LONG_TYPE = "DEMANDE_ÉCLAIR_très_longue_requête_sans_espace_αβγ"


def long_named(tmp_path: Path) -> Session:
    """The k-mutex solution with a message type of 50 characters and no space, as a user may name one."""
    text = (SOLUTIONS / "kmutex_ricart_agrawala.py").read_text(encoding="utf-8")
    path = tmp_path / "long_names.py"
    path.write_text(text.replace('"REQUEST"', f'"{LONG_TYPE}"'), encoding="utf-8")
    return walked(str(path), 3, {"requests": 1, "k": 1}, 4)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_long_message_name_stays_inside_its_button(opened, tmp_path, width):
    # before: "deliver DEMANDE_ÉCLAIR_…_αβγ ts 1 node-1→node-2" ran out of its button, over the
    # "In flight" column beside it (and was cut off in the history's entries)
    p = opened(long_named(tmp_path), width)
    assert LONG_TYPE in p.page.locator("#steps").inner_text()
    assert p.page.evaluate(OVERFLOWING) == []
    assert p.page.evaluate(BROKEN_NAMES) == []  # the process names in those labels stay whole
    # the check catches a button whose text may not wrap
    p.page.evaluate(
        "document.querySelectorAll('#steps button').forEach(e => e.style.overflowWrap = 'normal')"
    )
    assert p.page.evaluate(OVERFLOWING)
    assert p.errors == []


# Every message chip that starts left of its link's name's right edge: wrapped under the name.
CHIPS_UNDER_NAMES = """() => {
  const out = [];
  for (const row of document.querySelectorAll("#links .link")) {
    const name = row.querySelector(".lname").getBoundingClientRect();
    for (const chip of row.querySelectorAll(".chip")) {
      const r = chip.getBoundingClientRect();
      if (r.left < name.right) out.push([row.dataset.link, chip.textContent, r.left, name.right]);
    }
  }
  return out;
}"""


def test_a_links_messages_wrap_beside_its_name_never_under_it(opened):
    """At 1024 px four elves' link elf-2→elf-4 held two messages: the second wrapped to the start
    of the row, under the name, where it read as a message of no link. The chips now wrap in a
    column of their own; the check is shown catching the old row (chips beside the name)."""
    p = opened(SESSIONS["elves"](), 1280)
    p.page.evaluate("document.getElementById('links').style.width = '420px'")  # a narrow pane
    rows = p.page.locator("#links .link")
    crowded = [r for r in rows.all() if r.locator(".chip").count() > 1]
    assert crowded, "the walk no longer leaves a link with two messages in flight"
    wrapped = [
        r for r in crowded if len({round(c.bounding_box()["y"]) for c in r.locator(".chip").all()}) > 1
    ]
    assert wrapped, "no link's messages wrap at 420 px: the check would check nothing"
    assert p.page.evaluate(CHIPS_UNDER_NAMES) == []
    # the old row: the chips straight in the wrapping row, beside the name
    p.page.evaluate(
        "document.querySelectorAll('#links .link').forEach(row => {"
        "  row.style.flexWrap = 'wrap';"
        "  row.querySelectorAll('.chip').forEach(c => row.appendChild(c)); })"
    )
    assert p.page.evaluate(CHIPS_UNDER_NAMES), "chips wrapped under the name must be reported"
