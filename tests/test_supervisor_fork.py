"""``mutexlab run`` forks its services (transport/supervisor.py, ``Forked``): each child gets the
service's environment, its own standard streams and logging, and its exit code reaches the parent;
where forking is unsafe (several threads) or refused (``MUTEXLAB_SPAWN=exec``) the supervisor
starts fresh interpreters instead."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time

import pytest

from mutexlab.transport import supervisor
from mutexlab.transport.supervisor import Forked, can_fork


def _fake_main(role: str) -> int:
    print(f"stdout of {role}: RUN_ID={os.environ.get('RUN_ID')} PARENT_ONLY={os.environ.get('PARENT_ONLY')}")
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(message)s")
    logging.getLogger("fake").info("a log line of %s", role)
    return 7


def test_a_forked_service_gets_its_environment_streams_logging_and_exit_code(tmp_path, monkeypatch):
    import mutexlab.transport.service

    monkeypatch.setattr(mutexlab.transport.service, "serve", _fake_main)
    monkeypatch.setenv("PARENT_ONLY", "leaks")
    parent_handler = logging.StreamHandler(open(tmp_path / "parent.log", "w"))  # noqa: SIM115 - the handler's stream for the whole test
    logging.getLogger().addHandler(parent_handler)  # the parent's logging must not be the child's
    try:
        out, err = open(tmp_path / "out", "w"), open(tmp_path / "err", "w")  # noqa: SIM115 - the children's output files for the whole test
        child = Forked("node", {"RUN_ID": "r-1"}, out, err)
        assert child.pid != os.getpid()
        assert child.wait(timeout=30) == 7 and child.returncode == 7
        out.close()
        err.close()
    finally:
        logging.getLogger().removeHandler(parent_handler)
        parent_handler.close()
    assert (tmp_path / "out").read_text() == "stdout of node: RUN_ID=r-1 PARENT_ONLY=None\n"
    assert (tmp_path / "err").read_text() == "INFO a log line of node\n"
    assert (tmp_path / "parent.log").read_text() == ""
    assert os.environ["PARENT_ONLY"] == "leaks", "the parent's environment is untouched"


def test_a_forked_service_that_does_not_end_times_out_and_can_be_killed(tmp_path, monkeypatch):
    import time

    import mutexlab.transport.service

    monkeypatch.setattr(mutexlab.transport.service, "serve", lambda role: time.sleep(60) or 0)
    with open(tmp_path / "out", "w") as out:
        child = Forked("node", {}, out, out)
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=0.2)
        child.kill()
        assert child.wait(timeout=30) == -9


def test_fork_only_with_one_thread_and_unless_refused(monkeypatch):
    monkeypatch.delenv("MUTEXLAB_SPAWN", raising=False)
    assert can_fork() is (threading.active_count() == 1)
    monkeypatch.setenv("MUTEXLAB_SPAWN", "exec")
    assert not can_fork()
    monkeypatch.delenv("MUTEXLAB_SPAWN")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not can_fork(), "a second thread makes forking unsafe"
    finally:
        stop.set()
        other.join()


def test_the_supervisor_still_knows_the_fresh_interpreter_command():
    command = supervisor.service_command("node")
    assert command[0] == sys.executable and command[-1].endswith(os.path.join("node", "main.py"))


ORPHAN = """
import os, subprocess, sys, time
if sys.argv[1] == "parent":  # start the service, wait until it watches, end by SIGKILL
    child = subprocess.Popen(
        [sys.executable, __file__, "child", str(os.getpid()), sys.argv[2]], stdout=subprocess.PIPE, text=True
    )
    said = child.stdout.readline().strip()  # however long its start takes on a loaded machine
    print(child.pid, said, flush=True)
    os.kill(os.getpid(), 9)
else:  # the service: it must end once its parent is gone
    from mutexlab.transport.spawn import die_with_parent
    if sys.argv[3] == "fallback":
        sys.platform = "other"  # no PR_SET_PDEATHSIG: the watch of the parent's pid alone
    die_with_parent(int(sys.argv[2]))
    print("watching", flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize("way", ["pdeathsig", "fallback"])
def test_a_service_dies_with_its_parent_even_by_sigkill(way, tmp_path):
    script = tmp_path / "orphan.py"
    script.write_text(ORPHAN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    parent = subprocess.run(
        [sys.executable, str(script), "parent", way], env=env, capture_output=True, text=True, timeout=60
    )
    assert parent.returncode == -9, parent.stderr
    child, said = parent.stdout.split()[:2]
    child = int(child)
    assert said == "watching", parent.stderr  # it was alive and watching when its parent died
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return  # gone: it died with its parent
        time.sleep(0.1)
    os.kill(child, 9)
    pytest.fail(f"the service outlived its parent by 5 s ({way})")


@pytest.mark.parametrize(
    "code, summary, said, exit_code",
    [
        (-9, None, "the monitor died (signal 9, SIGKILL)", 3),
        (143, None, "the monitor died (signal 15, SIGTERM)", 3),
        (130, None, "the monitor died (signal 2, SIGINT)", 3),
        (-40, None, "the monitor died (signal 40)", 3),
        (1, None, "the monitor ended (exit 1) without writing its verdict", 4),
        (0, None, "the monitor ended (exit 0) without writing its verdict", 4),
        (7, {"exit_code": 7}, "the monitor failed (exit 7)", 4),
    ],
)
def test_a_monitor_without_a_verdict_is_named_never_passed_on(code, summary, said, exit_code):
    assert supervisor.monitor_failure(code, summary) == (said, exit_code)


@pytest.mark.parametrize("code", [0, 1, 2, 3])
def test_the_monitors_own_codes_are_its_verdict(code):
    assert supervisor.monitor_failure(code, {"exit_code": code}) is None


def test_logs_are_renamed_by_the_pid_the_monitor_names(tmp_path):
    """Start order is not join order: the second process started may become node-3."""

    class Proc:
        def __init__(self, pid: int) -> None:
            self.pid = pid

    procs = [(f"node.{pid}", Proc(pid)) for pid in (101, 102, 103, 104)]
    for label, proc in procs:
        (tmp_path / f"{label}.log").write_text(f"log of {proc.pid}")
    os_pids = {"node-1": 103, "node-2": 101, "node-3": 102, "../evil": 104}
    named = supervisor.name_logs(tmp_path, procs, os_pids)  # type: ignore[arg-type]
    assert named == {"node.103": "node-1", "node.101": "node-2", "node.102": "node-3"}
    for name, pid in list(os_pids.items())[:3]:
        assert (tmp_path / f"{name}.log").read_text() == f"log of {pid}"
    assert (tmp_path / "node.104.log").exists(), "a name that is no member's stays by pid"
