"""The explorer's web server: the page, its JSON API, nothing else (standard library only).

``http.server`` is enough here and keeps the tool dependency-free: one local user, a handful of
small JSON requests, no streaming. Its known weakness — it is "not for production", mostly
because ``SimpleHTTPRequestHandler`` maps URLs onto the file system — does not apply: this
handler maps nothing onto the file system. It answers a fixed table of routes (the page's
four files, read from the packages — the DOM helper is the report's —, the diagram, the API and
its OpenAPI description (openapi.py), the bundled example scenarios by name); every other path is 404, a known path with the wrong
method 405.

Safety, besides binding to 127.0.0.1 unless told otherwise (the command's ``--host``):
* the ``Host`` header must name the address the server was reached on (a DNS-rebinding page
  cannot drive it: 403);
* every POST must say ``Content-Type: application/json`` (a form on another site cannot send
  that without a CORS preflight, which this server never grants: 415), and its body is at most
  ``MAX_BODY`` bytes (413), JSON nested at most ``limits.MAX_DEPTH`` deep with numbers Python holds
  (400), and arrives within ``READ_TIMEOUT`` seconds in all (408: a slow or short body frees its
  thread); the request line and headers too, or the connection is dropped (``Deadline``: a
  client sending its headers a byte at a time holds a thread that long at most);
* at most ``MAX_CONNECTIONS`` connections are served at once; one more waits (in the listen
  backlog beyond it) up to ``READ_TIMEOUT`` seconds for a slot, then is closed;
* a walk (``POST /api/random``, ``POST /api/run``) runs on a copy of the session outside its
  lock, one at a time (503 while another walks), and stops after ``WALK_SECONDS`` (``stopped``:
  "time"; the same call again goes on): every other request is answered meanwhile, and its
  result is swapped in only if the path did not move meanwhile (409 otherwise);
* a scenario (``POST /api/scenario``) names a known algorithm or the one the server was started
  with, never a module or file to load (its code would run; 422), is checked within the scenario
  bounds (sim/scripted.py: processes, a kept trace of bounded size; 422) and is played outside the
  session's lock, one at a time (503 while another loads), so every other request is answered
  meanwhile;
* the listen backlog holds ``BACKLOG`` connections (a burst of concurrent requests is queued, not
  reset);
* answers carry ``Cache-Control: no-store``, ``X-Content-Type-Options: nosniff`` and a
  Content-Security-Policy that lets the page load only its own files.

One lock serialises the session: requests are handled on threads, the session is not shared;
nothing long runs under it (a walk or a scenario works on a session of its own).
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .. import limits
from ..protocols import registry
from ..report import build_report
from ..sim.hung import watching
from ..sim.scripted import ScenarioError
from ..trace import TraceError
from .connections import Bounded, Deadline, JsonErrors
from .openapi import document
from .session import ExploreError, Session, session_from_scenario

API_DOCUMENT = document()  # the API's OpenAPI description (openapi.py), GET /api/openapi.json
MAX_BODY = 5 * 1024 * 1024
READ_TIMEOUT = 10.0  # seconds a request (its line, headers, body) may take to arrive
BACKLOG = 128
MAX_CONNECTIONS = 256  # served at once (a thread each); more wait for a slot
WALK_SECONDS = 10.0  # a random walk or a run to the end stops after this long ("time")
PAGE = resources.files(__package__).joinpath("static")
STATIC = {
    "/": (PAGE / "index.html", "text/html; charset=utf-8"),
    "/explore.js": (PAGE / "explore.js", "text/javascript; charset=utf-8"),
    "/explore.css": (PAGE / "explore.css", "text/css; charset=utf-8"),
    # the DOM helper the report's page inlines: one copy for both pages
    "/dom.js": (resources.files("mutexlab.report") / "dom.js", "text/javascript; charset=utf-8"),
}
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "frame-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'"
)
# The diagram is the report's self-contained page: inline script and style, nothing fetched.
DIAGRAM_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
# The report page with what the explorer shows itself (verdict, stall) left out: the
# explorer judges a path in the middle of a run, where "request left waiting" is no fault.
DIAGRAM_STYLE = (
    "<style>h1, #summary, #verdict, #stall, h2:has(+ #controls), h2:has(+ #stats), #stats "
    "{ display: none !important; } body { margin: 0; padding: 4px 8px; }</style>"
)


def examples_dir() -> Path | None:
    """The notes' worked examples (``examples/scenarios/`` of the source tree), if present."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "examples" / "scenarios"
        if candidate.is_dir():
            return candidate
    return None


def list_examples(folder: Path | None) -> dict[str, Path]:
    if folder is None:
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.json"))}


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


