"""The explorer's HTTP server and JSON API, without a browser; and the command around it.

Every endpoint, every kind of bad request (each must answer 4xx with a clear message and leave
the session exactly as it was), the server's safety (only its own files, 404 for anything
else, Host and Content-Type checks), all eight protocols loaded and stepped to the end over
the API, and ``mutexlab explore`` itself: the URL it prints, Ctrl-C, bad arguments.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from test_flags import FAMILY_FLAGS

from mutexlab.explore.server import MAX_CONNECTIONS, make_server
from mutexlab.explore.session import Config, Session
from mutexlab.sim.scripted import replay_scenario

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "scenarios"


class Client:
    def __init__(self, server) -> None:
        self.host, self.port = server.server_address[:2]

    def call(self, method: str, path: str, body=None, headers: dict | None = None, raw: bytes | None = None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        hdrs = dict(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
        if method == "POST":
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        payload = resp.read()
        conn.close()
        kind = resp.getheader("Content-Type", "")
        value = json.loads(payload) if kind.startswith("application/json") and payload else payload
        return resp.status, value, resp

    def state(self) -> dict:
        status, value, _ = self.call("GET", "/api/state")
        assert status == 200
        return value

    def post(self, path: str, body=None):
        return self.call("POST", path, body if body is not None else {})


def serve(session: Session):
    server = make_server(session, "127.0.0.1", 0)
    # Polled every 50 ms for shutdown (the default 0.5 s is half a second per test at teardown).
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return server, thread


@pytest.fixture
def client():
    server, thread = serve(Session(Config("ricart-agrawala", 3, {"requests": 1})))
    yield Client(server)
    server.shutdown()
    server.server_close()
    thread.join(10)


def test_every_endpoint(client):
    state = client.state()
    assert [s["id"] for s in state["steps"]] == ["request:1", "request:2", "request:3"]
    assert {"procs", "links", "steps", "history", "findings", "position", "redo"} <= set(state)
    assert all({"id", "label"} <= set(s) for s in state["steps"])

    status, after, _ = client.post("/api/step", {"id": "request:1"})
    assert (
        status == 200 and after["position"] == 1 and after["outcome"]["taken"] == {"op": "request", "pid": 1}
    )
    assert after["links"][0]["messages"][0]["type"] == "REQUEST"
    status, after, _ = client.post("/api/undo")
    assert status == 200 and after["position"] == 0 and after["redo"] == ["request:1"]
    status, after, _ = client.post("/api/redo")
    assert status == 200 and after["position"] == 1 and after["redo"] == []
    status, after, _ = client.post("/api/random", {"n": 3, "seed": 2})
    assert status == 200 and after["position"] == 4 and after["outcome"]["taken"] == 3
    status, after, _ = client.post("/api/jump", {"to": 2})
    assert status == 200 and after["position"] == 2 and len(after["redo"]) == 2
    status, after, _ = client.post("/api/run", {"seed": 0})
    assert status == 200 and after["findings"]["status"] == "end" and after["outcome"]["stopped"] == "end"

    status, scenario, _ = client.call("GET", "/api/scenario")
    assert (
        status == 200
        and scenario["algorithm"] == "ricart-agrawala"
        and len(scenario["steps"]) == after["position"]
    )
    assert replay_scenario(scenario).entered == after["findings"]["entered"]

    status, after, _ = client.post("/api/reset")
    assert status == 200 and after["position"] == 0 and after["history"] == [] and after["redo"] == []

    notes = json.loads((EXAMPLES / "suzuki-kasami-notes.json").read_text())
    status, after, _ = client.post("/api/scenario", notes)
    assert status == 200 and after["algorithm"] == "suzuki-kasami" and after["position"] == 0
    assert len(after["redo"]) == 10
    status, after, _ = client.post("/api/jump", {"to": 10})
    node3 = next(p for p in after["procs"] if p["name"] == "node-3")
    assert ["token", "L = [1, 0, 1], Q = []"] in node3["fields"]
    status, back, _ = client.call("GET", "/api/scenario")
    assert back["steps"] == notes["steps"]

    status, examples, _ = client.call("GET", "/api/examples")
    assert status == 200
    assert {e["name"] for e in examples} == {p.stem for p in EXAMPLES.glob("*.json")}
    status, example, _ = client.call("GET", "/api/examples/maekawa-inquire-yield")
    assert status == 200 and example == json.loads((EXAMPLES / "maekawa-inquire-yield.json").read_text())

    status, page, resp = client.call("GET", "/diagram")
    assert status == 200 and b'id="diagram"' in page and b"#verdict" in page
    files = [("/", "text/html"), ("/explore.js", "text/javascript"), ("/explore.css", "text/css")]
    for path, kind in files + [("/dom.js", "text/javascript")]:  # the report's DOM helper, shared
        status, body, resp = client.call("GET", path)
        assert status == 200 and resp.getheader("Content-Type").startswith(kind) and body
        assert resp.getheader("X-Content-Type-Options") == "nosniff"
        assert "default-src 'none'" in resp.getheader("Content-Security-Policy")


BAD_REQUESTS = [
    # (method, path, body or raw bytes, extra headers, status, words in the error)
    ("POST", "/api/step", {"id": "deliver:1-2"}, None, 409, "step 'deliver:1-2' is not enabled now"),
    ("POST", "/api/step", {"id": "request:9"}, None, 409, "not enabled now"),
    ("POST", "/api/step", {"id": "teleport"}, None, 409, "not enabled now"),
    ("POST", "/api/step", {"id": 3}, None, 400, "a step id is a string"),
    ("POST", "/api/step", {}, None, 400, "the body must hold 'id'"),
    ("POST", "/api/step", b"{not json", None, 400, "the body is not JSON"),
    ("POST", "/api/step", b"[1, 2]", None, 400, "must be a JSON object"),
    (
        "POST",
        "/api/step",
        {"id": "request:1"},
        {"Content-Type": "text/plain"},
        415,
        "Content-Type: application/json",
    ),
    ("POST", "/api/undo", {}, None, 409, "nothing to undo"),
    ("POST", "/api/redo", {}, None, 409, "nothing to redo"),
    ("POST", "/api/jump", {"to": 5}, None, 409, "cannot jump to step 5"),
    ("POST", "/api/jump", {"to": "1"}, None, 400, "'to' must be a whole number"),
    ("POST", "/api/jump", {"to": -1}, None, 400, "'to' must be a whole number of steps ≥ 0"),
    ("POST", "/api/random", {"n": -1}, None, 400, "'n' must be a whole number"),
    ("POST", "/api/random", {"n": 10**9}, None, 400, "at most"),
    ("POST", "/api/run", {"seed": "x"}, None, 400, "'seed' must be a whole number"),
    (
        "POST",
        "/api/scenario",
        {"algorithm": "lamport", "processes": 2, "steps": [{"op": "hop"}]},
        None,
        422,
        "invalid scenario",
    ),
    (
        "POST",
        "/api/scenario",
        {"algorithm": "lamport", "processes": 2, "steps": [{"op": "deliver", "from": 1, "to": 2}]},
        None,
        422,
        "step 1 (deliver): no message in flight from 1 to 2",
    ),
    ("POST", "/api/scenario", {"algorithm": "lamport", "processes": 0, "steps": []}, None, 422, "processes"),
    (
        "POST",
        "/api/scenario",
        {"algorithm": "nope", "processes": 2, "steps": []},
        None,
        422,
        "unknown algorithm",
    ),
    ("GET", "/api/step", None, None, 405, "GET is not allowed on /api/step; use POST"),
    ("POST", "/api/state", {}, None, 405, "use GET"),
    ("DELETE", "/api/scenario", None, None, 405, "use GET, POST"),
    ("PUT", "/", None, None, 405, "use GET"),
    ("POST", "/explore.js", {}, None, 405, "use GET"),
    ("GET", "/api/examples/nothere", None, None, 404, "no example scenario named 'nothere'"),
    ("GET", "/api/examples/..%2F..%2Fpyproject", None, None, 404, "no example scenario"),
    ("GET", "/api/nothing", None, None, 404, "not found"),
    ("GET", "/index.html", None, None, 404, "not found"),
    ("GET", "/static/explore.js", None, None, 404, "not found"),
    ("GET", "/../../etc/passwd", None, None, 404, "not found"),
    ("GET", "/%2e%2e/pyproject.toml", None, None, 404, "not found"),
    ("GET", "/report.js", None, None, 404, "not found"),
    ("GET", "/", None, {"Host": "attacker.example:80"}, 403, "unexpected Host header"),
    ("POST", "/api/step", b"x" * 10, {"Content-Length": str(6 * 1024 * 1024)}, 413, "at most"),
    # hostile bodies: bounded nesting, numbers Python holds, the scenario bounds
    (
        "POST",
        "/api/step",
        b'{"id": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        None,
        400,
        "nested more than 64",
    ),
    ("POST", "/api/jump", b'{"to": ' + b"9" * 5000 + b"}", None, 400, "digits"),
    ("POST", "/api/jump", b'{"to": 1e999}', None, 400, "too large"),
    (
        "POST",
        "/api/scenario",
        {"algorithm": "ricart-agrawala", "processes": 1e8, "steps": []},
        None,
        422,
        "less than or equal to 1000",
    ),
]


@pytest.mark.parametrize(
    "method,path,body,headers,status,words",
    BAD_REQUESTS,
    ids=[f"{m} {p} {s}" for m, p, _, _, s, _ in BAD_REQUESTS],
)
def test_bad_requests_get_4xx_and_change_nothing(client, method, path, body, headers, status, words):
    before = client.state()
    raw = body if isinstance(body, bytes) else None
    got, value, resp = client.call(method, path, None if raw is not None else body, headers, raw)
    assert got == status
    assert isinstance(value, dict) and words in value["error"], value
    if status == 405:
        assert resp.getheader("Allow")
    assert client.state() == before


def test_a_step_taken_then_refused_leaves_the_path_as_it_was(client):
    client.post("/api/step", {"id": "request:2"})
    before = client.state()
    status, value, _ = client.post("/api/step", {"id": "request:2"})
    assert (
        status == 409
        and "not enabled now; enabled: request:1, request:3, deliver:2-1, deliver:2-3" in value["error"]
    )
    assert client.state() == before


def test_a_body_shorter_than_its_length_times_out_and_frees_its_thread(client, monkeypatch):
    """The socket timeout (``READ_TIMEOUT``, 1 s here) ends the read: 408, and the server answers
    everyone else meanwhile."""
    import socket
    import time

    from mutexlab.explore.server import Handler

    monkeypatch.setattr(Handler, "timeout", 1.0)
    slow = socket.create_connection((client.host, client.port), timeout=30)
    try:
        slow.sendall(
            b"POST /api/step HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"id":' % (client.host.encode(), client.port)
        )
        started = time.monotonic()
        assert client.state()["position"] == 0, "answered while a body is late"
        raw = b""
        while chunk := slow.recv(4096):  # the server closes the connection after its answer
            raw += chunk
        answer = raw.decode()
        assert answer.startswith("HTTP/1.0 408") or answer.startswith("HTTP/1.1 408"), answer
        assert "did not arrive within 1s" in answer and time.monotonic() - started < 15
    finally:
        slow.close()


def test_200_concurrent_requests_are_all_answered(client):
    from concurrent.futures import ThreadPoolExecutor

    def one(_):
        return client.call("GET", "/api/state")[0]

    with ThreadPoolExecutor(max_workers=200) as pool:
        statuses = list(pool.map(one, range(200)))
    assert statuses == [200] * 200


def test_a_scenario_loading_leaves_the_server_responsive(client, monkeypatch):
    """A scenario is played outside the session's lock: the server answers meanwhile, and a
    second load at the same time gets 503 instead of a second copy in memory."""
    from mutexlab.explore import server as server_module

    entered, release = threading.Event(), threading.Event()
    real = server_module.session_from_scenario

    def slow(source):
        entered.set()
        assert release.wait(60)
        return real(source)

    monkeypatch.setattr(server_module, "session_from_scenario", slow)
    scenario = json.loads((EXAMPLES / "raymond-tree.json").read_text())
    results: list = []
    loader = threading.Thread(target=lambda: results.append(client.post("/api/scenario", scenario)))
    loader.start()
    try:
        assert entered.wait(60)
        assert client.state()["algorithm"] == "ricart-agrawala", "answered while a scenario loads"
        status, value, resp = client.post("/api/scenario", scenario)
        assert status == 503 and "another scenario is loading" in value["error"]
        assert resp.getheader("Retry-After") == "1"
    finally:
        release.set()
        loader.join(60)
    assert results[0][0] == 200 and results[0][1]["algorithm"] == "raymond"
    assert client.state()["algorithm"] == "raymond"


CONFIGS = [
    Config("bees", 3, {"flowers": 1, "reeds": 2, "eggs": 2, "cocoons": 4}),
    Config("elves", 2, {"rounds": 1, "contracts": 2}),
    Config("lamport", 3, {"requests": 1}),
    Config("ricart-agrawala", 3, {"requests": 1}),
    Config("maekawa", 3, {"requests": 1}),
    Config("sanders", 3, {"requests": 1}),
    Config("suzuki-kasami", 3, {"requests": 1}),
    Config("raymond", 3, {"requests": 1}),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.algorithm)
def test_every_protocol_loads_and_steps_to_the_end_over_the_api(config):
    server, thread = serve(Session(config))
    try:
        c = Client(server)
        steps = 0
        while True:
            state = c.state()
            if not state["steps"]:
                break
            status, after, _ = c.post(
                "/api/step", {"id": state["steps"][-1]["id"]}
            )  # the last one: links first drain late
            assert status == 200, after
            steps += 1
            assert steps < 2000
        assert state["findings"]["status"] == "end", state["findings"]["summary"]
        _, scenario, _ = c.call("GET", "/api/scenario")
        assert len(scenario["steps"]) == steps
        assert replay_scenario(scenario).entered == state["findings"]["entered"]
        status, page, _ = c.call("GET", "/diagram")
        assert status == 200 and page.count(b'"procs":') == 1
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_a_broken_variant_shows_its_violation_over_the_api():
    server, thread = serve(Session(Config("tests.mutexlab_broken.ricart_agrawala", 2, {"requests": 1})))
    try:
        c = Client(server)
        c.post("/api/step", {"id": "request:1"})
        _, state, _ = c.post("/api/step", {"id": "request:2"})
        f = state["findings"]
        assert f["status"] == "violation"
        assert any(
            "cs (capacity 1) held by node-1×1, node-2×1 at once" in v["message"] for v in f["violations"]
        )
        assert any(v["rule"] == "capacity" for v in f["violations"])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


# -- the command ---------------------------------------------------------------------------
def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "shared"), str(ROOT)] + [env.get("PYTHONPATH", "")])
    return env


def _stop(proc: subprocess.Popen, sig: int = signal.SIGINT) -> tuple[str, str]:
    """Stop the explorer with ``sig`` and collect its output; killed if it does not stop (a test
    that fails leaves no server running)."""
    proc.send_signal(sig)
    try:
        return proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the explorer did not stop on {signal.Signals(sig).name}: killed; stderr {err[-500:]}")


def _explorer(*args: str, background: bool = False) -> tuple[subprocess.Popen, str, int, str]:
    """``mutexlab explore *args --no-browser`` started; (process, host, port, its first line).
    ``background``: started with SIGINT ignored, as a shell starts a job with ``&``."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mutexlab", "explore", *args, "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if background else None,
    )
    try:
        first = proc.stdout.readline()
        second = proc.stdout.readline()
        assert second.startswith("serving http://127.0.0.1:"), (first, second)
        host, port = second.split()[1][len("http://") :].rstrip("/").split(":")
    except BaseException:
        _stop(proc, signal.SIGKILL)
        raise
    return proc, host, int(port), first


