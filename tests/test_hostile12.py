"""mutexlab killed, or fed hostile programs and input, by a user who means harm or just has bad luck:
what it leaves behind and what it says (docs/faults.md, docs/test-any-program.md#findings)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join([str(ROOT / "shared"), str(ROOT)])
    return {**os.environ, "PYTHONPATH": path, **extra}


def _pids_naming(text: str) -> list[int]:
    """Live processes (no zombies) whose command line holds ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


# A first use builds a compiled piece into the cache: the audit's clocks, mutexlab's MPI library.
BUILDS = {
    "fastclock": "from mutexlab import fastclock; fastclock.compiled()",
    "mpi": "from mutexlab import mpi; mpi.library()",
}


@pytest.mark.parametrize("piece", sorted(BUILDS))
def test_a_build_cut_short_by_sigkill_leaves_nothing_in_the_cache(piece, tmp_path):
    cache = tmp_path / "cache"
    child = subprocess.Popen(
        [sys.executable, "-c", BUILDS[piece]],
        env=_env(MUTEXLAB_CACHE=str(cache)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        work: list[Path] = []
        while not work and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
            work = [
                p for p in (cache / "mutexlab").glob("*") if not p.name.startswith(("fastclock-", "mpi-"))
            ]
        while work and not _pids_naming(str(work[0])) and time.monotonic() < deadline:
            time.sleep(0.002)  # until the compiler is at work in it
        assert work and work[0].exists(), "the build ended before it could be killed"
        child.send_signal(signal.SIGKILL)
        child.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and (work[0].exists() or _pids_naming(str(work[0]))):
            time.sleep(0.05)
        assert not work[0].exists(), f"left behind: {sorted(p.name for p in work[0].iterdir())}"
        assert not _pids_naming(str(work[0])), "a compiler outlived the build"
    finally:
        child.kill()
        child.wait()
        for pid in _pids_naming(str(cache)):
            os.kill(pid, signal.SIGKILL)


# -- logs from a pipe -------------------------------------------------------------------------------
def _mutexlab(*argv: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mutexlab", *argv], capture_output=True, text=True, timeout=120, **kwargs
    )


def test_sigkill_while_a_piped_log_is_copied_leaves_no_copy(tmp_path):
    # The copy a piped log is read into was a named file in TMPDIR, deleted by ``finally`` alone.
    proc = subprocess.Popen(
        [sys.executable, "-m", "mutexlab", "verify", "/dev/stdin"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(TMPDIR=str(tmp_path)),
    )

    def copying() -> bool:  # a file in TMPDIR, or one held open by verify without a name
        if list(tmp_path.glob("mutexlab-*")):
            return True
        with_fds = Path(f"/proc/{proc.pid}/fd")
        try:
            return any(str(tmp_path / "mutexlab-") in os.readlink(fd) for fd in with_fds.iterdir())
        except OSError:
            return False

    try:
        assert proc.stdin is not None
        proc.stdin.write(b'{"event": "request", "pid": 1}\n')
        proc.stdin.flush()  # the pipe stays open: verify waits, copying
        deadline = time.monotonic() + 20
        while not copying() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert copying(), "the copy was never made"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=20)
    finally:
        proc.kill()
        proc.wait()
    assert list(tmp_path.iterdir()) == []


def test_an_empty_piped_log_is_named_once(tmp_path):
    out = tmp_path / "page.html"
    done = _mutexlab("report", "/dev/stdin", "-o", str(out), input="", env=_env())
    assert done.returncode == 2, done.stderr
    assert done.stderr == "mutexlab: error: /dev/stdin: the trace is empty (no events)\n", done.stderr


def test_a_report_of_a_symbolic_link_loop_is_refused_not_a_traceback(tmp_path, cli):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    for argv in (["report", str(tmp_path / "a")], ["report", str(tmp_path / "a"), "-o", str(tmp_path / "b")]):
        ran = cli(*argv)
        assert ran.returncode == 2, ran.stderr
        assert "Too many levels of symbolic links" in ran.stderr and "Traceback" not in ran.stderr


def test_a_report_of_a_log_from_standard_input_needs_a_name(tmp_path):
    """``report /dev/stdin`` named its page ``/dev/stdin.html``: written into /dev (as root)."""
    trace = tmp_path / "t.trace"
    made = _mutexlab(
        "simulate", "mutex", "-a", "ricart-agrawala", "-N", "2", "--trace", str(trace), env=_env()
    )
    assert made.returncode == 0, made.stderr
    stray = Path("/dev/stdin.html")
    there = stray.exists()
    try:
        with trace.open("rb") as redirected:  # a file as standard input, and a pipe
            for how in ({"stdin": redirected}, {"input": trace.read_text()}):
                done = _mutexlab("report", "/dev/stdin", cwd=tmp_path, env=_env(), **how)
                assert done.returncode == 2, done.stdout + done.stderr
                assert "is a pipe or a device" in done.stderr and "-o FILE" in done.stderr, done.stderr
        done = _mutexlab(
            "report", "/dev/stdin", "-o", "p.html", input=trace.read_text(), cwd=tmp_path, env=_env()
        )
        assert done.returncode == 0 and (tmp_path / "p.html").stat().st_size > 0, done.stderr
    finally:
        if not there and stray.exists():
            stray.unlink()


# -- temporary files of other commands, SIGKILLed -------------------------------------------------
def _killed_leaves_nothing(tmp_path: Path, proc: subprocess.Popen, made) -> None:
    """Wait for ``made()`` (the temporary file is there), SIGKILL ``proc``: ``tmp_path`` empties."""
    try:
        deadline = time.monotonic() + 20
        while not made() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert made(), "the temporary file was never made"
        time.sleep(0.1)  # past the microseconds between making it and naming it to the watcher
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=20)
        deadline = time.monotonic() + 5
        while list(tmp_path.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(tmp_path.iterdir()) == []
    finally:
        proc.kill()
        proc.wait()


def test_sigkill_of_test_mpi_leaves_no_file_for_the_ranks_errors(tmp_path):
    # The file the ranks write what they do not support into was a named file in TMPDIR.
    temp = tmp_path / "temp"
    temp.mkdir()
    code = (
        "import time\nfrom mutexlab.commands.mpitest import errors\n"
        "with errors():\n    print('ready', flush=True)\n    time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=_env(TMPDIR=str(temp))
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    _killed_leaves_nothing(temp, proc, lambda: list(temp.iterdir()))


def test_sigkill_of_export_leaves_no_partial_log(tmp_path):
    trace = tmp_path / "t.trace"
    made = _mutexlab(
        "simulate", "mutex", "-a", "ricart-agrawala", "-N", "2", "--trace", str(trace), env=_env()
    )
    assert made.returncode == 0, made.stderr
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mutexlab", "export", "/dev/stdin", "-o", str(out / "log.txt")],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    assert proc.stdin is not None
    proc.stdin.write(trace.read_bytes().splitlines(keepends=True)[0])  # the header; the rest never comes
    proc.stdin.flush()
    _killed_leaves_nothing(out, proc, lambda: list(out.glob("*.partial")))


# -- node lines that are almost JSON: told what they are ---------------------------------------------
@pytest.mark.parametrize(
    "raw, words",
    [
        # Python's print(d): a dict's repr, which a user means as a protocol line
        (b"{'type': 'done'}", "a single quote at character 1: JSON's keys and strings are in double quotes"),
        (b'{"type":"log","x":"a\x00b"}', "a control character (\\x00) inside a string, at character 20"),
        (b'{"type":"log","x":"\xff"}', "a line of bytes that are not UTF-8 text (byte 20: 0xff)"),
        (b'{"type":"send","to":2,"body":' + b"9" * 5000 + b"}", "an integer of more than 4,300 digits"),
    ],
)
def test_a_line_that_is_almost_json_is_named_for_what_it_is(raw, words):
    from mutexlab.director.lines import STDOUT_IS_PROTOCOL, NodeFault, parse

    with pytest.raises(NodeFault) as caught:
        parse(raw, 1, frozenset({2}))
    assert caught.value.rule == "garbage" and words in caught.value.message, caught.value.message
    assert STDOUT_IS_PROTOCOL not in caught.value.message  # no debugging print: a line meant as JSON


def test_json_past_pythons_integer_limit_gives_no_python_advice(tmp_path, cli):
    scenario = tmp_path / "s.json"
    scenario.write_text('{"x": ' + "9" * 5000 + "}")
    log = tmp_path / "t.trace"
    log.write_text('{"event": "run", "x": ' + "9" * 5000 + "}\n")
    for argv in (["replay", str(scenario)], ["verify", str(log)]):
        ran = cli(*argv)
        assert ran.returncode == 2 and "an integer of more than 4,300 digits" in ran.stderr, ran.stderr
        assert "set_int_max_str_digits" not in ran.stderr, ran.stderr


# -- the explorer's HTTP server: refusals of http.server itself ------------------------------------
@pytest.mark.parametrize(
    "request_bytes, status",
    [
        (b"GET /api/state?" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414),  # a request line too long
        (b"GET /api/state HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", 431),  # a header too long
        (b"GET /api/state HTTP/1.1\r\n" + b"X: 1\r\n" * 101 + b"\r\n", 431),  # too many headers
        (b'GET /api/state HTTP/"1.1\r\n\r\n', 400),  # a quote that would break JSON written by hand
    ],
)
def test_what_http_server_refuses_itself_is_answered_in_json(request_bytes, status):
    """docs/explore.md: every answer is JSON, a bad request a 4xx with ``{"error", "status"}``;
    http.server's own refusals were an HTML page."""
    import json
    import socket
    import threading

    from mutexlab.explore.server import make_server
    from mutexlab.explore.session import Config, Session

    server = make_server(Session(Config("ricart-agrawala", 2, {"requests": 1})), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        with socket.create_connection(server.server_address[:2], timeout=10) as conn:
            conn.sendall(request_bytes)
            answer = b""
            while chunk := conn.recv(1 << 16):
                answer += chunk
        if answer.startswith(b"HTTP/"):
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.split(b" ")[1] == str(status).encode(), head
            assert b"content-type: application/json" in head.lower(), head
        else:  # no version it speaks: answered as HTTP/0.9 was, a body without a status line
            body = answer
        said = json.loads(body)
        assert said["status"] == status and said["error"], said
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_sigkill_of_a_swarm_check_ends_its_workers(tmp_path):
    """``check --swarm`` forks its workers; SIGKILLed, it left them searching at full CPU until
    the budget (``--time``, an hour if asked) ran out."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mutexlab", "check", "mutex", "-a", "ricart-agrawala", "-N", "4"]
        + ["--requests", "3", "--swarm", "--time", "60", "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            workers = [int(pid) for pid in children.read_text().split()]
        assert len(workers) >= 2, "the swarm never started its workers"
        time.sleep(0.3)  # searching
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=20)
        deadline = time.monotonic() + 5
        alive = workers
        while alive and time.monotonic() < deadline:
            time.sleep(0.05)
            alive = [pid for pid in workers if _running(pid)]
        assert alive == [], "workers outlived the swarm"
    finally:
        proc.kill()
        proc.wait()
        for pid in workers:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie, not gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_whole_number_past_2_to_the_53_written_with_an_exponent_is_told_to_be_written_in_digits():
    """``{"seed": 1e18}`` was refused as "must be a whole number ≥ 0, got 1e+18": it is one."""
    import json
    import threading
    import urllib.error
    import urllib.request

    from mutexlab.explore.server import make_server
    from mutexlab.explore.session import Config, Session

    server = make_server(Session(Config("ricart-agrawala", 2, {"requests": 1})), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    host, port = server.server_address[:2]

    def post(body: str) -> tuple[int, dict]:
        request = urllib.request.Request(
            f"http://{host}:{port}/api/random",
            data=body.encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=20) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as refused:
            return refused.code, json.loads(refused.read())

    try:
        status, said = post('{"n": 1, "seed": 1e18}')
        assert status == 400 and "1e+18" in said["error"] and "write it in digits" in said["error"], said
        status, said = post('{"n": 1, "seed": 1000000000000000000}')
        assert status == 200 and said["position"] == 1, said
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