class ExplorerServer(Bounded):
    daemon_threads = True
    # A port just left (its connections in TIME_WAIT, a minute) is taken again by the next
    # `explore --port N`; POSIX still refuses a port another server listens on (Windows would not).
    allow_reuse_address = os.name != "nt"
    request_queue_size = BACKLOG

    def __init__(self, address: tuple[str, int], session: Session, examples: Path | None = None) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, Handler, MAX_CONNECTIONS)
        self.session = session
        self.lock = threading.Lock()
        self.loading = threading.Lock()  # one scenario played at a time (outside ``lock``)
        self.walking = threading.Lock()  # one walk at a time (outside ``lock``)
        self.moves = 0  # how many times the session moved (under ``lock``): a walk's result is
        # swapped in only when nothing moved while it ran
        self.examples = list_examples(examples if examples is not None else examples_dir())
        self.started = session.config.algorithm  # given on the command line: it may be a file

    def may_load(self, algorithm: str) -> bool:
        """Whether a posted scenario may name ``algorithm``: a registered one, one this process
        has loaded already, or the one the server was started with — never a module or file
        named by a request (loading it would run its code)."""
        if not (registry.is_file(algorithm) or registry.is_module(algorithm)):
            return True  # a plain name: registered, or refused as unknown by the scenario's check
        return algorithm == self.started or registry.lookup(algorithm) is not None

    @property
    def bound(self) -> tuple[str, int]:
        """The (host, port) the server listens on."""
        host, port = self.server_address[:2]
        if not isinstance(host, str):  # an AF_INET or AF_INET6 address: its host is text
            raise TypeError(f"unexpected server address {self.server_address!r}")
        return host, port

    @property
    def url(self) -> str:
        host, port = self.bound
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def allowed_hosts(self) -> set[str]:
        host, port = self.bound
        names = {host, f"[{host}]"}
        if host in ("127.0.0.1", "::1", "localhost"):
            names |= {"localhost", "127.0.0.1", "[::1]"}
        if host in ("0.0.0.0", "::"):
            return set()  # bound to every interface on purpose: any Host is accepted
        return {f"{n}:{port}" for n in names}


