"""Solutions written from the docs alone (tests/outsiders/o10_*.py), each with the bug a module
constant plants, and the small defects their runs showed. Small bounds: seconds, but for the
RabbitMQ runs (marked ``broker``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from outsider_edits import OUTSIDERS, edited, said

BEES = ("-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")
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


def test_a_ticket_office_with_a_heap_and_a_count_passes_and_an_extra_seat_is_caught(cli, tmp_path):
    """o10_kmutex_heap_tickets.py: node 1 seats the oldest askers (a heapq of (ts, pid)), numbering
    seats from an itertools.count; the ticket travels as a NamedTuple. EXTRA_SEATS = 1: K + 1."""
    from mutexlab.explore.session import Config, Session

    path = OUTSIDERS / "o10_kmutex_heap_tickets.py"
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2", "--metrics")
    assert done.returncode == 0 and "cs: messages per entry min 0, max 3" in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", path, "-N", "4", "-k", "2", "--requests", "2", "--seed", "3")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    done = cli("compare", "--nodes", "3", "-o", "k=2", "--algorithms",
               f"examples/solutions/kmutex_ricart_agrawala.py,{path}")  # fmt: skip
    assert done.returncode == 0 and "o10-heap-tickets   9/9" in done.stdout, said(done)
    session = Session(Config(str(path), 3, {"k": 2, "requests": 1}))
    assert session.run_to_end(seed=1)["stopped"] == "end"
    fields = dict(session.state()["procs"][0]["fields"])
    assert fields["numbers"] == "count(4)" and fields["seated"] == "{}", fields
    extra = edited(tmp_path, "o10_kmutex_heap_tickets.py", "o10-heap-tickets", "o10", "extra",
                   ("EXTRA_SEATS = 0", "EXTRA_SEATS = 1"))  # fmt: skip
    ce = tmp_path / "extra.json"
    done = cli("check", "kmutex", "-a", extra, "-N", "3", "-k", "2", "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — capacity: cs (capacity 2)" in done.stdout, said(done)
    done = cli("replay", ce, "-a", extra)
    assert done.returncode == 1 and "[capacity] cs (capacity 2)" in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", extra, "-N", "4", "-k", "2", "--requests", "2", "--seed", "1")
    assert done.returncode == 1 and "[capacity] cs (capacity 2)" in done.stdout, said(done)


def test_one_count_every_node_holds_is_refused_as_a_shared_list_is(cli, tmp_path):
    """TICKETS = "shared" gives every node the one itertools.count made at import. Before: check
    PASS and simulate SAFE, exit 0 — in one interpreter every node drew from it, over RabbitMQ
    each process from its own; now exit 2 naming both holders, as for a shared list."""
    shared = edited(tmp_path, "o10_kmutex_heap_tickets.py", "o10-heap-tickets", "o10", "shared",
                    ('TICKETS = "count"', 'TICKETS = "shared"'))  # fmt: skip
    for command in ("check", "simulate"):
        done = cli(command, "kmutex", "-a", shared, "-N", "3", "-k", "2")
        assert done.returncode == 2, said(done)
        assert "node-1.numbers and node-2.numbers are one count: processes share no state" in done.stderr, (
            said(done)
        )


def test_a_log_file_every_node_holds_is_no_shared_state(cli, tmp_path):
    """A file object (sys.stderr) is an iterator too, but each process over RabbitMQ has its own:
    nodes holding it share no count. It is refused as state that cannot be copied (exit 2, as
    before the shared-iterator check), not as "one TextIOWrapper" shared, which it is not."""
    logged = edited(tmp_path, "o10_kmutex_heap_tickets.py", "o10-heap-tickets", "o10", "logged",
                    ("import heapq\n", "import heapq\nimport sys\n"),
                    ("        self.numbers = ", "        self.log = sys.stderr\n        self.numbers = "))  # fmt: skip
    # in a process of its own: the in-process cli swaps sys.stderr while the file loads
    done = subprocess.run([sys.executable, "-m", "mutexlab", "check", "kmutex", "-a", str(logged), "-N", "3",
                           "-k", "2"], capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 2 and "its attribute 'log' holds a TextIOWrapper, which cannot be copied" in (
        done.stderr
    ), done.stdout + done.stderr
    assert "one TextIOWrapper" not in done.stderr, done.stderr


def test_a_keeper_bee_with_a_slotted_book_and_match_passes_and_an_open_meadow_is_caught(cli, tmp_path):
    """o10_bees_keeper_slots.py: bee 1 keeps a @dataclass(slots=True) book, dispatches with match;
    states a (str, Enum); spots a NamedTuple. COUNT_FLOWERS = False lets every bee out at once."""
    from mutexlab.explore.session import Config, Session

    path = OUTSIDERS / "o10_bees_keeper_slots.py"
    done = cli("check", "bees", "-a", path, *BEES, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "bees", "-a", path, "--flowers", "1", "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    session = Session(Config(str(path), 3, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}))
    assert session.run_to_end(seed=2)["stopped"] == "end"
    state = session.state()
    assert state["findings"]["violations"] == [] and state["findings"]["at_end"], state["findings"]
    # before: "1@0", as a (timestamp, pid) pair is shown
    assert dict(state["procs"][0]["fields"])["spot"] == "Spot(reed=1, eggs_before=0)", state["procs"][0]
    crowd = edited(tmp_path, "o10_bees_keeper_slots.py", "o10-keeper-slots", "o10", "crowd",
                   ("COUNT_FLOWERS = True", "COUNT_FLOWERS = False"))  # fmt: skip
    ce = tmp_path / "crowd.json"
    done = cli("check", "bees", "-a", crowd, *BEES, "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — capacity: flower (capacity 1)" in done.stdout, said(done)
    done = cli("replay", ce, "-a", crowd)
    assert done.returncode == 1 and "[capacity] flower (capacity 1)" in done.stdout, said(done)
    assert "NOT PROBED" not in done.stdout, said(done)
    done = cli("simulate", "bees", "-a", crowd, "--flowers", "1", "--seed", "1")
    assert done.returncode == 1 and "[capacity] flower (capacity 1)" in done.stdout, said(done)


def test_a_replay_that_cannot_copy_a_bee_says_it_did_not_probe_its_steps(cli, tmp_path):
    """A counterexample replayed with a bee keeping a generator: its steps cannot be taken again on
    copies. Before, replay skipped that probe and said nothing; now a NOT PROBED line names it."""
    rush = edited(tmp_path, "o9_bees_baton.py", "o9-baton", "o9", "rush", ("RUSH = False", "RUSH = True"))
    ce = tmp_path / "rush.json"
    done = cli("check", "bees", "-a", rush, *BEES, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    gen = tmp_path / "gen.py"  # the same bees, keeping a generator
    gen.write_text(
        rush.read_text().replace('NUMBERS = "iter"', 'NUMBERS = "generator"').replace("o9-rush", "o9-gen")
    )
    ce.write_text(json.dumps({**json.loads(ce.read_text()), "algorithm": str(gen)}))
    done = cli("replay", ce, "-a", gen)
    assert done.returncode == 1 and "[capacity] reed:1 (capacity 1)" in done.stdout, said(done)
    assert "NOT PROBED for determinism: cannot copy the state of bee-1 (BatonBee" in done.stdout, said(done)
    assert "its attribute 'numbers' holds a generator" in done.stdout, said(done)
    done = cli("replay", ce, "-a", gen, "--json")
    assert "holds a generator" in json.loads(done.stdout)["unprobed"], said(done)


def test_an_elf_without_wants_gets_the_metrics_line_elves_md_quotes(cli, tmp_path):
    """docs/elves.md says what `check elves --metrics` needs (it said nothing); its quoted line is
    what an elf with neither a request note nor wants() gets."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "elves.md").read_text()
    assert "`mutexlab check elves --metrics` gives its figures per resource" in text
    quoted = "metrics: none — the protocol states no requests (neither Note 'request' nor wants())"
    assert quoted.replace(" ", "") in text.replace("\n", "").replace(" ", "")
    source = Path(__file__).resolve().parent.parent / "examples" / "solutions" / "elves_no_arbiter.py"
    plain = tmp_path / "plain.py"
    plain.write_text(
        source.read_text()
        .replace("def wants(self)", "def _wanted(self)")
        .replace('"elves-no-arbiter"', '"elves-no-wants"')
    )
    done = cli("check", "elves", "-a", plain, "--metrics")
    assert done.returncode == 0 and quoted in " ".join(done.stdout.split()), said(done)


