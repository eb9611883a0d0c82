"""What ``mutexlab run`` overlaps to start and end sooner: the broker's checks with the services'
imports (transport/preflight.py), the monitor's audit with the deletion of the run's queues
(``outcome.deciding``). Each overlap keeps what came before it: the same answers in the same
order, the same exceptions, and no thread left behind (the services are forked from a process
with one thread)."""

from __future__ import annotations

import threading

import pytest

from mutexlab.trace import TraceError
from mutexlab.transport import outcome, preflight
from mutexlab.transport.supervisor import make_plan


@pytest.fixture
def plan(tmp_path):
    return make_plan("ricart-agrawala", 3, {}, amqp_url="amqp://127.0.0.1:1/%2F", logs=str(tmp_path))


def test_the_checks_run_together_beside_the_imports_and_are_joined(plan, monkeypatch):
    both = threading.Barrier(2, timeout=10)  # passed only if the two checks run at the same time
    seen: dict[str, threading.Thread] = {}

    def refusal(url, connections, given):
        seen["refusal"] = threading.current_thread()
        both.wait()
        return f"no room for {connections}"

    def broker_problem(url):
        seen["broker"] = threading.current_thread()
        both.wait()
        return "unreachable"

    monkeypatch.setattr(preflight.headroom, "refusal", refusal)
    monkeypatch.setattr(preflight, "broker_problem", broker_problem)
    monkeypatch.setattr(preflight, "can_fork", lambda: True)
    monkeypatch.setattr(
        preflight, "preload", lambda solution: seen.setdefault("preload", threading.current_thread())
    )
    before = threading.active_count()
    assert preflight.check(plan, None) == (
        "no room for 5",
        "unreachable",
    )  # 3 nodes, the monitor, the command
    assert seen["preload"] is threading.main_thread()
    assert seen["refusal"] is not threading.main_thread() and seen["broker"] is not threading.main_thread()
    assert threading.active_count() == before, "a thread outlived the checks: no fork would be safe"


def test_a_bad_management_url_is_refused_before_anything_is_asked(plan, monkeypatch):
    monkeypatch.setattr(preflight, "broker_problem", lambda url: pytest.fail("the broker was asked"))
    monkeypatch.setattr(preflight, "preload", lambda solution: pytest.fail("imports started"))
    with pytest.raises(ValueError, match="http://HOST"):
        preflight.check(plan, "ftp://127.0.0.1:15672")


def test_a_check_that_raises_raises_in_the_caller(plan, monkeypatch):
    def broken(url):
        raise RuntimeError("the check itself failed")

    monkeypatch.setattr(preflight.headroom, "refusal", lambda *a: None)
    monkeypatch.setattr(preflight, "broker_problem", broken)
    monkeypatch.setattr(preflight, "preload", lambda solution: None)
    with pytest.raises(RuntimeError, match="the check itself failed"):
        preflight.check(plan, None)


def test_the_audit_on_its_thread_gives_decides_code_or_raises_its_error(monkeypatch):
    result = outcome.Outcome("run-x", "ricart-agrawala", 3, complete=True)
    audited = []

    def decide(into, events):
        audited.append(threading.current_thread())
        into.verdict = "judged"
        return 1

    monkeypatch.setattr(outcome, "decide", decide)
    assert outcome.deciding(result, [])() == 1 and result.verdict == "judged"
    assert audited[0] is not threading.main_thread()

    def unreadable(into, events):
        raise TraceError("no header")

    monkeypatch.setattr(outcome, "decide", unreadable)
    wait = outcome.deciding(result, [])
    with pytest.raises(TraceError, match="no header"):
        wait()


def test_ctrl_c_during_the_imports_does_not_wait_for_the_broker_checks(plan, monkeypatch):
    released = threading.Event()  # the broker's checks hang until the test ends

    def hanging(*args):
        released.wait(30)

    def interrupted(solution):
        raise KeyboardInterrupt

    monkeypatch.setattr(preflight.headroom, "refusal", hanging)
    monkeypatch.setattr(preflight, "broker_problem", hanging)
    monkeypatch.setattr(preflight, "can_fork", lambda: True)
    monkeypatch.setattr(preflight, "preload", interrupted)
    done = threading.Event()
    raised: list[BaseException] = []

    def run():
        try:
            preflight.check(plan, None)
        except BaseException as exc:  # noqa: BLE001 - the interrupt is what is awaited
            raised.append(exc)
        done.set()

    threading.Thread(target=run, daemon=True).start()
    try:
        assert done.wait(5), "Ctrl-C waited for the broker's checks"
        assert len(raised) == 1 and isinstance(raised[0], KeyboardInterrupt)
    finally:
        released.set()