class Handler(JsonErrors):
    server: ExplorerServer
    server_version = "mutexlab-explore"
    # The connection's socket timeout, and the time the request line and headers, then the body,
    # may each take in all: a stalled or trickling client frees its thread.
    timeout = READ_TIMEOUT

    def version_string(self) -> str:
        return self.server_version

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # read through the deadline instead
        self.reader = Deadline(self.connection, self.timeout)
        self.rfile = io.BufferedReader(self.reader)

    def handle_one_request(self) -> None:
        """The request line and headers within ``timeout`` seconds in all (else the connection is
        closed: ``BaseHTTPRequestHandler`` takes the TimeoutError so); the handler runs without."""
        self.reader.deadline = time.monotonic() + self.timeout
        super().handle_one_request()

    # -- routing ---------------------------------------------------------------------------
    def _routes(self) -> dict[str, dict[str, Callable[[], tuple[int, Any]]]]:
        return {
            "/api/state": {"GET": self.api_state},
            "/api/step": {"POST": self.api_step},
            "/api/undo": {"POST": lambda: self.move(lambda s: s.undo())},
            "/api/redo": {"POST": lambda: self.move(lambda s: s.redo())},
            "/api/reset": {"POST": lambda: self.move(lambda s: s.reset())},
            "/api/jump": {"POST": self.api_jump},
            "/api/random": {"POST": self.api_random},
            "/api/run": {"POST": self.api_run},
            "/api/scenario": {"GET": self.api_scenario_get, "POST": self.api_scenario_post},
            "/api/examples": {"GET": self.api_examples},
            "/api/openapi.json": {"GET": lambda: (200, API_DOCUMENT)},
            "/diagram": {"GET": self.diagram},
        }

    def _dispatch(self) -> None:
        """Answer ``self.command`` (the request's method) on the request's path."""
        method = self.command
        self.reader.deadline = None  # the headers are in: what follows has its own bounds
        try:
            self._check_host()
            path = urlsplit(self.path).path
            if path in STATIC:
                if method not in ("GET", "HEAD"):
                    raise ApiError(405, f"{method} is not allowed on {path}; use GET", {"Allow": "GET, HEAD"})
                self._static(path, head=method == "HEAD")
                return
            handlers: dict[str, Callable[[], tuple[int, Any]]] | None
            if path.startswith("/api/examples/"):
                handlers = {"GET": lambda: self.api_example(path[len("/api/examples/") :])}
            else:
                handlers = self._routes().get(path)
            if handlers is None:
                raise ApiError(404, f"not found: {path}")
            if method not in handlers:
                allowed = ", ".join(sorted(handlers))
                raise ApiError(405, f"{method} is not allowed on {path}; use {allowed}", {"Allow": allowed})
            if method == "POST":
                self._read_body()
            status, payload = handlers[method]()
            if isinstance(payload, str):
                self._send(status, payload.encode("utf-8"), "text/html; charset=utf-8", DIAGRAM_CSP)
            else:
                self._json(status, payload)
        except ApiError as exc:
            self._json(exc.status, {"error": str(exc), "status": exc.status}, exc.headers)
        except ExploreError as exc:
            self._json(exc.status, {"error": str(exc), "status": exc.status})
        except Exception as exc:  # a bug: said, not a dropped connection
            self._json(500, {"error": f"internal error: {type(exc).__name__}: {exc}", "status": 500})

    # BaseHTTPRequestHandler calls do_<METHOD>; every method goes to the one dispatcher, which
    # answers 405 (with Allow) where the path does not take it, 404 where there is no such path.
    do_GET = do_POST = do_HEAD = _dispatch

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):  # any other method (PUT, TRACE, QUERY ...): the dispatcher too
            return self._dispatch
        raise AttributeError(name)

    # -- plumbing --------------------------------------------------------------------------
    def _check_host(self) -> None:
        allowed = self.server.allowed_hosts()
        host = self.headers.get("Host", "")
        if allowed and host not in allowed:
            raise ApiError(
                403,
                f"unexpected Host header {host!r}: this server answers only to " + ", ".join(sorted(allowed)),
            )

    def _read_body(self) -> None:
        kind = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise ApiError(415, "POST bodies must be JSON: send Content-Type: application/json")
        try:
            length = int(self.headers.get("Content-Length", "0") or 0)
        except ValueError:
            raise ApiError(400, "Content-Length is not a number") from None
        if length > MAX_BODY:
            raise ApiError(413, f"the body is {length} bytes; at most {MAX_BODY} are accepted")
        self.reader.deadline = time.monotonic() + self.timeout  # the whole body, not each read
        try:
            raw = self.rfile.read(length) if length > 0 else b""
        except TimeoutError:
            self.close_connection = True
            raise ApiError(408, f"the body did not arrive within {self.timeout:g}s") from None
        finally:
            self.reader.deadline = None
        if len(raw) < length:
            self.close_connection = True
            raise ApiError(400, f"the body ended after {len(raw)} of its {length} bytes (Content-Length)")
        if not raw.strip():
            self.body = {}
            return
        try:
            self.body = limits.loads(raw.decode("utf-8"))
        except limits.InputError as exc:
            raise ApiError(400, f"the body is not JSON this server takes: {exc}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ApiError(400, f"the body is not JSON: {exc}") from None
        if not isinstance(self.body, dict):
            raise ApiError(400, f"the body must be a JSON object, got {type(self.body).__name__}")

    def _send(
        self,
        status: int,
        data: bytes,
        kind: str,
        csp: str = PAGE_CSP,
        headers: dict | None = None,
        head: bool = False,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", csp)
        self.send_header("Referrer-Policy", "no-referrer")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def _json(self, status: int, payload: Any, headers: dict | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
        self._send(
            status, data, "application/json; charset=utf-8", headers=headers, head=self.command == "HEAD"
        )

    def _static(self, path: str, head: bool) -> None:
        file, kind = STATIC[path]
        data = file.read_bytes()
        self._send(200, data, kind, head=head)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal shows the URL only
        pass

    # -- the API ---------------------------------------------------------------------------
    def _field(self, name: str, default: Any = None, required: bool = False) -> Any:
        if required and name not in self.body:
            raise ApiError(400, f"the body must hold {name!r}")
        value = self.body.get(name, default)
        if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
            return int(value)  # 18.0 is the whole number 18 in JSON (and in the API's schema)
        if isinstance(value, float) and value.is_integer():  # 1e18: whole, but perhaps not as written
            raise ApiError(
                400,
                f"{name!r} is {value!r}, a whole number written with an exponent or a fraction past 2^53, "
                "where such a number may have been rounded: write it in digits",
            )
        return value

    def api_state(self) -> tuple[int, Any]:
        with self.server.lock:
            return 200, self.server.session.state()

    def move(self, action: Callable[[Session], Any], result: Any = None) -> tuple[int, Any]:
        with self.server.lock:
            self.server.moves += 1  # (even a refused move may have re-derived the world)
            with watching(self.server.session.world.run.setup):
                outcome = action(self.server.session)
            state = self.server.session.state()
        if isinstance(outcome, dict):
            state["outcome"] = outcome
        return 200, state

    def api_step(self) -> tuple[int, Any]:
        sid = self._field("id", required=True)
        return self.move(lambda s: {"taken": s.step(sid)})

    def api_jump(self) -> tuple[int, Any]:
        to = self._field("to", required=True)
        return self.move(lambda s: s.jump(to))

    def api_random(self) -> tuple[int, Any]:
        n, seed = self._field("n", 10), self._field("seed", 0)
        return self.walk(lambda s, deadline: s.random(n, seed, deadline=deadline))

    def api_run(self) -> tuple[int, Any]:
        seed = self._field("seed", 0)
        return self.walk(lambda s, deadline: s.run_to_end(seed, deadline=deadline))

    def walk(self, action: Callable[[Session, float], dict]) -> tuple[int, Any]:
        """``action`` on a copy of the session, outside its lock and within ``WALK_SECONDS``; the
        copy becomes the session unless the session moved meanwhile (409: nothing changes)."""
        if not self.server.walking.acquire(blocking=False):
            raise ApiError(503, "another random walk or run is going on; try again", {"Retry-After": "1"})
        try:
            with self.server.lock:
                session, moves = self.server.session, self.server.moves
            walker = session.copy()  # re-derived here, outside the lock
            with watching(walker.world.run.setup):
                outcome = action(walker, time.monotonic() + WALK_SECONDS)
        finally:
            self.server.walking.release()
        with self.server.lock:
            if self.server.moves != moves or self.server.session is not session:
                raise ApiError(
                    409, "the path moved while the walk went on (another request): nothing changed"
                )
            self.server.session = walker
            self.server.moves += 1
            state = walker.state()
        state["outcome"] = outcome
        return 200, state

    def api_scenario_get(self) -> tuple[int, Any]:
        with self.server.lock:
            return 200, self.server.session.scenario()

    def api_scenario_post(self) -> tuple[int, Any]:
        """A new session from the scenario, played outside the session's lock (the current session
        answers meanwhile), then swapped in: ``Session.load``'s semantics."""
        algorithm = self.body.get("algorithm")
        if isinstance(algorithm, str) and not self.server.may_load(algorithm):
            raise ApiError(
                422,
                f"the explorer does not load the algorithm {algorithm!r} from a request: it takes the "
                "algorithms it knows and the one it was started with (start it with --algorithm "
                "to explore a module or a file)",
            )
        if not self.server.loading.acquire(blocking=False):
            raise ApiError(503, "another scenario is loading; try again", {"Retry-After": "1"})
        try:
            fresh = session_from_scenario(self.body)
        except ScenarioError as exc:
            raise ExploreError(str(exc), 422) from None
        finally:
            self.server.loading.release()
        with self.server.lock:
            self.server.session = fresh
            self.server.moves += 1
            return 200, fresh.state()

    def api_examples(self) -> tuple[int, Any]:
        out = []
        for name, path in self.server.examples.items():
            try:
                data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=limits.unique_keys)
                out.append(
                    {
                        "name": name,
                        "algorithm": data.get("algorithm"),
                        "processes": data.get("processes"),
                        "steps": len(data.get("steps", [])),
                    }
                )
            except (OSError, ValueError, AttributeError):
                out.append({"name": name, "error": "cannot be read"})
        return 200, out

    def api_example(self, name: str) -> tuple[int, Any]:
        path = self.server.examples.get(name)  # names only from the listing: no path is built from input
        if path is None:
            raise ApiError(404, f"no example scenario named {name!r}")
        try:
            return 200, json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=limits.unique_keys)
        except (OSError, ValueError) as exc:
            raise ApiError(500, f"example {name!r} cannot be read: {exc}") from None

    def diagram(self) -> tuple[int, Any]:
        with self.server.lock:
            events = list(self.server.session.world.events)
            title = f"{self.server.session.config.algorithm} — step {len(self.server.session.world.steps)}"
        try:
            page = build_report(events, title=title)
        except TraceError as exc:
            raise ApiError(500, f"the diagram cannot be drawn: {exc}") from None
        return 200, page.replace("</head>", DIAGRAM_STYLE + "\n</head>", 1)


def serve_until_stopped(server: ExplorerServer) -> str:
    """Serve until SIGINT or SIGTERM (or Ctrl-C), then close; the signal's name. The handlers are
    installed here (main thread only), so a server started in the background — where the shell
    leaves SIGINT ignored — still stops on either; the previous handlers come back after."""
    stopped = {"by": "SIGINT"}

    def stop(signum: int, frame: object) -> None:
        stopped["by"] = signal.Signals(signum).name
        raise KeyboardInterrupt

    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.server_close()
    return stopped["by"]


def make_server(
    session: Session, host: str = "127.0.0.1", port: int = 0, examples: Path | None = None
) -> ExplorerServer:
    """Bind (``port`` 0: a free port) and return the server; ``serve_forever()`` runs it."""
    return ExplorerServer((host, port), session, examples)