@pytest.mark.broker
def test_over_rabbitmq_a_raising_waiting_for_is_no_crash_and_the_outsiders_pass(cli, tmp_path, amqp_url):
    """Before: a waiting_for() that raises crashed every participant at its first status (a
    traceback in its log); the run stalled 15 s, exit 3, "waits for nothing". It is asked only to
    explain a stall, as in check and simulate: the run now ends SAFE."""
    raising = central(tmp_path, "wfr", (
        "    def _grant(self, to: int) -> list:",
        "    def waiting_for(self):\n        raise ValueError('who knows')\n\n    def _grant(self, to: int) -> list:",
    ))  # fmt: skip
    common = ("--amqp-url", amqp_url, "--dwell", "0", "--json")
    done = cli("run", "mutex", "-a", raising, "-N", "2", "--requests", "1", *common)
    assert done.returncode == 0 and json.loads(done.stdout)["safe"], said(done)
    done = cli("run", "kmutex", "-a", OUTSIDERS / "o10_kmutex_heap_tickets.py", "-N", "3", "-k", "2", *common)
    assert done.returncode == 0 and json.loads(done.stdout)["safe"], said(done)
    bees = ("-P", "3", "--reeds", "2", "--flowers", "1", "--eggs", "1", "--cocoons", "1")
    done = cli("run", "bees", "-a", OUTSIDERS / "o10_bees_keeper_slots.py", *bees, *common)
    assert done.returncode == 0 and json.loads(done.stdout)["safe"], said(done)


