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
if sys.argv[1] == "parent":  # start the service, say its pid, end (SIGKILL: nothing runs after it)
    child = subprocess.Popen([sys.executable, __file__, "child", str(os.getpid()), sys.argv[2]])
    print(child.pid, flush=True)
    time.sleep(2.0)
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
