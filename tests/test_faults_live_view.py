"""The monitor's live view: plain lines off a terminal, a table on one.

The table is built by ``LiveView.table()`` from the trace events and statuses fed so far, so it
is checked here without a terminal (rendered by rich into a string); the plain-line mode is
what compose logs and ``mutexlab run`` without a terminal show.
"""

from __future__ import annotations

import io

from rich.console import Console

from mutexlab.transport.monitor import LiveView


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def render(progress: LiveView) -> str:
    console = Console(file=io.StringIO(), width=160, color_system=None)
    console.print(progress.table())
    return console.file.getvalue()


def feed(progress: LiveView, name: str, event: str, **fields) -> None:
    progress.event(name, {"event": event, "pid": name, **fields})


def test_plain_lines_off_a_terminal():
    out = io.StringIO()  # not a terminal
    progress = LiveView(out)
    progress.begin(["node-1", "node-2"])
    assert progress.live is None
    feed(progress, "node-1", "state", state="WANTED", lamport=3, t=0.25)
    feed(progress, "node-1", "send", type="REQUEST", to="node-2", lamport=4)  # no line for a message
    feed(progress, "node-2", "state", state="HELD", lamport=9, t=1.5)
    progress.end()
    assert out.getvalue().splitlines() == [
        "    0.250s  node-1     WANTED                 lamport 3",
        "    1.500s  node-2     HELD                   lamport 9",
    ]


def test_plain_lines_are_written_together_at_most_every_print_every_and_all_at_the_end():
    out, clock = io.StringIO(), FakeClock()
    progress = LiveView(out, clock=clock)
    progress.begin(["node-1"])
    feed(progress, "node-1", "state", state="WANTED", t=0.1)
    assert out.getvalue() == "", "kept back: the last write was less than PRINT_EVERY ago"
    clock.now += LiveView.PRINT_EVERY + 0.001
    feed(progress, "node-1", "state", state="HELD", t=0.2)
    assert len(out.getvalue().splitlines()) == 2, "both lines in one write once PRINT_EVERY passed"
    feed(progress, "node-1", "state", state="RELEASED", t=0.3)
    progress.flush(LiveView.PRINT_EVERY)
    assert len(out.getvalue().splitlines()) == 2, "the monitor's flush after a poll waits as well"
    clock.now += LiveView.PRINT_EVERY + 0.001
    progress.flush(LiveView.PRINT_EVERY)
    assert out.getvalue().splitlines()[-1].split()[2] == "RELEASED"
    feed(progress, "node-1", "state", state="WANTED", t=0.4)
    progress.end()
    assert len(out.getvalue().splitlines()) == 4, "nothing is left unwritten at the end"


def test_table_shows_states_clocks_holders_eggs_per_reed_and_message_rate():
    clock = FakeClock()
    progress = LiveView(io.StringIO(), clock=clock)
    progress.begin(["bee-1", "bee-2", "bee-3"])
    for n in range(10):  # 10 sends over 2 seconds
        clock.now += 0.2
        feed(progress, "bee-1", "send", type="REQflower", to="bee-2", lamport=10 + n)
    feed(progress, "bee-1", "enter", resource="reed:1", lamport=21)
    feed(progress, "bee-2", "enter", resource="reed:2", lamport=22)
    feed(progress, "bee-1", "enter", resource="flower", lamport=23)
    feed(progress, "bee-1", "state", state="ON_FLOWER", lamport=23, t=2.0)
    feed(progress, "bee-1", "exit", resource="flower", lamport=24)
    feed(progress, "bee-1", "egg", reed=1, count=1, lamport=25)
    feed(progress, "bee-1", "egg", reed=1, count=2, lamport=27)
    feed(progress, "bee-2", "egg", reed=2, count=1, lamport=28)
    feed(progress, "bee-3", "state", state="WAIT_FLOWER", lamport=30, t=2.0)
    progress.status("bee-3", {"waiting": {"ACKflower": ["bee-1", "bee-2"]}, "lamport": 31})
    text = render(progress)
    rows = {line.split()[1]: line for line in text.splitlines() if line.startswith("│ bee-")}
    assert [c.strip() for c in rows["bee-1"].split("│")[1:6]] == ["bee-1", "ON_FLOWER", "27", "2", "2"]
    assert (
        "WAIT_FLOWER" in rows["bee-3"]
        and "31" in rows["bee-3"]
        and "ACKflower from bee-1, bee-2" in rows["bee-3"]
    )
    assert "holders: reed:1 bee-1; reed:2 bee-2" in text  # the flower was left again
    assert "eggs per reed: reed:1 2, reed:2 1" in text
    assert "messages/s: 5.0 (last 5s), 5.0 overall, 10 sent" in text
    clock.now += 10  # nothing sent for 10 s: the window empties
    assert "messages/s: 0.0 (last 5s), 0.8 overall, 10 sent" in render(progress)


def test_table_counts_contracts_per_elf_and_units_held():
    progress = LiveView(io.StringIO(), clock=FakeClock())
    progress.begin(["mayor", "elf-1", "elf-2"])
    feed(progress, "elf-1", "enter", resource="pins", units=2, lamport=5)
    feed(progress, "elf-2", "enter", resource="poison", units=3, lamport=6)
    feed(progress, "elf-1", "contract_done", round=1, contract=1, hamsters=2, lamport=7)
    feed(progress, "elf-1", "contract_done", round=1, contract=3, hamsters=1, lamport=9)
    feed(progress, "elf-2", "exit", resource="poison", units=3, lamport=10)
    text = render(progress)
    header = next(line for line in text.splitlines() if "process" in line)
    assert "contracts" in header and "eggs" not in header
    rows = {line.split()[1]: line.split("│") for line in text.splitlines() if line.startswith("│ ")}
    assert rows["elf-1"][5].strip() == "2" and rows["elf-2"][5].strip() == "0"
    assert "holders: pins elf-1×2" in text and "poison" not in text.split("holders:")[1].split("\n")[0]


def test_on_a_terminal_the_table_is_drawn_live():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    progress = LiveView(out)
    progress.begin(["node-1"])
    assert progress.live is not None
    feed(progress, "node-1", "state", state="HELD", lamport=4, t=0.1)
    progress.end()
    assert progress.live is None
    assert "mutexlab monitor" in out.getvalue() and "HELD" in out.getvalue()
    assert "lamport 4" not in out.getvalue(), "no plain lines on a terminal"


def test_the_message_rate_window_keeps_only_the_last_window_of_sends():
    """A long run at a high rate: the window holds the sends of the last WINDOW seconds and no more
    (it is trimmed as sends arrive, not rebuilt: the monitor's cost per send stays constant)."""
    clock = FakeClock()
    progress = LiveView(io.StringIO(), clock=clock)
    progress.begin(["node-1", "node-2"])
    for n in range(20_480):  # 128 sends a second (exact in binary) for 160 s
        clock.now += 1 / 128
        feed(progress, "node-1", "send", type="REQUEST", to="node-2", lamport=n)
        if n % 5_000 == 4_999:
            assert len(progress.sends) == 640, "only the last 5 s of sends are kept"
    assert progress.rate() == (128.0, 128.0)
