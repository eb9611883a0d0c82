"""Shared fixtures. ``amqp_url`` finds a RabbitMQ broker for the tests marked ``broker``:

1. ``AMQP_URL`` from the environment — used as is; if it is set but unreachable, fail loudly;
2. a local broker on 127.0.0.1:5672 (guest/guest);
3. testcontainers' ``RabbitMqContainer`` (image ``rabbitmq:3-management``) when a Docker engine answers;
4. otherwise skip with the reason — except under CI (``CI`` set), where no broker is a failure.

``MUTEXLAB_TEST_BROKER=container`` forces 3: ``AMQP_URL`` and the local broker are ignored, and no
Docker engine is a failure, not a skip (``.ci/run`` runs a broker subset this way). testcontainers'
reaper (Ryuk) needs its own image from Docker Hub; unless ``TESTCONTAINERS_RYUK_DISABLED`` is set,
it is set to ``true`` here (and said so), and the fixture stops the container itself at the end.

Shared helpers for the test modules (``from conftest import …``):

* ``audited(setup, seed, **config)``: one simulated run with its trace kept, audited by
  ``verify_events``; its events line-numbered as ``verify_events`` numbers them (``numbered``);
* ``random_classic_runs(...)``: the hypothesis strategies of the classic algorithms' random-run properties;
* ``broken(name)``: a deliberately broken variant of ``tests/mutexlab_broken`` (the only place they live);
* ``RUN_SECRET`` / ``signed(key, body)``: the run secret every service a test starts holds (set in the
  environment here; ``mutexlab run`` makes its own per run) and the headers that sign a message with it;
* ``RunTap``: what the participants of a RabbitMQ run tell the monitor (joins, welcomes, statuses),
  for the broker tests to wait on instead of reading log files; ``end_run``: a broker test's cleanup;
* the ``cli`` fixture: ``cli("verify", path, cwd=…, env=…)`` runs ``mutexlab verify path`` in this
  process (``mutexlab.cli.main``) and returns what a child would (``returncode``, ``stdout``,
  ``stderr``), the process's global state put back after; ``cli.service(role, env)`` does the same for
  a service entry point (``python -m mutexlab.services ROLE`` with exactly ``env``). A test about the
  process itself (signals, the installed entry point, start-up, a memory limit, hash seeds) starts a
  real child instead.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import signal
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from types import ModuleType
from typing import NoReturn
from urllib.parse import quote, urlparse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mutexlab.audit import Verdict, numbered, verify_events
from mutexlab.bus.auth import MAC_HEADER, SECRET_ENV, Signer
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceWriter

# A test's Ctrl-C (SIGINT) reaches its child as a terminal's would. Started in the background of a
# shell without job control, pytest ignores SIGINT, and an ignored signal is inherited across exec:
# a child would drop the SIGINT the test sends and serve on. A handler is reset to the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The services the tests start read the run secret from the environment (auth.py): one per session.
os.environ.setdefault(SECRET_ENV, f"tests-{os.getpid()}-{time.time_ns()}")
RUN_SECRET = os.environ[SECRET_ENV]


def signed(key: str, body: bytes, secret: str = RUN_SECRET) -> dict:
    """The headers of a message on ``key`` signed with the run's secret, as a process of the run signs it."""
    return {MAC_HEADER: Signer(secret).mac(key, body)}


LOCAL_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"
BROKER_IMAGE = "rabbitmq:3-management"
SWITCH = "MUTEXLAB_TEST_BROKER"
# Where the session's broker came from: "AMQP_URL", "local" or "testcontainers" (with the container).
BROKER: dict = {}


def _reachable(url: str, timeout: float = 2.0) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 5672), timeout=timeout):
            return True
    except OSError:
        return False


def container_url(container) -> str:
    """The AMQP URL of a started RabbitMqContainer (host and port as Docker mapped them)."""
    params = container.get_connection_params()
    vhost = quote(container.vhost, safe="")
    return f"amqp://{quote(container.username, safe='')}:{quote(container.password, safe='')}@{params.host}:{params.port}/{vhost}"


def _docker_available() -> bool:
    try:
        import docker  # testcontainers depends on it

        docker.from_env().ping()
        return True
    except Exception:  # noqa: BLE001 - any failure means: no engine to use
        return False


