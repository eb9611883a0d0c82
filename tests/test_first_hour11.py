"""What a newcomer meets in the first hour (the eleventh look): the tour's commands, followed one by
one, print what they mean in words a reader types back — no Python dict in a banner."""

from __future__ import annotations

from pathlib import Path

from test_explore_browser import Explorer, browser  # noqa: F401 - the fixture
from test_explore_server import _explorer, _stop

ROOT = Path(__file__).resolve().parents[1]


def test_settings_are_written_as_one_types_them():
    """``--option KEY=JSON``: the value as JSON (double quotes), a string as it is."""
    from mutexlab.words import settings

    assert settings({"requests": 1, "parents": {"2": 1, "3": 1}}) == 'requests=1, parents={"2": 1, "3": 1}'
    assert settings({"hamsters": [1, 2], "mode": "fair", "on": True}) == "hamsters=[1, 2], mode=fair, on=true"
    assert settings({}) == ""


def test_the_explore_banner_prints_no_python_dict():
    """The tour's Maekawa scenario: the banner said ``options {'quorums': {'1': [1, 4, 5], ...}}``,
    a Python repr nobody can pass back to ``--option``; now ``quorums={"1": [1, 4, 5], ...}``."""
    scenario = ROOT / "examples" / "scenarios" / "maekawa-inquire-yield.json"
    proc, _, _, first = _explorer("mutex", "--scenario", str(scenario))
    _stop(proc)
    assert "{'" not in first and "options {" not in first, first
    assert first.startswith(
        'mutexlab explore: maekawa, 6 processes, quorums={"1": [1, 4, 5], "2": [2, 5, 6], '
    ), first


def test_the_explore_banner_of_the_quick_start_says_its_settings_as_check_does():
    proc, _, _, first = _explorer("bees", "--bees", "3", "--flowers", "1", "--reeds", "2", "--eggs", "1")
    _stop(proc)
    assert (
        first.rstrip("\n") == "mutexlab explore: bees, 3 processes, flowers=1, reeds=2, eggs=1, cocoons=15"
    ), first


def test_the_check_banner_prints_no_python_dict(cli):
    out = cli("check", "mutex", "-a", "raymond", "-N", "3", "--option", 'parents={"2": 1, "3": 1}').stdout
    assert out.startswith('raymond: 3 processes, requests=1, parents={"2": 1, "3": 1}, seed 0 — '), out


def test_check_names_a_file_as_the_user_gave_it(cli):
    """``check -a examples/solutions/x.py`` began its output with the file's absolute path
    (``/home/…/examples/solutions/x.py: 3 processes, …``): now relative to where it was typed."""
    given = "examples/solutions/kmutex_ricart_agrawala_broken.py"
    out = cli("check", "kmutex", "-a", given, "-N", "3", cwd=ROOT)
    assert out.returncode == 1, out.stderr
    assert out.stdout.startswith(f"{given}: 3 processes, requests=1, k=2, seed 0 — "), out.stdout
    assert str(ROOT) not in out.stdout


def test_a_file_of_another_problem_is_refused_naming_it_as_given(cli):
    """The refusal's command, copied, runs: it names the file as typed, not by its absolute path."""
    given = "examples/solutions/kmutex_ricart_agrawala.py"
    out = cli("check", "mutex", "-a", given, "-N", "3", cwd=ROOT)
    assert out.returncode == 2 and str(ROOT) not in out.stderr, out.stderr
    assert f"run it with `mutexlab check kmutex --algorithm {given}`" in out.stderr, out.stderr
    out = cli("check", "mutex", "-a", "examples/solutions/nosuch.py", "-N", "3", cwd=ROOT)
    assert out.stderr.strip().endswith("algorithm file examples/solutions/nosuch.py does not exist"), (
        out.stderr
    )


def test_a_file_outside_the_working_directory_is_named_absolute(cli, tmp_path):
    """Never ``../../x.py``: outside the working directory the path is absolute."""
    given = str(ROOT / "examples" / "solutions" / "kmutex_ricart_agrawala_broken.py")
    out = cli("check", "kmutex", "-a", given, "-N", "3", cwd=tmp_path)
    assert out.stdout.startswith(f"{given}: 3 processes"), out.stdout


def test_a_deadlock_names_the_resource_each_process_waits_for(cli):
    """check's deadlock said only the messages lacked (``node-3 REPLY from node-2``); it now says
    the resource waited for and who holds it (here nobody: the replies never come)."""
    out = cli("check", "mutex", "-a", "mutexlab_broken.ricart_agrawala_forgetful", "-N", "3").stdout
    assert ("VIOLATION — deadlock: nothing can move; waiting: node-3 for cs: REPLY from node-2") in out, out


