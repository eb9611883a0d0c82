"""``mutexlab explore <family>``: step through a protocol in the browser.

Serves the explorer (``mutexlab.explore``) on a local port, prints its URL and opens the
browser (unless ``--no-browser``). Ctrl-C, SIGINT or SIGTERM stops it (exit 0), also when started
in the background (its own handlers: a shell leaves SIGINT ignored there). Exit 2 on bad arguments, a bad
scenario or an address that cannot be bound.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..protocols import registry
from ..setups import ConfigError
from ..spec import Flags
from ..words import settings
from .common import add_endless_argument, fail, port_number
from .flags import disagreement, resolved
from .registry import Command, family_scenarios

# The explorer (its HTTP server, sessions) is imported when the command runs: every ``mutexlab``
# command builds this parser.
if TYPE_CHECKING:
    from ..explore.session import Session


def _common(p) -> None:
    g = p.add_argument_group("explorer")
    g.add_argument(
        "--scenario",
        metavar="FILE",
        help="start from this scenario (e.g. a counterexample of `mutexlab check`): its configuration, "
        "at step 0, its steps ahead to step through (the family flags are then not used)",
    )
    g.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    g.add_argument("--port", type=port_number, default=0, help="port (default: a free one)")
    g.add_argument("--no-browser", action="store_true", help="print the URL, do not open a browser")


def _arguments(flags: Flags) -> Callable[[argparse.ArgumentParser], None]:
    """The explorer's flags, and ``--endless`` for a family with a workload of requests."""
    problem = registry.presented(flags)
    if problem is None or problem.endless is None:
        return _common

    def add(p: argparse.ArgumentParser) -> None:
        add_endless_argument(p, "a path ends only where nothing can move (starvation: run it long)")
        _common(p)

    return add


def build_session(args) -> Session:
    """The session the arguments describe. Raises ConfigError or ScenarioError."""
    from ..explore.session import Config, Session, session_from_scenario
    from ..sim.scripted import load_scenario
    from .replay import foreign_code

    if args.scenario:
        # a scenario is data: the file or module it names runs only when --algorithm names it too;
        # --algorithm is loaded first, as a scenario may name it by its SPEC's name (an export)
        given: str | None = getattr(args, "algorithm", None)
        named = load_scenario(args.scenario).algorithm
        wrong = foreign_code(named, given, args.scenario, "explore")
        if not wrong and given and (registry.is_file(given) or registry.is_module(given)):
            found = registry.solution(registry.canonical(given)).spec
            wrong = disagreement(found, named, given, args.scenario)
        if wrong:
            raise ConfigError(wrong)
        session = session_from_scenario(args.scenario)
        flags = registry.flags_of(session.config.resolved().spec)  # resolved as the scenario was played
        if flags is not args.flags:
            raise ConfigError(
                f"{args.scenario} is a {session.config.algorithm} scenario: open it with "
                f"`mutexlab explore {flags.command} --scenario {args.scenario}`"
            )
        return session
    cfg = args.scenario_config(args)
    if cfg.algorithm is None:
        raise ConfigError("name the solution: --algorithm FILE (or open a scenario: --scenario FILE)")
    solution = resolved(args, cfg, "explore")
    endless = getattr(args, "endless", False)
    return Session(
        Config(cfg.algorithm, cfg.processes, dict(cfg.options), endless=endless, solution=solution)
    )


def problem_of_scenario(path: str) -> str:
    """The problem whose ``explore`` opens the scenario file at ``path`` (``PROBLEM`` when the
    file does not say): for the hint given when the file stands where the problem goes."""
    import json
    from pathlib import Path

    try:
        found = registry.SPECS.get(json.loads(Path(path).read_text(encoding="utf-8"))["algorithm"])
    except (OSError, ValueError, KeyError, TypeError):  # a hint only: --scenario reads it for real
        found = None
    # a built-in algorithm only: a file the scenario names is not run for a hint
    return "PROBLEM" if found is None else registry.flags_of(found).command


def processes_said(session: Session) -> str:
    """How many processes the page shows, counted as its header counts its cards: the elves' P
    counts the elves, and the mayor is named beside it ("5 processes (P = 4, and mayor)")."""
    import re

    names = session.world.setup.names
    said = f"{len(names)} processes"
    if len(names) != session.config.processes:
        others = [name for _, name in sorted(names.items()) if not re.search(r"-\d+$", name)]
        said += f" (P = {session.config.processes}" + (f", and {', '.join(others)}" if others else "") + ")"
    return said


def algorithm_said(session: Session) -> str:
    """The algorithm by the name the page's header shows, and a file's path beside it as one
    would type it here (``registry.shown``: relative below the working directory, absolute
    elsewhere, never with ``..``): "k-ricart-agrawala (examples/solutions/kmutex_ricart_agrawala.py)"."""
    name, given = session.world.setup.algorithm, session.config.algorithm
    if name == given or not registry.is_file(given):
        return given
    return f"{name} ({registry.shown(given)})"


def no_display() -> bool:
    """True on a Linux or BSD machine with no graphical session (over SSH, in a container), where
    ``webbrowser`` would find nothing to open, or a console browser that takes over the terminal."""
    import os

    return (
        sys.platform not in ("darwin", "win32", "cygwin")
        and not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
    )


def run(args) -> int:
    import threading
    import webbrowser

    from ..explore.server import make_server, serve_until_stopped
    from ..sim.scripted import ScenarioError

    try:
        session = build_session(args)
    except (ConfigError, ScenarioError) as exc:
        return fail(str(exc))
    try:
        server = make_server(session, args.host, args.port)
    except OSError as exc:
        return fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    c = session.config
    ahead = len(session.redo_steps)
    print(
        f"mutexlab explore: {algorithm_said(session)}, {processes_said(session)}"
        + (f", {settings(c.options)}" if c.options else "")
        + (", endless requests" if c.endless else "")
        + (f"; scenario {args.scenario} ({ahead} steps ahead)" if args.scenario else "")
    )
    try:  # a Ctrl-C before serve_until_stopped's handlers are in stops it alike
        print(f"serving {server.url}  (Ctrl-C stops)", flush=True)
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            print(
                f"warning: listening on {args.host}, not only on this machine: anyone who reaches it can "
                "drive the explorer",
                file=sys.stderr,
            )
        if not args.no_browser:
            if no_display():
                print(
                    f"no display here, so no browser was opened: open {server.url} in a browser", flush=True
                )
            else:

                def open_browser() -> None:
                    if not webbrowser.open(server.url):
                        print(f"no browser could be opened: open {server.url} in a browser", flush=True)

                threading.Thread(target=open_browser, daemon=True).start()
        by = serve_until_stopped(server)
    except KeyboardInterrupt:
        server.server_close()
        by = "SIGINT"
    print(f"stopped ({by})", flush=True)
    return 0


COMMAND = Command(
    "explore",
    "step through a protocol in the browser, choosing every interleaving",
    """Serve a local page that shows every process, every message in flight and every enabled step as a
    button; undo, redo, jump back, random steps, run to the end; findings (capacity, invariants, deadlock)
    live; export the path as a scenario for `mutexlab replay`. Exit 0 when Ctrl-C, SIGINT or SIGTERM stops
    it; 2 on bad arguments, an unreadable or invalid scenario, or an address that cannot be bound.""",
    scenarios=family_scenarios(run, _arguments, help=lambda f: f.title),
    dest="scenario_family",
)