def _say(config, text: str) -> None:
    """A line on the terminal now, even under -q and output capture."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(text)


def _container(config):
    """A started RabbitMqContainer (a context manager), the reaper handled."""
    if not os.environ.get("TESTCONTAINERS_RYUK_DISABLED"):
        # Before testcontainers reads its configuration: the reaper's image would be pulled from Docker Hub.
        os.environ["TESTCONTAINERS_RYUK_DISABLED"] = "true"
        _say(
            config,
            "conftest: TESTCONTAINERS_RYUK_DISABLED=true (no reaper container; "
            "the amqp_url fixture stops the broker container itself)",
        )
    try:
        from testcontainers.community.rabbitmq import RabbitMqContainer
    except ImportError:  # testcontainers before the "community" split
        from testcontainers.rabbitmq import RabbitMqContainer
    return RabbitMqContainer(BROKER_IMAGE, username="mutexlab", password="mutexlab-tests")


@dataclass
class Ran:
    """What a ``mutexlab`` command run in this process did, as ``subprocess.run`` would say it."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class WouldServe(BaseException):
    """A command run in-process would serve until stopped: a BaseException, so that no handler of
    mutexlab's (``cli.main`` makes any Exception an internal error, exit 4) takes it for its own."""


class Cli:
    """``mutexlab`` commands run in the test's process (see the module's docstring): each costs
    what the command does, not a fresh interpreter's imports (0.2–0.4 CPU-s each)."""

    def __init__(self, capsys) -> None:
        self.capsys = capsys

    def _call(self, argv: list[str], call, cwd, env: dict[str, str] | None, bare: bool) -> Ran:
        from mutexlab.explore import server

        def would_serve(running) -> str:
            running.server_close()
            raise WouldServe("explore would serve until stopped: a test of a serving explorer starts a child")

        saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
        saved_signals = {sig: signal.getsignal(sig) for sig in _SIGNALS}
        loggers = [
            logging.getLogger(),
            *(logging.getLogger(n) for n in list(logging.root.manager.loggerDict)),
        ]
        saved_logging = {lg: (list(lg.handlers), lg.level) for lg in loggers}
        serving = server.serve_until_stopped
        self.capsys.readouterr()  # what the test printed before is not the command's
        try:
            if bare:
                os.environ.clear()
            os.environ.update(env or {})
            if cwd is not None:
                os.chdir(cwd)
            sys.argv = ["mutexlab", *argv]
            server.serve_until_stopped = would_serve
            try:
                code = call()
            except SystemExit as exc:  # argparse's exit 2, --help's 0, a service's sys.exit
                code = exc.code
            out, err = self.capsys.readouterr()
        finally:
            server.serve_until_stopped = serving
            os.environ.clear()
            os.environ.update(saved_env)
            os.chdir(saved_cwd)
            sys.argv = saved_argv
            for sig, handler in saved_signals.items():
                signal.signal(sig, handler)
            for lg, (handlers, level) in saved_logging.items():
                lg.handlers[:] = handlers
                lg.setLevel(level)
        if code is None:
            code = 0
        elif not isinstance(code, int):  # sys.exit("message"): printed, exit 1
            err, code = err + f"{code}\n", 1
        return Ran(list(argv), code, out, err)

    def __call__(self, *argv: str, cwd=None, env: dict[str, str] | None = None) -> Ran:
        """``mutexlab *argv`` in ``cwd`` with ``env`` added to the environment."""
        from mutexlab.cli import main

        args = [str(a) for a in argv]
        return self._call(args, lambda: main(args), cwd, env, bare=False)

    def service(self, role: str, env: dict[str, str]) -> Ran:
        """The service ``role`` (``services.main(role)``) with exactly ``env`` as its environment
        (PATH and the run secret added, as the tests' children get them)."""
        from mutexlab.services import main

        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), SECRET_ENV: RUN_SECRET, **env}
        return self._call([role], lambda: main(role), None, env, bare=True)


@pytest.fixture
def cli(capsys) -> Cli:
    return Cli(capsys)