def _state(host: str, port: int) -> dict:
    conn = http.client.HTTPConnection(host, port, timeout=60)
    try:
        conn.request("GET", "/api/state")
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def test_the_command_prints_its_url_serves_and_stops_on_ctrl_c():
    proc, host, port, first = _explorer("mutex", "--algorithm", "maekawa", "--nodes", "4", "--requests", "1")
    try:
        assert first.startswith("mutexlab explore: maekawa, 4 processes"), first
        state = _state(host, port)
        assert state["algorithm"] == "maekawa" and len(state["procs"]) == 4
    finally:
        out, err = _stop(proc)
    assert proc.returncode == 0, err
    assert out.strip().endswith("stopped (SIGINT)") and "Traceback" not in err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_the_command_started_in_the_background_stops_on_sigint_and_sigterm(sig):
    """A shell starts a background job with SIGINT ignored: the explorer's own handlers stop it."""
    proc, host, port, _ = _explorer("mutex", background=True)
    try:
        assert _state(host, port)["algorithm"] == "ricart-agrawala"
    finally:
        out, err = _stop(proc, sig)
    assert proc.returncode == 0 and out.strip().endswith(f"stopped ({sig.name})"), (out, err)


@pytest.mark.parametrize(
    "args,words",
    [
        (["mutex", "--scenario", "nothere.json"], "cannot read scenario nothere.json"),
        (
            ["bees", "--scenario", str(EXAMPLES / "suzuki-kasami-notes.json")],
            "is a suzuki-kasami scenario: open it with `mutexlab explore mutex --scenario",
        ),
        (["mutex", "--algorithm", "maekawa", "--nodes", "3", "-o", 'quorums={"1": [2]}'], "quorum"),
        (["elves", "--pins", "0"], "must be at least 1"),
        (["mutex", "--port", "-3"], "must be at least 0"),
        (["mutex", "--algorithm", "paxos"], "invalid choice"),
    ],
)
def test_the_command_refuses_bad_arguments_with_exit_2(args, words, cli):
    proc = cli("explore", *args, "--no-browser")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert words in proc.stderr