def test_a_participant_whose_handler_raised_refuses_later_inputs_without_repeating_it():
    """After a handler raised, a participant refuses every later input. Before, each refusal
    repeated the exception ("node-1 takes nothing more: node-1 raised ValueError: grant refused
    here at …"): `run`'s rejected-input line said the first reason's text twice."""
    from types import SimpleNamespace

    from mutexlab.protocol import ProtocolError
    from mutexlab.transport.participant import Participant
    from mutexlab.words import PROGRAM_FAULT

    proto = SimpleNamespace(state="WANTED", clock=SimpleNamespace(time=3))
    setup = SimpleNamespace(protocols={1: proto})
    broken = "node-1 raised ValueError: grant refused here at my.py:66 (in _on_grant)"
    fake = SimpleNamespace(name="node-1", broken=broken, start_time=0.0, driver=None)
    fake._joined = lambda: (setup, SimpleNamespace(now=0.0), 1)  # noqa: SLF001
    with pytest.raises(ProtocolError) as refused:
        Participant._apply(fake, lambda: None)  # type: ignore[arg-type]  # noqa: SLF001
    assert "node-1 takes nothing more" in str(refused.value)
    assert "grant refused here" not in str(refused.value), refused.value
    # a program's fault stays the program's (the run's headline: PROGRAM FAILED, not HANDLER RAISED)
    fake.broken = f"node-1 raised: {PROGRAM_FAULT}: it exited with status 1"
    with pytest.raises(ProtocolError) as refused:
        Participant._apply(fake, lambda: None)  # type: ignore[arg-type]  # noqa: SLF001
    assert PROGRAM_FAULT in str(refused.value) and "status 1" not in str(refused.value), refused.value
