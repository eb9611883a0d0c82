"""``mutexlab verify`` (and ``report``) on traces that cannot be read: exit 2 with one line naming
the file and, where there is one, the line — never a traceback, never a verdict.

The fuzzing starts from real traces of three families and breaks them the ways a file breaks:
random bytes, bad UTF-8, a line replaced by any JSON value, a field dropped or given any JSON
value, a file cut at any byte. Whatever comes out must be a verdict (0, 1, 3) or exit 2 with
a one-line reason; an exception escaping ``main`` fails the test.
"""

from __future__ import annotations

import json
import os
import tempfile
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mutexlab.cli import main
from mutexlab.protocols.registry import make_setup
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceError, TraceWriter

FAMILIES = {
    "bees": (3, {"flowers": 1, "reeds": 2}),
    "elves": (2, {"rounds": 1, "contracts": 2}),
    "ricart-agrawala": (3, {"requests": 1}),
}


@cache
def trace_lines(algorithm: str) -> tuple[str, ...]:
    n, options = FAMILIES[algorithm]
    writer = TraceWriter(None, keep=True)
    Simulation(make_setup(algorithm, n, options, 0), SimConfig(seed=0), writer).run()
    return tuple(json.dumps(e, separators=(",", ":")) for e in writer.events)


def verify_bytes(data: bytes, capsys, command: str = "verify") -> tuple[int, str, str]:
    """Write ``data`` to a file, run ``mutexlab verify`` on it; (code, stdout, stderr, path)."""
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        capsys.readouterr()
        argv = [command, path] + (["-o", path + ".html"] if command == "report" else [])
        code = main(argv)
        out, err = capsys.readouterr()
    finally:
        os.unlink(path)
        if os.path.exists(path + ".html"):
            os.unlink(path + ".html")
    return code, out, err, path


def assert_judged_or_refused(code: int, out: str, err: str, path: str, command: str = "verify") -> None:
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, f"exit 2 must give one line, got: {err!r}"
        assert lines[0].startswith("mutexlab: error: ") and path in lines[0], lines[0]
        assert "Traceback" not in err and out == ""
    elif command == "verify":
        assert code in (0, 1, 3), (code, out, err)
        head = out.splitlines()[0]
        assert head.endswith("SAFE") or ": VIOLATION (" in head or ": INCOMPLETE (" in head, head
    else:
        assert code == 0 and "report written to" in out, (code, out, err)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def broken_traces(draw) -> bytes:
    lines = list(trace_lines(draw(st.sampled_from(sorted(FAMILIES)))))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["replace", "drop", "set", "cut", "bytes"]))
        if how == "replace":
            lines[i] = json.dumps(draw(json_values))
        elif how in ("drop", "set"):
            try:
                event = json.loads(lines[i])
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            key = draw(
                st.sampled_from(sorted(event) + ["msg", "units", "reed", "round", "contract", "params"])
            )
            if how == "drop":
                event.pop(key, None)
            elif isinstance(event.get(key), dict) and draw(st.booleans()):  # msg, params, processes, vc ...
                inner = draw(st.sampled_from(sorted(event[key]) + ["plan", "rounds", "round", "ts"]))
                if draw(st.booleans()):
                    event[key].pop(inner, None)
                else:
                    event[key][inner] = draw(json_values)
            else:
                event[key] = draw(json_values)
            lines[i] = json.dumps(event)
        elif how == "cut":
            lines = lines[: i + 1]
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        else:
            lines[i] = draw(st.binary(max_size=12)).decode("latin-1")
    return "\n".join(lines).encode("latin-1" if any(ord(c) > 0x7F for c in "".join(lines)) else "utf-8")


@pytest.mark.slow  # 150 generated inputs, each verified
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400))
def test_random_bytes_are_refused_with_one_line(data, capsys):
    code, out, err, path = verify_bytes(data, capsys)
    assert code == 2, (code, out, err)
    assert_judged_or_refused(code, out, err, path)


@pytest.mark.slow  # 300 generated traces, each verified
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=broken_traces())
def test_a_broken_trace_gets_a_verdict_or_one_line(data, capsys):
    assert_judged_or_refused(*verify_bytes(data, capsys))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=broken_traces())
def test_report_on_a_broken_trace_writes_or_refuses_with_one_line(data, capsys):
    assert_judged_or_refused(*verify_bytes(data, capsys, "report"), command="report")