def test_the_command_starts_from_a_scenario_at_step_0():
    proc, host, port, first = _explorer(
        "mutex", "--scenario", str(EXAMPLES / "raymond-tree.json"), "--port", "0"
    )
    try:
        assert "raymond, 5 processes" in first and "(13 steps ahead)" in first, first
        state = _state(host, port)
        assert state["position"] == 0 and len(state["redo"]) == 13
    finally:
        _stop(proc)
    assert proc.returncode == 0


# -- the flags: the same as simulate's, declared once in commands/flags.py --------------------


def _declared(*path: str) -> dict:
    import argparse

    from mutexlab.cli import build_parser

    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001 - argparse lists no subparsers publicly
        parser = sub.choices[name]
    return {
        a.dest: (type(a), tuple(a.option_strings), getattr(a.type, "__name__", a.type), a.metavar, a.choices)
        for a in parser._actions  # noqa: SLF001 - argparse lists no actions publicly
        if a.option_strings
    }


@pytest.mark.parametrize("family", FAMILY_FLAGS)
def test_explore_takes_the_family_flags_of_simulate(family):
    simulate, explore = _declared("simulate", family), _declared("explore", family)
    for dest in FAMILY_FLAGS[family]:
        assert explore[dest] == simulate[dest], dest


def test_explore_turns_the_flags_into_the_configuration_simulate_would_use():
    from mutexlab.cli import build_parser
    from mutexlab.commands.explore import build_session

    args = build_parser().parse_args(
        ["explore", "mutex", "-a", "raymond", "-N", "4", "-M", "2", "-o", "token_holder=2"]
    )
    assert build_session(args).config == Config("raymond", 4, {"requests": 2, "token_holder": 2})
    args = build_parser().parse_args(["explore", "bees", "-P", "4", "-K", "2"])
    assert build_session(args).config == Config(
        "bees", 4, {"flowers": 2, "reeds": 3, "eggs": 5, "cocoons": 15}
    )


