"""Solutions written in other people's styles (tests/outsiders/o11_*.py), each with the bug a
module constant plants, and the defects their runs showed. Small bounds: seconds, but for the
RabbitMQ runs (marked ``broker``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from outsider_edits import OUTSIDERS, edited, said

CENTRAL = Path(__file__).resolve().parent.parent / "examples" / "protocols" / "central.py"


def central(where: Path, name: str, *edits: tuple[str, str]) -> Path:
    """examples/protocols/central.py named ``central-<name>``, with ``edits`` made."""
    text = CENTRAL.read_text()
    for old, new in (('"central"', f'"central-{name}"'), *edits):
        assert old in text, old
        text = text.replace(old, new)
    path = where / f"{name}.py"
    path.write_text(text)
    return path


def test_the_monitor_prints_a_state_once_however_many_inputs_it_ends(tmp_path):
    """central.py's coordinator requests: its REQUEST to itself and the GRANT it gives itself are
    inputs inside that one, each ending HELD, so its trace holds three state events. Before, the
    monitor printed `node-1 HELD` three times; now one line per change of state."""
    from mutexlab.transport.view import LiveView

    out = io.StringIO()
    view = LiveView(out)
    view.begin(["node-1"])
    for n, state in enumerate(("HELD", "HELD", "HELD", "RELEASED", "HELD"), 1):
        view.event("node-1", {"event": "state", "state": state, "lamport": n, "t": 0.1 * n})
    view.end()
    lines = out.getvalue().splitlines()
    assert [line.split()[2] for line in lines] == ["HELD", "RELEASED", "HELD"], lines


@pytest.mark.broker
def test_over_rabbitmq_a_stall_a_raising_waiting_for_cannot_explain_exits_2_as_check(cli, tmp_path, amqp_url):
    """A coordinator that forgets its queue stalls; its waiting_for() raises. check and simulate
    stop at it, exit 2 naming the line (setups.waits). Before, `run` exited 3 and said each node
    "waits for nothing from anyone"; now it exits 2, NOT JUDGED, the process's wait unknown."""
    stuck = central(tmp_path, "wfr-stall", (
        "return self._grant(self.queue.pop(0)) if self.queue else []", "return []"), (
        "    def _grant(self, to: int) -> list:",
        "    def waiting_for(self):\n        raise ValueError('who knows')\n\n    def _grant(self, to: int) -> list:",
    ))  # fmt: skip
    done = cli("check", "mutex", "-a", stuck, "-N", "3", "--requests", "2")
    assert done.returncode == 2 and "its waiting_for() raised ValueError: who knows" in done.stdout, said(
        done
    )
    # each holding long enough that the others' requests queue: the forgotten queue stalls every time
    common = ("--amqp-url", amqp_url, "--dwell", "0.3", "--stall-timeout", "2", "--json")
    done = cli("run", "mutex", "-a", stuck, "-N", "3", "--requests", "2", *common)
    summary = json.loads(done.stdout)
    assert done.returncode == 2 and summary["exit_code"] == 2 and not summary["complete"], said(done)
    assert (
        "NOT JUDGED (exit 2, as check and simulate say it): the stall cannot be explained"
        in summary["verdict"]
    )
    assert f"its waiting_for() raised ValueError: who knows at {stuck}:" in summary["verdict"], said(done)
    assert "what it waits for is unknown: its waiting_for() raised" in render_of(summary), render_of(summary)
    assert "waits for nothing from anyone" not in render_of(summary), render_of(summary)


def render_of(summary: dict) -> str:
    """The monitor's printed summary of the run ``summary`` (``--json``) says."""
    from mutexlab.transport.outcome import Outcome, render

    fields = {k: v for k, v in summary.items() if k in Outcome.__dataclass_fields__}
    return render(Outcome(**fields))


def test_a_global_count_one_process_advances_is_shared_state_and_one_it_holds_is_its_own(cli, tmp_path):
    """The ticket office numbering seats by next() on a module-global itertools.count, which node 1
    alone calls. Before: check said node-1 "is not deterministic" (its worlds shared the count) and
    simulate SAFE, exit 0. Now both name the global, as for a global list (exit 1). Held as the
    office's attribute it is the office's own: check copies it, both pass."""
    counted = edited(tmp_path, "o10_kmutex_heap_tickets.py", "o10-heap-tickets", "o11", "global-count",
                     ("Ticket(next(self.numbers), who)", "Ticket(next(_SHARED_COUNTER), who)"))  # fmt: skip
    named = "the global _SHARED_COUNTER of"
    done = cli("check", "kmutex", "-a", counted, "-N", "3", "-k", "2")
    assert done.returncode == 1 and named in done.stdout, said(done)
    assert "is an iterator global to the module (count), and a handler advanced it" in done.stdout, said(done)
    assert "not deterministic" not in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", counted, "-N", "3", "-k", "2")
    assert done.returncode == 1 and named in done.stdout + done.stderr, said(done)
    owned = edited(tmp_path, "o10_kmutex_heap_tickets.py", "o10-heap-tickets", "o11", "office-count",
                   ('_SHARED_COUNTER if TICKETS == "shared"', "_SHARED_COUNTER if pid == OFFICE"))  # fmt: skip
    done = cli("check", "kmutex", "-a", owned, "-N", "3", "-k", "2")
    assert done.returncode == 0 and "PASS" in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", owned, "-N", "3", "-k", "2")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)