HEADER = '{"event":"run","pid":"run","algorithm":"lamport","capacities":{"cs":1}}\n'
ENTER = '{"event":"enter","pid":"node-1","t":1,"lamport":1,"vc":{"node-1":1},"resource":"cs"}\n'


@pytest.mark.parametrize(
    "content, words",
    [
        (
            b"\x89PNG\r\n\x1a\n\x00\x00",
            ": a binary file (NUL bytes in its first 4 KiB), not a log or trace of text",
        ),
        (b"\x89PNG\r\n\x1a\n", ":1: not UTF-8 text"),
        (HEADER.encode() + b'{"event": "enter", "pid": "caf\xe9"}\n', ":2: not UTF-8 text"),
        (b"", "the trace is empty"),
        (b"\n\n  \n", "the trace is empty"),
        (b"[1, 2]\n", ":1: an event must be a JSON object, not list"),
        (b'"run"\n', ":1: an event must be a JSON object, not str"),
        (b"{not json\n", ":1: not JSON"),
        # a first line opening with [ may be a ShiViz record (a bracketed stamp): it is neither.
        # 100,000 deep: a record is matched where it must start, not searched for from each place
        # of the line (1,192 s here before: a time quadratic in the line's length).
        (b"[" * 100_000 + b"\n", ":1: not a record of GoVector's regex"),
        (ENTER.encode(), ":1: the trace has no 'run' header"),
        (b'{"event":"run","pid":"run"}\n', ":1: the run header lacks 'capacities'"),
        (b'{"event":"run","pid":"run","capacities":{"cs":"one"}}\n', 'the capacity "one"'),
        (
            (HEADER + '{"event":"enter","pid":"node-1","t":1}\n').encode(),
            ":2: event lacks its vector clock 'vc'",
        ),
        (
            (HEADER + '{"event":"enter","pid":"node-1","t":1,"vc":{"node-2":1},"resource":"cs"}\n').encode(),
            ":2: vector clock 'vc' lacks node-1's own entry",
        ),
        (
            (
                HEADER + '{"event":"enter","pid":"node\\r1","t":1,"vc":{"node-2":1},"resource":"cs"}\n'
            ).encode(),
            ":2: vector clock 'vc' lacks 'node\\r1''s own entry",  # a control character stays on one line
        ),
        (
            (HEADER + ENTER.replace('"resource":"cs"', '"resource":7')).encode(),
            ":2: enter event's 'resource' must be a string",
        ),
        ((HEADER + ENTER.replace(',"resource":"cs"', "")).encode(), ":2: enter event lacks 'resource'"),
        (
            (HEADER + ENTER.replace('"resource":"cs"', '"resource":"cs","units":0')).encode(),
            "'units' must be at least 1",
        ),
        ((HEADER + ENTER.replace('"t":1', '"t":"soon"')).encode(), ":2: enter event's 't' must be a number"),
        ((HEADER + ENTER + "{}\n").encode(), ":3: event lacks event, pid"),
    ],
)
def test_each_unreadable_trace_names_its_problem(content, words, capsys):
    code, out, err, path = verify_bytes(content, capsys)
    assert code == 2 and words in err, err
    assert_judged_or_refused(code, out, err, path)