def test_a_client_trickling_its_headers_is_dropped_at_the_deadline(client, monkeypatch):
    """A byte every 0.2 s never trips a 1 s socket timeout; the headers' deadline (1 s in all
    here) drops the connection all the same, and the server answers everyone else meanwhile."""
    import socket
    import time

    from mutexlab.explore.server import Handler

    monkeypatch.setattr(Handler, "timeout", 1.0)
    request = b"GET /api/state HTTP/1.1\r\nHost: %s:%d\r\n" % (client.host.encode(), client.port)
    request += b"X-Slow: " + b"z" * 200 + b"\r\n\r\n"
    slow = socket.create_connection((client.host, client.port), timeout=30)
    started, dropped = time.monotonic(), None
    try:
        slow.settimeout(0.2)
        for byte in request:
            try:
                slow.sendall(bytes([byte]))
                if slow.recv(4096) == b"":  # closed by the server
                    dropped = time.monotonic() - started
                    break
            except TimeoutError:
                pass  # nothing said yet: the next byte
            except OSError:  # reset by the server
                dropped = time.monotonic() - started
                break
            assert client.state()["position"] == 0, "answered while a client trickles"
            if time.monotonic() - started > 15:
                break
    finally:
        slow.close()
    assert dropped is not None and dropped < 4, f"still connected after {time.monotonic() - started:.1f}s"