def test_who_holds_what_is_waited_for_is_named():
    """A world of two bees: one holds the only reed (and the flower), the other waits for a reed,
    named with its holder; a philosopher's wait is for its own forks."""
    from collections import deque

    from mutexlab.protocols.registry import make_setup
    from mutexlab.sim.stuck import stuck_said
    from mutexlab.sim.world import WorldModel

    model = WorldModel(make_setup("bees", 2, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1}))
    start, _ = model.initial()
    seen, todo, found = {start}, deque([start]), []
    while todo and len(seen) < 5000:
        world = todo.popleft()
        said = stuck_said(model, world)
        if "(holding reed:1" in said and "for reed (held by bee-" in said:
            found.append(said)
            break
        for label in model.steps(world):
            nxt, _, _ = model.step(world, label)
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    assert found, "no world where a bee waits for the reed another holds"
    holder = "bee-1" if found[0].startswith("bee-1 (holding") else "bee-2"
    assert f"for reed (held by {holder}):" in found[0], found[0]

    from mutexlab.protocols import registry

    path = registry.canonical(str(ROOT / "examples" / "solutions" / "chandy_misra.py"))
    model = WorldModel(registry.build_setup(path, 3, {"meals": 1}, 0))
    start, _ = model.initial()
    said = stuck_said(model, model.step(start, model.steps(start)[0])[0])
    assert said.startswith("philosopher-") and "for fork:" in said, said


def test_the_pages_header_says_capacities_as_settings_not_json(browser, tmp_path):  # noqa: F811
    """The header read ``capacities {"reed:*":1,"flower":1}``: a JSON object where the options
    beside it read ``flowers=1``; now ``capacities reed:*=1, flower=1``."""
    from mutexlab.explore.session import Config, Session

    page = Explorer(browser, Session(Config("bees", 3, {"flowers": 1, "reeds": 2, "eggs": 1})), tmp_path)
    try:
        header = page.page.locator("#config").inner_text()
        assert header.endswith("; capacities reed:*=1, flower=1"), header
        assert '{"' not in header, header
        assert page.errors == []
    finally:
        page.close()


def test_the_first_processs_holding_lanes_stay_below_the_axis_labels(browser, tmp_path, cli):  # noqa: F811
    """A bee holds a reed and a flower at once: two lanes stacked above its line. The first
    bee's upper lane was drawn over the time axis's numbers (a philosopher's meal over ``1``)."""
    done = cli("simulate", "bees", "-P", "3", "-K", "1", "-T", "2", "--report", "b.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    try:
        page.goto((tmp_path / "b.html").as_uri())
        page.wait_for_function(
            "document.querySelector('#selfcheck') && /rendered/.test(document.querySelector('#selfcheck').textContent)"
        )
        overlaps = page.evaluate(
            """() => {
              const box = (e) => e.getBoundingClientRect();
              const texts = [...document.querySelectorAll('svg .axis text')].map(box);
              const bars = [...document.querySelectorAll('svg rect.iv')].map(box);
              return bars.filter((b) => texts.some((t) => b.top < t.bottom && t.top < b.bottom
                                                       && b.left < t.right && t.left < b.right)).length;
            }"""
        )
        lanes = page.evaluate(
            "() => new Set([...document.querySelectorAll('svg rect.iv')].map((r) => r.getAttribute('y'))).size"
        )
    finally:
        page.close()
    assert lanes >= 2
    assert overlaps == 0, f"{overlaps} holding bars drawn over the axis's numbers"


def test_the_explorers_deadlock_headline_names_the_resource_waited_for():
    """The page's headline said only "nothing can move and node-3 not finished"; it now says, as
    check does, what each waits for: the resource, its holders, the messages lacked."""
    from mutexlab.explore.session import Config, Session

    for seed in range(20):
        session = Session(Config("mutexlab_broken.ricart_agrawala_forgetful", 3, {"requests": 1}))
        session.run_to_end(seed=seed)
        findings = session.state()["findings"]
        if findings["status"] == "deadlock":
            break
    else:
        raise AssertionError("no deadlock in 20 seeds")
    summary = findings["summary"]
    assert "nothing can move; waiting: node-" in summary and " for cs: REPLY from node-" in summary, summary


def test_the_replay_of_a_deadlock_says_who_waits_for_what(cli, tmp_path):
    """replay said only ``DEADLOCK: nothing can move; not finished: node-3``, check's "replay
    reproduces it" the same: both now say what check's finding says."""
    algorithm = "mutexlab_broken.ricart_agrawala_forgetful"
    done = cli("check", "mutex", "-a", algorithm, "-N", "3", "--counterexample", "d.json", cwd=tmp_path)
    waiting = "nothing can move; waiting: node-3 for cs: REPLY from node-2"
    assert done.returncode == 1 and f"replay reproduces it: yes — {waiting};" in done.stdout, done.stdout
    done = cli("replay", "d.json", "-a", algorithm, cwd=tmp_path)
    assert done.returncode == 1 and f"DEADLOCK: {waiting}\n" in done.stdout, done.stdout