BROWSER_FIXTURES = {"browser", "chromium"}  # test_explore_browser's Playwright, test_report's chromium


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
    """A test that drives chromium is marked ``browser`` and ``slow``: seconds of CPU each, and a
    browser the quick subset (Python alone) does not ask for. The full run keeps every one.

    A module's ``QUICK_LEAVES_OUT`` names single cases of a sweep (``test_name[id]``) marked
    ``slow`` the same way: the costliest configurations of a parametrized test, whose every other
    case stays in the quick subset."""
    for item in items:
        if BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.slow)
        module = getattr(item, "module", None)
        left_out = getattr(module, "QUICK_LEAVES_OUT", ())
        if item.name in left_out:
            item.add_marker(pytest.mark.slow)
    for module in {getattr(item, "module", None) for item in items}:
        for name in getattr(module, "QUICK_LEAVES_OUT", ()):
            if not callable(getattr(module, name.split("[")[0], None)):
                raise pytest.UsageError(f"{module.__name__}.QUICK_LEAVES_OUT: no test {name.split('[')[0]}")


def missing(reason: str) -> NoReturn:
    """Something outside the project that a test needs is missing: under CI that is a failure
    (.ci/run installs and starts everything the tests need), elsewhere a skip saying what."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (under CI this is a failure: .ci/run provides it)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def amqp_url(request):
    mode = os.environ.get(SWITCH, "auto")
    if mode not in ("auto", "container"):
        pytest.fail(f"{SWITCH}={mode!r}: use 'container' (force testcontainers) or 'auto' (the default)")
    configured = os.environ.get("AMQP_URL")
    if configured and mode == "auto":
        if not _reachable(configured):
            pytest.fail(f"AMQP_URL is set to {configured!r} but no broker answers there")
        BROKER.update(source="AMQP_URL")
        yield configured
        return
    if mode == "auto" and _reachable(LOCAL_URL):
        BROKER.update(source="local")
        yield LOCAL_URL
        return
    if _docker_available():
        with _container(request.config) as container:
            url = container_url(container)
            if not _reachable(url):
                pytest.fail(f"the broker container started, but its port is not reachable from here: {url}")
            BROKER.update(source="testcontainers", container=container)
            _say(
                request.config,
                f"conftest: broker from testcontainers ({BROKER_IMAGE}) at "
                f"{urlparse(url).hostname}:{urlparse(url).port}",
            )
            yield url
        return
    if mode == "container":
        pytest.fail(
            f"{SWITCH}=container but no Docker engine answers (docker info), so testcontainers cannot "
            "start the broker"
        )
    reason = (
        "no RabbitMQ broker: AMQP_URL is unset, nothing listens on 127.0.0.1:5672, "
        "and no Docker engine is available for testcontainers"
    )
    missing(reason)


# -- simulated runs, audited ------------------------------------------------------------------------------
@dataclass
class Audited:
    """A simulated run: its result, its trace's events (line-numbered, ``_line``) and their verdict.
    Unpacks as ``result, verdict``."""

    result: object
    events: list[dict]

    @cached_property
    def verdict(self) -> Verdict:
        return verify_events(self.events)

    def __iter__(self) -> Iterator:
        return iter((self.result, self.verdict))


def audited(setup, seed: int = 0, path=None, **config) -> Audited:
    """Simulate ``setup`` with ``SimConfig(seed=seed, **config)``, keeping the trace (also written to
    ``path`` when given); the verdict is computed when first asked for."""
    with TraceWriter(path, keep=True) as writer:
        result = Simulation(setup, SimConfig(seed=seed, **config), writer).run()
    return Audited(result, numbered(writer.events))


def random_classic_runs(think=(0.0, 0.2, 1.0, 5.0), **more):
    """Hypothesis over random runs of a classic algorithm (40 examples): ``n`` 2–15 nodes asking
    ``requests`` 1–3 times each, a ``seed``, a ``delay`` distribution, ``think`` and ``cs`` dwell
    times, plus the strategies ``more``; the test gets each as the keyword of that name."""

    def wrap(test):
        runs = given(
            n=st.integers(2, 15),
            requests=st.integers(1, 3),
            seed=st.integers(0, 10**6),
            delay=st.sampled_from(["exp", "uniform", "fixed"]),
            think=st.sampled_from(list(think)),
            cs=st.sampled_from([0.0, 0.5, 2.0]),
            **more,
        )
        return settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])(
            runs(test)
        )

    return wrap


# -- the broken variants ----------------------------------------------------------------------------------
def broken(name: str) -> ModuleType:
    """The broken variant ``tests/mutexlab_broken/<name>.py`` (the only place broken variants live)."""
    return importlib.import_module(f"mutexlab_broken.{name}")


def end_run(procs, amqp_url: str, run_id: str, names: list[str]) -> None:
    """The end of a broker test that started the services itself: kill what still runs of ``procs``
    (processes this test started), reap them all, delete what run ``run_id`` declared."""
    from mutexlab.bus.topology import delete_run

    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    delete_run(amqp_url, run_id, names)


# -- a tap on a RabbitMQ run: what the monitor hears ------------------------------------------------------
# The delivery modes (docs/wire.md#delivery-modes): every fault and forgery test of a run runs in both.
DELIVERIES = ("persistent", "transient")


@dataclass
class RunTap:
    """A queue of its own on run ``run_id``'s exchange, bound to what the participants tell the monitor
    (docs/architecture.md, routing keys): ``join.*`` (instance and OS pid), ``control.*`` (the monitor's
    welcome: instance to name), ``status.*`` and ``audit.*`` (each participant's state). A message
    this tap got is on the broker (a join, status or audit batch: in the monitor's queue as well).

    Open it before the run starts (it declares the run's exchange, as anyone may); ``wait`` until a
    condition on what was heard holds, failing the test with what was heard when it never does."""

    url: str
    run_id: str
    os_pids: dict[str, int] = field(default_factory=dict)  # name -> OS pid of the process
    states: dict[str, list[str]] = field(default_factory=dict)  # name -> every state it reported, in order
    changes: Counter = field(default_factory=Counter)  # name -> audit batches carrying a changed state
    durable: bool = True  # False for a run with transient delivery (its queues are not durable)
    expires: float | None = None  # the run's QUEUE_EXPIRES when not the default (topology.py)

    def __enter__(self) -> RunTap:
        import pika

        from mutexlab.bus.topology import Topology

        topology = Topology(self.run_id, durable=self.durable)
        if self.expires is not None:
            topology = Topology(self.run_id, durable=self.durable, expires=self.expires)
        exchange = topology.exchange
        self._conn = pika.BlockingConnection(pika.URLParameters(self.url))
        self._channel = self._conn.channel()
        topology.declare_base(self._channel)  # the run's exchange exactly as the run declares it
        self._queue = self._channel.queue_declare("", exclusive=True, auto_delete=True).method.queue
        for key in ("join.*", "control.*", "status.*", "audit.*"):
            self._channel.queue_bind(self._queue, exchange, routing_key=key)
        self._instances: dict[str, int] = {}  # instance -> OS pid
        return self

    def __exit__(self, *exc: object) -> None:
        if self._conn.is_open:
            self._conn.close()

    def state(self, name: str) -> str | None:
        """The last state ``name`` reported."""
        return self.states[name][-1] if self.states.get(name) else None

    def _hear(self, key: str, data: dict) -> None:
        head, _, name = key.partition(".")
        if head == "join":
            self._instances[data["instance"]] = data["os_pid"]
        elif head == "control" and data.get("kind") == "welcome":
            self.os_pids[data["name"]] = self._instances[data["instance"]]
        elif head in ("status", "audit"):
            # A batch holds the events of several steps and the latest status only: every state
            # it passed through is in its ``state`` events.
            for event in data.get("events", []) if head == "audit" else []:
                if event.get("event") == "state" and self.state(name) != event.get("state"):
                    self.states.setdefault(name, []).append(event["state"])
            status = data if head == "status" else data.get("status")
            if not isinstance(status, dict):
                return
            self.changes[name] += (
                head == "audit"
            )  # a batch carries a status only when a state changed since the last one
            if self.state(name) != status["state"]:
                self.states.setdefault(name, []).append(status["state"])

    def wait(self, done: Callable[[RunTap], object], what: str, timeout: float = 120.0, stop=None):
        """Listen until ``done(self)`` is true (and return its value); fail naming ``what`` after
        ``timeout`` seconds, or as soon as ``stop()`` is true (e.g. the run already ended)."""
        deadline = time.monotonic() + timeout
        for method, _props, body in self._channel.consume(self._queue, auto_ack=True, inactivity_timeout=0.1):
            if method is not None:
                self._hear(method.routing_key, json.loads(body))
            found = done(self)
            if found:
                self._channel.cancel()
                return found
            if time.monotonic() > deadline or (stop is not None and stop()):
                self._channel.cancel()
                pytest.fail(f"{what}: not seen (states heard: {self.states}; admitted: {self.os_pids})")
        raise AssertionError("unreachable: consume() with an inactivity timeout never ends")


@pytest.fixture
def handled_not_acked():
    """``setup(bus, topology, inbox)``: the starting point of the broker-loss tests (a restart, a
    cluster node's loss). On the participant queue ``node-2``: message 1 of the link node-1 → node-2
    published (confirmed), delivered and accepted by ``inbox`` but not acked, message 2 published
    (confirmed) behind it. Returns the first delivery."""

    def setup(bus, topology, inbox):
        import json

        queue = topology.declare_participant(bus.channel, "node-2", ["REQUEST"])
        bus.publish("REQUEST.node-2", {"seq": 1})
        bus.consume(queue)
        first: list = []
        while not first:
            first = bus.poll(1.0)
        assert inbox.accept("node-1", json.loads(first[0].body)["seq"])  # handled ...
        bus.publish("REQUEST.node-2", {"seq": 2})  # ... more queued behind it, and no ack yet
        return first[0]

    return setup


@pytest.fixture(autouse=True)
def _algorithms_declared_by_this_test_only():
    """The algorithms a test's files and modules declare are the registry's process-wide state
    (``registry._declared``): forgotten after the test, so two tests may each load their own copy
    of one example (a name two files declare is refused within one process, as it should be)."""
    from mutexlab.protocols import registry

    before = dict(registry._declared)  # noqa: SLF001 - the registry's state, restored for isolation
    yield
    registry._declared.clear()  # noqa: SLF001 - as above
    registry._declared.update(before)  # noqa: SLF001 - as above


def live_commands(picked: Callable[[list[str]], bool]) -> list[str]:
    """The command lines of the live (not zombie) processes whose arguments ``picked`` takes: what a
    test left running (nothing may be left behind)."""
    found = []
    for proc in os.scandir("/proc"):
        if not proc.name.isdigit():
            continue
        try:
            with open(f"{proc.path}/cmdline", "rb") as cmdline, open(f"{proc.path}/stat") as stat:
                argv = [a.decode(errors="replace") for a in cmdline.read().split(b"\0")]
                state = stat.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and picked(argv):
            found.append(" ".join(argv))
    return found


def build_c_nodes(out, sources, variants: dict[str, tuple[str, list[str]]]) -> dict[str, str]:
    """Each variant name → the path of its C example node (``sources / file``) built with gcc and
    its own flags into ``out``; missing (a skip outside CI, a failure under CI) without gcc."""
    import shutil
    import subprocess

    if shutil.which("gcc") is None:
        missing("gcc is not installed: the C example nodes cannot be built")
    found = {}
    for name, (source, flags) in variants.items():
        target = out / name
        subprocess.run(
            ["gcc", "-O2", "-Wall", "-Werror", *flags, "-o", str(target), str(sources / source)], check=True
        )
        found[name] = str(target)
    return found


# The session's own temporary directory: every file a test, a run it starts (its kept logs), a
# private broker node or a browser profile makes under TMPDIR lands here. It is removed when the
# session passes and kept (its path printed) when it fails, so nothing is left behind in /tmp.
# Mode 1777, as /tmp's: rabbitmq-server started by root drops to the rabbitmq user, which must
# reach its node's directory inside.
SESSION_TMP_ENV = "MUTEXLAB_TEST_TMPDIR"


def pytest_configure(config):
    if os.environ.get(SESSION_TMP_ENV) == os.environ.get("TMPDIR") and os.environ.get(SESSION_TMP_ENV):
        return  # an xdist worker: its controller's directory is already the TMPDIR
    import tempfile

    path = tempfile.mkdtemp(prefix="mxt-")
    os.chmod(path, 0o1777)
    config.stash[_SESSION_TMP] = (path, os.environ.get("TMPDIR"))
    os.environ["TMPDIR"] = os.environ[SESSION_TMP_ENV] = path
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again


def pytest_unconfigure(config):
    held = config.stash.get(_SESSION_TMP, None)
    if held is None:
        return
    import shutil
    import tempfile

    path, before = held
    if before is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before
    os.environ.pop(SESSION_TMP_ENV, None)
    tempfile.tempdir = None
    if config.stash.get(_SESSION_FAILED, False):
        sys.stderr.write(f"\nthe session's temporary files are kept in {path}\n")
    else:
        shutil.rmtree(path, ignore_errors=True)


def pytest_sessionfinish(session, exitstatus):
    session.config.stash[_SESSION_FAILED] = exitstatus not in (0, 5)  # 5: no test collected


_SESSION_TMP = pytest.StashKey[tuple]()
_SESSION_FAILED = pytest.StashKey[bool]()