def test_a_long_run_leaves_the_server_responsive_and_stops_in_time(client, monkeypatch):
    """A run to the end walks a copy of the session outside its lock: the state answers within
    1 s meanwhile; a second walk at the same time is 503; the walk stops after WALK_SECONDS
    ("time") and the same call goes on from there."""
    import time

    from mutexlab.explore import server as server_module
    from mutexlab.explore.session import Session as Walked

    entered, release = threading.Event(), threading.Event()
    real = Walked._advance  # noqa: SLF001 - each step a walk takes

    def slow(self, step):  # each step of a walk waits until the test lets it go
        entered.set()
        assert release.wait(60)
        return real(self, step)

    monkeypatch.setattr(server_module, "WALK_SECONDS", 0.5)
    monkeypatch.setattr(Walked, "_advance", slow)
    results: list = []
    walker = threading.Thread(target=lambda: results.append(client.post("/api/run", {"seed": 1})))
    walker.start()
    try:
        assert entered.wait(60)
        asked = time.monotonic()
        assert client.state()["position"] == 0, "answered while a run goes on"
        assert time.monotonic() - asked < 1.0
        status, value, resp = client.post("/api/random", {"n": 5})
        assert status == 503 and "another random walk or run" in value["error"], value
        time.sleep(0.6)  # past the walk's time: it stops after the step under way
    finally:
        release.set()
        walker.join(60)
    status, value, _ = results[0]
    assert status == 200 and value["outcome"]["stopped"] == "time" and value["outcome"]["taken"] == 1, value
    assert client.state()["position"] == 1, "the walk's result is the session now"
    status, value, _ = client.post("/api/run", {"seed": 1})  # again: on from there, to the end
    assert status == 200 and value["outcome"]["stopped"] == "end" and value["position"] > 1, value