def test_a_missing_file_and_a_directory_are_refused(tmp_path, capsys):
    assert main(["verify", str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot read" in err and "nope.jsonl" in err and "No such file" in err
    assert main(["verify", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and str(tmp_path) in err
        and "a directory, not a log" in err
        and "put its processes' files together" in err
    )


def test_report_names_the_file_when_an_event_cannot_be_drawn(capsys):
    # a trace's first event with a time 't' places them by time: a later one without is refused
    state = '{"event":"state","pid":"node-1","t":0,"lamport":1,"vc":{"node-1":1},"state":"WANTED"}\n'
    send = '{"event":"send","pid":"node-1","lamport":1,"vc":{"node-1":2},"type":"REQUEST","to":"node-2","id":"a"}\n'
    code, out, err, path = verify_bytes((HEADER + state + send).encode(), capsys, "report")
    assert code == 2 and f"{path}: line 3: send event of node-1 lacks a numeric 't'" in err
    assert_judged_or_refused(code, out, err, path, command="report")


# -- vector clocks that contradict each other (audit/clocks.py) ----------------------------------
# Each file shows two holders of cs whose clocks, read as they stand, say one left before the
# other entered: the audit would call it SAFE. Each clock is impossible, and the file is refused.
def _trace(*events: dict) -> bytes:
    head = {"event": "run", "pid": "run", "algorithm": None, "capacities": {"cs": 1}}
    return "".join(json.dumps(e) + "\n" for e in (head, *events)).encode()


def _ev(kind: str, pid: str, vc: dict, **fields) -> dict:
    event = {"event": kind, "pid": pid, "t": 0, "vc": vc, **fields}
    if kind in ("enter", "exit"):
        event["resource"] = "cs"
    return event


def _msg(kind: str, pid: str, vc: dict, key: str, other: str) -> dict:
    return _ev(kind, pid, vc, type="M", id=key, **({"to": other} if kind == "send" else {"from": other}))


CONTRADICTIONS = {
    "an enter knows another's exit with no receive": (
        _trace(
            _ev("enter", "n1", {"n1": 1}),
            _ev("exit", "n1", {"n1": 2}),
            _ev("enter", "n2", {"n1": 2, "n2": 1}),
            _ev("exit", "n2", {"n1": 2, "n2": 2}),
        ),
        ":4: the vector clocks contradict each other: n2's enter knows event 2 of n1 (it knew 0) without "
        "receiving a message that tells it",
    ),
    "a clock knows node-1's 99th event when it has 3": (
        _trace(
            _ev("enter", "n1", {"n1": 1}),
            _msg("send", "n1", {"n1": 2}, "m", "n2"),
            _msg("recv", "n2", {"n1": 99, "n2": 1}, "m", "n1"),
            _ev("enter", "n2", {"n1": 99, "n2": 2}),
            _ev("exit", "n1", {"n1": 3}),
            _ev("exit", "n2", {"n1": 99, "n2": 3}),
        ),
        ":4: the vector clocks contradict each other: n2's recv of message m says it knows event 99 of n1",
    ),
    "a cycle of causality": (
        _trace(
            _msg("recv", "n1", {"n1": 1, "n2": 4}, "m2", "n2"),
            _ev("enter", "n1", {"n1": 2, "n2": 4}),
            _ev("exit", "n1", {"n1": 3, "n2": 4}),
            _msg("send", "n1", {"n1": 4, "n2": 4}, "m1", "n2"),
            _msg("recv", "n2", {"n1": 4, "n2": 1}, "m1", "n1"),
            _ev("enter", "n2", {"n1": 4, "n2": 2}),
            _ev("exit", "n2", {"n1": 4, "n2": 3}),
            _msg("send", "n2", {"n1": 4, "n2": 4}, "m2", "n1"),
        ),
        ":6: the vector clocks contradict each other: message m1 was sent knowing event 4 of n2, which "
        "receives it as its own event 1: a cycle of causality",
    ),
    "a process's own entry goes back": (
        _trace(
            _ev("enter", "n1", {"n1": 1}),
            _msg("send", "n1", {"n1": 2}, "m", "n2"),
            _msg("recv", "n2", {"n1": 2, "n2": 1}, "m", "n1"),
            _ev("enter", "n2", {"n1": 2, "n2": 2}),
            _ev("exit", "n1", {"n1": 2}),
            _ev("exit", "n2", {"n1": 2, "n2": 3}),
        ),
        ":6: the vector clocks contradict each other: n1's own entry goes back: 2 after 2",
    ),
    "a ShiViz cycle": (
        b'a {"a":1,"b":2}\nenter cs\na {"a":2,"b":2}\nexit cs\nb {"a":2,"b":1}\nenter cs\nb {"a":2,"b":2}\nexit cs\n',
        ":5: the vector clocks contradict each other: b's event 1 knows event 2 of a, which knows it in turn",
    ),
    "a ShiViz record knows a's 99th event when a has 3": (
        b'a {"a":1}\nenter cs\nb {"a":99,"b":1}\nenter cs\na {"a":2}\nexit cs\na {"a":3}\nother\n'
        b'b {"a":99,"b":2}\nexit cs\n',
        ":3: the vector clocks contradict each other: b knows event 99 of a, which has 3 events",
    ),
    "a ShiViz record knows another's event but not what that one knew": (
        b'c {"c":1}\nexit x\nc {"c":2}\nother\na {"a":1,"c":2}\nother\nb {"a":1,"b":1}\nother\n',
        ":7: the vector clocks contradict each other: b's event 1 knows event 1 of a but not what that one "
        "knew: event 2 of c",
    ),
}


@pytest.mark.parametrize("name", sorted(CONTRADICTIONS))
def test_clocks_that_contradict_each_other_are_refused_naming_the_line(name, capsys):
    content, words = CONTRADICTIONS[name]
    for command in ("verify", "report"):
        code, out, err, path = verify_bytes(content, capsys, command)
        assert code == 2 and words in err, (name, command, code, out, err)
        assert_judged_or_refused(code, out, err, path, command)


def test_consistent_clocks_of_every_family_pass_the_clock_check():
    from mutexlab.audit.clocks import consistent

    for family in FAMILIES:
        events = [json.loads(line) for line in trace_lines(family)]
        assert len(list(consistent(events, family))) == len(events)


# -- smaller holes: a partial export, a negative workload, a byte order mark, non-ASCII numbers ------
def test_an_export_refused_half_way_leaves_no_partial_log(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(
        _trace(_ev("enter", "a", {"a": 1}), _ev("exit", "a", {"a": 2}), _ev("enter", "a b", {"a b": 1}))
    )
    out = tmp_path / "t.log"
    out.write_text("an older log\n")
    assert main(["export", str(trace), "-o", str(out)]) == 2
    assert "cannot be a ShiViz host" in capsys.readouterr().err
    assert out.read_text() == "an older log\n" and sorted(p.name for p in tmp_path.iterdir()) == [
        "t.jsonl",
        "t.log",
    ]
    out.unlink()
    assert main(["export", str(trace), "-o", str(out)]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]


@pytest.mark.parametrize("requests", [-5, 1.5, "3", True])
def test_a_header_with_a_workload_that_is_no_count_is_refused(requests, capsys):
    run = {"event": "run", "pid": "run", "algorithm": "lamport", "capacities": {"cs": 1}}
    run["params"] = {"nodes": 1, "requests": requests}
    content = (
        json.dumps(run) + "\n" + ENTER + ENTER.replace('"enter"', '"exit"').replace(":1}", ":2}")
    ).encode()
    code, out, err, path = verify_bytes(content, capsys)
    assert (
        code == 2 and ":1: the run header's params.requests is" in err and "not a whole number ≥ 0" in err
    ), err


def test_a_byte_order_mark_is_no_part_of_the_trace(capsys):
    content = "\n".join(trace_lines("ricart-agrawala")).encode()
    plain = verify_bytes(content, capsys)
    marked = verify_bytes(b"\xef\xbb\xbf" + content, capsys)
    assert (
        plain[0] == marked[0] == 0 and plain[1] == marked[1] and marked[1].startswith("ricart-agrawala: SAFE")
    )
    assert verify_bytes(b"\xef\xbb\xbf" + content, capsys, "report")[0] == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "f.jsonl", "--expect-entries", "²"],
        ["verify", "f.jsonl", "--expect-entries", "a=٣"],
        ["verify", "f.jsonl", "--capacity", "cs=1_0"],
        ["verify", "f.jsonl", "--capacity", "cs=" + "9" * 5000],
        ["report", "t.jsonl", "--window", "٣"],
        ["report", "t.jsonl", "--window", "1_0"],
        ["simulate", "mutex", "-a", "lamport", "-N", "٣"],
        ["simulate", "mutex", "-a", "lamport", "-N", "1_0"],
        ["simulate", "mutex", "-a", "lamport", "-N", " 3"],
        ["simulate", "mutex", "-a", "lamport", "-N", "2", "--cs", "١.٥"],
        ["simulate", "mutex", "-a", "lamport", "-N", "2", "--cs", "1_0.5"],
        ["simulate", "elves", "--hamsters", "١-٥"],
    ],
)
def test_numbers_on_the_command_line_are_ascii_digits_only(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.jsonl").write_text("\n".join(trace_lines("ricart-agrawala")) + "\n")
    (tmp_path / "f.jsonl").write_text(
        '{"event":"enter","pid":"a","resource":"cs"}\n{"event":"exit","pid":"a","resource":"cs"}\n'
    )
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse refuses it, with its usage
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, (code, err)
    assert not (tmp_path / "t.html").exists()


def test_ascii_numbers_are_still_read():
    from mutexlab.commands.common import count, seconds

    assert count(0)("12") == 12 and count(0)("+3") == 3 and seconds("1.5") == 1.5 and seconds("2e-1") == 0.2
    assert seconds(".5") == 0.5 and seconds("5.") == 5.0


def test_a_host_that_asks_late_for_a_forgotten_clock_has_the_log_read_again(tmp_path):
    """A causal ShiViz log has its history forgotten once every host seen knows it; a host first
    seen later may ask for it after all: the log is read again keeping it, with the same verdict."""
    from mutexlab.audit.foreign import verify_log

    records = []
    for n in range(1, 1501):  # a and b ping-pong: each record of b learns a's latest, and back
        records.append(f'a {{"a":{n},"b":{n - 1}}}\nother')
        records.append(f'b {{"a":{n},"b":{n}}}\nother')
    records.append('c {"a":1,"c":1}\nenter cs')  # c heard of a's first record only
    records.append('c {"a":1,"c":2}\nexit cs')
    good = tmp_path / "late.log"
    good.write_text("\n".join(records) + "\n")
    assert verify_log(good).ok
    bad = tmp_path / "late-bad.log"
    records[-2] = 'c {"a":2,"c":1}\nenter cs'  # a's second record knew b's first: c must too
    records[-1] = 'c {"a":2,"c":2}\nexit cs'
    bad.write_text("\n".join(records) + "\n")
    with pytest.raises(TraceError, match="knows event 2 of a but not what that one knew: event 1 of b"):
        verify_log(bad)


# -- a log from a pipe ------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["verify", "report"])
def test_a_log_piped_to_dev_stdin_is_read_whole(command, tmp_path):
    """Telling the format reads the first lines, and a log not in a causal order is read twice:
    a pipe is read once, into a temporary file (audit.foreign.spooled)."""
    import subprocess
    import sys

    lines = list(trace_lines("ricart-agrawala"))
    piped = "\n".join(lines) + "\n"
    argv = [sys.executable, "-m", "mutexlab.cli", command, "/dev/stdin"]
    argv += ["-o", str(tmp_path / "p.html")] if command == "report" else []
    done = subprocess.run(argv, input=piped, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    if command == "verify":
        assert done.stdout.startswith("ricart-agrawala: SAFE"), done.stdout
    else:
        assert (tmp_path / "p.html").stat().st_size > 0
    # a clock-free log, told by its first lines too
    free = "".join(
        json.dumps({k: v for k, v in json.loads(line).items() if k != "vc"}) + "\n" for line in lines[1:]
    )
    done = subprocess.run(argv, input=free, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and (command == "report" or done.stdout.startswith("JSON Lines log: SAFE")), (
        done.stdout + done.stderr
    )


# -- unbounded work from a log ---------------------------------------------------------------------
REDOS = "(?<host>(a|aa)+)b (?<clock>{.*})\\n(?<event>.*)"  # backtracks without end on a line of a's


@pytest.mark.parametrize(
    "argv_tail, content",
    [
        ([], f'{REDOS}\n\n{"a" * 60} {{"a":1}}\nenter cs\n'),
        (["--regex", REDOS], f'ab {{"a":1}}\nenter cs\n{"a" * 60} {{"a":2}}\nexit cs\n'),
        (
            [],
            f'{REDOS.replace("(a|aa)+", "a")}\n(x|xx)+y\n{"x" * 60}\na {{"a":1}}\nenter cs\n',
        ),  # the delimiter
    ],
)
@pytest.mark.parametrize("command", ["verify", "report"])
def test_a_regex_that_backtracks_without_end_is_cut_off(command, argv_tail, content, tmp_path, capsys):
    import time

    path = tmp_path / "redos.log"
    path.write_text(content)
    argv = [command, str(path), "--format", "shiviz", *argv_tail]
    argv += ["-o", str(tmp_path / "r.html")] if command == "report" else []
    start = time.monotonic()
    code = main(argv)
    took = time.monotonic() - start
    err = capsys.readouterr().err
    assert code == 2 and "took more than 1 s on this line" in err and f"{path}:3:" in err, err
    assert took < 30, took


def _measured(argv: list[str], tmp_path, address_space: int = 3 << 30) -> tuple[int, str, str, float, int]:
    """``mutexlab argv`` in a child process: (code, stdout, stderr, CPU seconds, peak RSS in MB),
    its address space capped so a failure cannot take the machine's memory."""
    import resource
    import subprocess
    import sys

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    import os
    import threading

    # This child's own usage (os.wait4), not RUSAGE_CHILDREN's: that peak is the largest of every
    # child the test process ever waited for, earlier tests' included.
    out_path, err_path = tmp_path / "measured.out", tmp_path / "measured.err"
    with out_path.open("w") as out, err_path.open("w") as err:
        child = subprocess.Popen(
            [sys.executable, "-m", "mutexlab.cli", *argv], stdout=out, stderr=err, text=True, preexec_fn=cap
        )
        killer = threading.Timer(300, child.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)
        finally:
            killer.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    cpu = usage.ru_utime + usage.ru_stime
    stdout, stderr = out_path.read_text(), err_path.read_text()
    return child.returncode, stdout, stderr, cpu, usage.ru_maxrss // 1024


def test_many_holders_under_a_large_capacity_are_decided_in_bounded_memory(tmp_path):
    """20,000 holders at once of a resource of capacity 19,999: the capacity audit once built a
    20,000² matrix (3.3 GB, then a traceback) after a greedy cover of 2·10⁸ steps; now it reads only
    the clock entries there are (capacity.generating_pairs) and cuts the cover short."""
    path = tmp_path / "holders.jsonl"
    with path.open("w") as out:
        for kind in ("enter", "exit"):
            out.writelines(
                json.dumps({"event": kind, "pid": f"p{i}", "resource": "cs"}) + "\n" for i in range(20_000)
            )
    code, out, err, cpu, rss = _measured(["verify", str(path), "--capacity", "cs=19999"], tmp_path)
    assert code == 1 and "[capacity] cs (capacity 19999) held by p0 (1 unit, line 1)," in out, err[-500:]
    assert "p19999 (1 unit, line 20000) at once" in out
    assert cpu < 30 and rss < 600, (cpu, rss)
    code, out, err, cpu, rss = _measured(["verify", str(path), "--capacity", "cs=20000"], tmp_path)
    assert code == 0 and out.startswith("JSON Lines log: SAFE"), err[-500:]
    assert cpu < 30 and rss < 600, (cpu, rss)


# -- exit codes that never lie: sizes refused before they are held, a crash is exit 4 -------------------
def test_a_report_of_more_processes_than_it_can_draw_is_refused_at_the_header(tmp_path):
    # 150,000: a header of more members than a line may hold (limits.MAX_LINE_MEMBERS, 200,000) is
    # refused before it is parsed, the names never read (test_outsider_logs15.py)
    processes = {str(i): f"node-{i}" for i in range(1, 150_001)}
    run = {
        "event": "run",
        "pid": "run",
        "algorithm": "lamport",
        "processes": processes,
        "capacities": {"cs": 1},
    }
    run["params"] = {"nodes": 150_000, "requests": 0}
    path = tmp_path / "wide.jsonl"
    path.write_text(
        json.dumps(run) + "\n" + json.dumps(_ev("state", "node-1", {"node-1": 1}, state="IDLE")) + "\n"
    )
    code, out, err, cpu, rss = _measured(["report", str(path), "-o", str(tmp_path / "w.html")], tmp_path)
    assert code == 2 and "line 1: the trace names 150,000 processes; a report draws at most 10,000" in err, (
        err
    )
    assert not (tmp_path / "w.html").exists() and cpu < 30 and rss < 600, (cpu, rss)


def test_a_clock_free_log_that_holds_too_much_is_refused_naming_the_limit(tmp_path, monkeypatch, capsys):
    from mutexlab import limits

    monkeypatch.setattr(limits, "MAX_WAITING_EVENTS", 50)
    lines = [{"event": "recv", "pid": "a", "type": "M", "from": "b", "id": "late"}]  # sent at the very end
    lines += [{"event": "enter" if i % 2 == 0 else "exit", "pid": "a", "resource": "cs"} for i in range(100)]
    lines += [{"event": "send", "pid": "b", "type": "M", "to": "a", "id": "late"}]
    path = tmp_path / "late.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    assert main(["verify", str(path)]) == 2
    assert f"{path}:51: more than 50 events wait for sends further on" in capsys.readouterr().err
    monkeypatch.setattr(limits, "MAX_WAITING_EVENTS", 400_000)
    monkeypatch.setattr(limits, "MAX_IN_FLIGHT_ENTRIES", 20)
    lines = [{"event": "send", "pid": "a", "type": "M", "to": "b", "id": f"m{i}"} for i in range(30)]
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    assert main(["verify", str(path)]) == 2
    assert f"{path}:21: the messages sent and not yet received carry more than 20 clock entries" in (
        capsys.readouterr().err
    )


def test_an_internal_error_is_exit_4_never_1(monkeypatch, tmp_path, capsys):
    import mutexlab.commands.verify as verify_command

    (tmp_path / "t.jsonl").write_text("\n".join(trace_lines("ricart-agrawala")) + "\n")
    for error in (ValueError("a bug"), MemoryError()):

        def broken(*args, error=error, **kwargs):
            raise error

        monkeypatch.setattr(verify_command, "verify_log", broken)
        assert main(["verify", str(tmp_path / "t.jsonl")]) == 4
        assert "mutexlab: internal error" in capsys.readouterr().err