BEES = ("-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")


def test_hygienic_forks_kept_as_a_dict_of_sets_pass_and_a_fork_kept_when_sent_is_caught(cli, tmp_path):
    """o11_phil_hygiene_sets.py: Chandy–Misra with ``self.forks`` a dict of sets (clean, dirty,
    tokens). GIVE_BACK = "forget": a fork sent stays in my sets, two philosophers hold it."""
    from mutexlab.explore.session import Config, Session

    path = OUTSIDERS / "o11_phil_hygiene_sets.py"
    done = cli("check", "philosophers", "-a", path, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("check", "philosophers", "-a", path, "--metrics")
    assert done.returncode == 0 and "meal: messages per entry" in done.stdout, said(done)
    done = cli("simulate", "philosophers", "-a", path, "--seed", "1")
    assert done.returncode == 0 and "meals eaten: 10 of 10" in done.stdout, said(done)
    done = cli("compare", "--nodes", "4", "--algorithms", f"examples/solutions/chandy_misra.py,{path}")
    assert done.returncode == 0 and "o11-hygiene-sets" in done.stdout, said(done)
    session = Session(Config(str(path), 3, {"meals": 1}))
    assert session.run_to_end(seed=1)["stopped"] == "end"
    assert session.state()["findings"]["violations"] == []
    assert "tokens:" in dict(session.state()["procs"][0]["fields"])["forks"]
    forget = edited(tmp_path, "o11_phil_hygiene_sets.py", "o11-hygiene-sets", "o11", "forget",
                    ('GIVE_BACK = "discard"', 'GIVE_BACK = "forget"'))  # fmt: skip
    ce = tmp_path / "forget.json"
    done = cli("check", "philosophers", "-a", forget, "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — capacity: fork:" in done.stdout, said(done)
    done = cli("replay", ce, "-a", forget)
    assert done.returncode == 1 and "[capacity] fork:" in done.stdout, said(done)


def test_a_k_quorum_hierarchy_with_properties_passes_and_its_planted_bugs_are_findings(cli, tmp_path):
    """o11_kmutex_props_abc.py: an abc.ABC base with an abstract property, a typing.Protocol for
    askers, a frozenset behind a property setter. QUORUM_SLACK = 1 lets K+1 in; LATE_REPLY =
    "raise" makes _on_yes raise KeyError: a finding naming the handler, never a crash."""

    path = OUTSIDERS / "o11_kmutex_props_abc.py"
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2")
    assert done.returncode == 0 and "PASS" in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", path, "-N", "4", "-k", "2", "--requests", "2", "--seed", "3")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    done = cli("compare", "--nodes", "3", "-o", "k=2", "--algorithms",
               f"examples/solutions/kmutex_ricart_agrawala.py,{path}")  # fmt: skip
    assert done.returncode == 0 and "o11-props-abc" in done.stdout, said(done)
    slack = edited(tmp_path, "o11_kmutex_props_abc.py", "o11-props-abc", "o11", "slack",
                   ("QUORUM_SLACK = 0", "QUORUM_SLACK = 1"))  # fmt: skip
    done = cli("check", "kmutex", "-a", slack, "-N", "3", "-k", "2")
    assert done.returncode == 1 and "VIOLATION — capacity: cs (capacity 2)" in done.stdout, said(done)
    late = edited(tmp_path, "o11_kmutex_props_abc.py", "o11-props-abc", "o11", "late",
                  ('LATE_REPLY = "ignore"', 'LATE_REPLY = "raise"'))  # fmt: skip
    ce = tmp_path / "late.json"
    done = cli("check", "kmutex", "-a", late, "-N", "3", "-k", "2", "--counterexample", ce)
    raised = f"raised KeyError: 1 at {late}:"
    assert done.returncode == 1 and raised in done.stdout and "(in _on_yes), taking YES" in done.stdout, said(
        done
    )
    done = cli("replay", ce, "-a", late)
    assert done.returncode == 1 and "RAISED: step" in done.stdout and raised in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", late, "-N", "3", "-k", "2")
    assert done.returncode == 1 and raised in done.stderr and "internal error" not in done.stderr, said(done)


def test_bees_dispatching_on_the_input_class_pass_and_an_eager_bee_is_caught(cli, tmp_path):
    """o11_bees_dispatch.py: every input through one functools.singledispatchmethod (a function
    per message model, one for str actions). EAGER = True takes a flower one ACK early."""
    from mutexlab.explore.session import Config, Session

    path = OUTSIDERS / "o11_bees_dispatch.py"
    done = cli("check", "bees", "-a", path, *BEES, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "bees", "-a", path, "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    session = Session(Config(str(path), 3, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}))
    assert session.run_to_end(seed=2)["stopped"] == "end"
    assert session.state()["findings"]["violations"] == []
    eager = edited(tmp_path, "o11_bees_dispatch.py", "o11-bees-dispatch", "o11", "eager",
                   ("EAGER = False", "EAGER = True"))  # fmt: skip
    ce = tmp_path / "eager.json"
    done = cli("check", "bees", "-a", eager, *BEES, "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — capacity: flower (capacity 1)" in done.stdout, said(done)
    done = cli("replay", ce, "-a", eager)
    assert done.returncode == 1 and "[capacity] flower (capacity 1)" in done.stdout, said(done)


def test_an_elves_mayor_keeping_deques_and_frozen_dataclasses_passes_and_a_greedy_one_is_caught(
    cli, tmp_path
):
    """o11_elves_deque.py: the mayor's free contracts and waiting elves are deques, its store a
    frozen dataclass replaced; an elf's job a deque(maxlen=1). COUNT_TOOLS = False grants
    whatever the store holds: more pins out than the town has."""
    from mutexlab.explore.session import Config, Session

    path = OUTSIDERS / "o11_elves_deque.py"
    done = cli("check", "elves", "-a", path, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "elves", "-a", path, "--elves", "4", "--seed", "3")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    done = cli("compare", "--nodes", "3", "--algorithms", f"elves,{path}")
    assert done.returncode == 0 and "o11-elves-deque" in done.stdout, said(done)
    session = Session(Config(str(path), 2, {}))
    assert session.run_to_end(seed=1)["stopped"] == "end"
    assert session.state()["findings"]["violations"] == []
    greedy = edited(tmp_path, "o11_elves_deque.py", "o11-elves-deque", "o11", "greedy",
                    ("COUNT_TOOLS = True ", "COUNT_TOOLS = False "))  # fmt: skip
    ce = tmp_path / "greedy.json"
    done = cli("check", "elves", "-a", greedy, "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — capacity: pins (capacity 1)" in done.stdout, said(done)
    done = cli("replay", ce, "-a", greedy)
    assert done.returncode == 1 and "[capacity] pins (capacity 1)" in done.stdout, said(done)


@pytest.mark.broker
def test_over_rabbitmq_the_o11_solutions_pass_and_a_raising_handler_stops_the_run(cli, tmp_path, amqp_url):
    common = ("--amqp-url", amqp_url, "--dwell", "0", "--json")
    done = cli(
        "run",
        "philosophers",
        "-a",
        OUTSIDERS / "o11_phil_hygiene_sets.py",
        "-N",
        "3",
        "--meals",
        "1",
        *common,
    )
    assert done.returncode == 0 and json.loads(done.stdout)["safe"], said(done)
    done = cli("run", "kmutex", "-a", OUTSIDERS / "o11_kmutex_props_abc.py", "-N", "3", "-k", "2", *common)
    assert done.returncode == 0 and json.loads(done.stdout)["safe"], said(done)
    bees = ("-P", "3", "--reeds", "2", "--flowers", "1", "--eggs", "1", "--cocoons", "1")
    done = cli("run", "bees", "-a", OUTSIDERS / "o11_bees_dispatch.py", *bees, *common)
    assert done.returncode == 0 and json.loads(done.stdout)["safe"], said(done)
    done = cli("run", "elves", "-a", OUTSIDERS / "o11_elves_deque.py", "--elves", "2", *common)
    assert done.returncode == 0 and json.loads(done.stdout)["safe"], said(done)
    late = edited(tmp_path, "o11_kmutex_props_abc.py", "o11-props-abc", "o11", "late",
                  ('LATE_REPLY = "ignore"', 'LATE_REPLY = "raise"'))  # fmt: skip
    done = cli("run", "kmutex", "-a", late, "-N", "3", "-k", "2", "--requests", "2", *common)
    summary = json.loads(done.stdout)
    assert done.returncode == 1 and summary["verdict"].startswith("HANDLER RAISED"), said(done)
    assert f"raised KeyError: 1 at {late}:" in json.dumps(summary["rejected"]), said(done)