def test_a_walk_over_a_path_that_moved_meanwhile_changes_nothing(client, monkeypatch):
    from mutexlab.explore.session import Session as Walked

    entered, release = threading.Event(), threading.Event()
    real, copy = Walked._advance, Walked.copy  # noqa: SLF001 - each step a walk takes

    def marked(self):  # the copy a walk runs on
        twin = copy(self)
        twin.walking = True
        return twin

    def slow(self, step):
        if getattr(self, "walking", False):
            entered.set()
            assert release.wait(60)
        return real(self, step)

    monkeypatch.setattr(Walked, "copy", marked)
    monkeypatch.setattr(Walked, "_advance", slow)
    results: list = []
    walker = threading.Thread(target=lambda: results.append(client.post("/api/run", {})))
    walker.start()
    try:
        assert entered.wait(60)
        assert client.post("/api/step", {"id": "request:2"})[0] == 200  # the path moves meanwhile
    finally:
        release.set()
        walker.join(60)
    status, value, _ = results[0]
    assert status == 409 and "moved while the walk went on" in value["error"], value
    assert [h["id"] for h in client.state()["history"]] == ["request:2"]


def test_an_interrupt_while_a_connection_thread_starts_still_stops_the_server(monkeypatch):
    """Ctrl-C that lands while the server starts a connection's thread — which may already have
    answered and freed its slot — reaches the server as KeyboardInterrupt (it stops), and the slot
    is freed exactly once; an interrupt turned into "released too many times" kept it serving."""
    import socket

    server = make_server(Session(Config("ricart-agrawala", 3, {"requests": 1})), "127.0.0.1", 0)
    start = threading.Thread.start

    def started_then_interrupted(thread):
        start(thread)
        thread.join(10)  # it has answered and freed its slot by now
        raise KeyboardInterrupt

    monkeypatch.setattr(threading.Thread, "start", started_then_interrupted)
    ours, theirs = socket.socketpair()
    try:
        host = f"127.0.0.1:{server.server_address[1]}".encode()
        ours.sendall(b"GET /api/state HTTP/1.0\r\nHost: " + host + b"\r\n\r\n")
        with pytest.raises(KeyboardInterrupt):
            server.process_request(theirs, ("127.0.0.1", 1))
        assert b"200" in ours.recv(100)
        monkeypatch.undo()
        # every slot is free again, none twice: all can be taken and no more
        taken = [server.slots.acquire(blocking=False) for _ in range(300)]
        assert taken.count(True) == MAX_CONNECTIONS, taken.count(True)
    finally:
        ours.close()
        server.server_close()


def test_explore_on_a_port_it_just_left_starts_again_and_never_on_one_in_use():
    """A page used, explore stopped, ``explore --port N`` again at once: the server closed its
    connections first, so they wait in TIME_WAIT on that port for a minute. Before: "cannot listen
    on 127.0.0.1:N: Address already in use" until then."""
    import socket

    session = Session(Config("ricart-agrawala", 2, {"requests": 1}))
    server, thread = serve(session)
    port = server.server_address[1]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as page:  # the server closes first
        page.sendall(
            f"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
        )
        while page.recv(65536):
            pass
    server.shutdown()
    server.server_close()
    thread.join(10)
    again = make_server(session, "127.0.0.1", port)
    try:
        with pytest.raises(OSError):  # a port another server listens on is still refused
            make_server(session, "127.0.0.1", port)
    finally:
        again.server_close()
