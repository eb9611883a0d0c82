"""Bad configuration: every CLI command and every service refuses impossible or
malformed settings with a clear message and a non-zero exit (2), BEFORE touching the broker.

In-process commands run with ``pika.BlockingConnection`` replaced by a tripwire, so any
attempt to reach a broker fails the test; ``run`` is also given an unreachable AMQP URL, which
would otherwise give exit 3 ("cannot use RabbitMQ"), not 2. The services run in this process
too (the ``cli`` fixture), each with only the environment it is given and an unreachable
``AMQP_URL``: reaching for the broker would exit 3 after a wait, not 2.
"""

from __future__ import annotations

import json

import pika
import pytest

from mutexlab.bus.auth import SECRET_ENV
from mutexlab.cli import main

NOWHERE = "amqp://127.0.0.1:1/%2F"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "bad.json").write_text("{nope")
    (tmp_path / "scenario.json").write_text(json.dumps({"ops": [{"op": "fly"}]}))
    (tmp_path / "headless.jsonl").write_text(json.dumps({"event": "send"}) + "\n")
    (tmp_path / "options.json").write_text("[1, 2]")
    return tmp_path


# argv (with {d} = a directory holding the bad files above), words the error must contain.
CLI_CASES = [
    # simulate bees
    ("simulate bees -P 0", "--bees/-P: must be at least 1"),
    ("simulate bees --flowers 0", "--flowers/-K: must be at least 1"),
    ("simulate bees --reeds 0", "--reeds/-T: must be at least 1"),
    ("simulate bees --eggs 0", "--eggs: must be at least 1"),
    ("simulate bees --cocoons 7", "must be a multiple of eggs per bee"),
    ("simulate bees --seed -1", "--seed: must be at least 0"),
    ("simulate bees --trace /no/such/dir/t.jsonl", "cannot write trace"),
    # simulate elves
    ("simulate elves --elves 0", "--elves/-N: must be at least 1"),
    ("simulate elves --rounds 0", "--rounds: must be at least 1"),
    ("simulate elves --hamsters 5-1", "min 5 is above max 1"),
    # simulate mutex
    ("simulate mutex -N 0 -a lamport", "--nodes/-N: must be at least 1"),
    ("simulate mutex -N 3 -a nope", "invalid choice: 'nope'"),
    ("simulate mutex -N 3 -a ricart-agrawala -M 0", "--requests/-M/-r: must be at least 1"),
    ("simulate mutex -N 3 -a ricart-agrawala -o colour=3", "does not take option(s) colour"),
    ("simulate mutex -N 4 -a maekawa -o quorums=7", "option 'quorums'"),
    ("simulate mutex -N 3 -a ricart-agrawala --delay weird", "invalid choice: 'weird'"),
    ("simulate mutex -N 3 -a ricart-agrawala --options /no/such/o.json", "cannot read options file"),
    # compare
    ("compare -N 0", "--nodes/-N: must be at least 1"),
    ("compare -N 3 -M 0", "--requests/-M/-r: must be at least 1"),
    ("compare -N 3 --algorithms nope", "unknown algorithm(s) nope"),
    # replay, verify, report
    ("replay /no/such/scenario.json", "cannot read scenario"),
    ("replay {d}/bad.json", "scenario is not JSON"),
    ("replay {d}/scenario.json", "invalid scenario"),
    ("verify /no/such/trace.jsonl", "cannot read"),
    ("verify {d}/bad.json", "not JSON"),
    ("verify {d}/headless.jsonl", "event lacks pid"),
    ("report /no/such/trace.jsonl", "cannot read"),
    ("report {d}/bad.json", "not JSON"),
    # run: every case with an unreachable broker — the bad setting must be what is reported
    ("run bees -P 0", "--bees/-P: must be at least 1"),
    ("run bees --cocoons 7", "must be a multiple of eggs per bee"),
    ("run bees --dwell -1", "--dwell: must be ≥ 0"),
    ("run bees --report /no/such/dir/r.html", "does not exist"),
    ("run elves --elves 0", "--elves/-N: must be at least 1"),
    ("run elves --hamsters a-b", "argument --hamsters: hamsters must be MIN-MAX"),
    ("run elves --poison 2 --hamsters 5-5", "poison"),
    ("run mutex --nodes 0", "--nodes/-N: must be at least 1"),
    ("run mutex --algorithm nope", "argument --algorithm/-a: invalid choice: 'nope'"),
    ("run mutex --option colour=3", "colour"),
    ("run mutex --options {d}/options.json", "options"),
    ("run mutex --run-id a.b", "run id"),
    ("run mutex --stall-timeout 0", "--stall-timeout: must be > 0"),
    ("run mutex --join-timeout 0", "--join-timeout: must be > 0"),
    ("run mutex --dwell-kind cs", "expected KIND=SECONDS"),
    ("run mutex --trace /no/such/dir/t.jsonl", "does not exist"),
    ("run mutex --amqp-url http://broker", "must start with amqp://"),
    ("run mutex --delivery lazy", "argument --delivery: invalid choice: 'lazy'"),
]


def test_run_takes_its_delivery_from_the_environment_as_the_services_do(monkeypatch, capsys, no_broker):
    from mutexlab.cli import build_parser
    from mutexlab.commands.run import plan_from_args

    def plan(*argv: str):
        return plan_from_args(build_parser().parse_args(["run", "mutex", "--amqp-url", NOWHERE, *argv]))

    monkeypatch.delenv("DELIVERY", raising=False)
    assert plan().delivery == "persistent"
    monkeypatch.setenv("DELIVERY", "transient")
    assert plan().delivery == "transient"
    assert plan("--delivery", "persistent").delivery == "persistent", "the flag wins"
    monkeypatch.setenv("DELIVERY", "lazy")
    assert main(["run", "mutex", "--amqp-url", NOWHERE]) == 2
    assert "DELIVERY='lazy' in the environment: persistent or transient" in capsys.readouterr().err


@pytest.fixture
def no_broker(monkeypatch):
    def tripwire(*_args, **_kwargs):
        raise AssertionError("the command touched the broker before refusing its settings")

    monkeypatch.setattr(pika, "BlockingConnection", tripwire)


@pytest.mark.parametrize("argv, words", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_every_command_refuses_bad_settings_before_the_broker(argv, words, files, no_broker, capsys):
    args = argv.format(d=files).split()
    if args[0] == "run" and "--amqp-url" not in args:
        args += ["--amqp-url", NOWHERE]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert words in err, err


# role, environment (besides PATH), words the error must contain.
SERVICE_CASES = [
    ("node", {"RUN_ID": "r"}, "AMQP_URL"),
    ("node", {"AMQP_URL": NOWHERE, "RUN_ID": "r", SECRET_ENV: ""}, "no run secret: set MUTEXLAB_RUN_SECRET"),
    (
        "monitor",
        {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "lamport", SECRET_ENV: "short"},
        "at least 16",
    ),
    (
        "bee",
        {"AMQP_URL": NOWHERE, "RUN_ID": "r", SECRET_ENV: "", "MUTEXLAB_RUN_SECRET_FILE": "/proc/x/y"},
        "MUTEXLAB_RUN_SECRET_FILE: cannot read it",
    ),
    ("bee", {"AMQP_URL": NOWHERE}, "RUN_ID"),
    ("elf", {"AMQP_URL": "http://x", "RUN_ID": "r"}, "amqp://"),
    ("mayor", {"AMQP_URL": NOWHERE, "RUN_ID": "no spaces"}, "run id"),
    ("node", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "HEARTBEAT": "0"}, "HEARTBEAT"),
    ("bee", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "LINGER": "-1"}, "LINGER"),
    ("mayor", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "DWELL": "-1"}, "DWELL"),
    ("elf", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "DWELL_TIMES": '{"rest": "soon"}'}, "dwell time"),
    ("node", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "JOIN_TIMEOUT": "0"}, "JOIN_TIMEOUT"),
    ("node", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "MONITOR_TIMEOUT": "-5"}, "MONITOR_TIMEOUT"),
    ("monitor", {"AMQP_URL": NOWHERE, "RUN_ID": "r"}, "ALGORITHM"),
    ("monitor", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "nope"}, "unknown algorithm"),
    ("monitor", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "bees", "PROCESSES": "-1"}, "PROCESSES"),
    ("monitor", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "bees", "PROCESSES": "many"}, "PROCESSES"),
    ("monitor", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "bees", "OPTIONS": "[1]"}, "OPTIONS"),
    # docker-compose 1.29 once appended a stray "}" to OPTIONS: the error must show the value that arrived.
    (
        "monitor",
        {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "bees", "OPTIONS": '{"flowers": 2, "reeds": 2}}'},
        """OPTIONS: not valid JSON (Extra data: line 1 column 27 (char 26)): '{"flowers": 2, "reeds": 2}}'""",
    ),
    ("node", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "DWELL_TIMES": "cs=1"}, "DWELL_TIMES: not valid JSON"),
    ("bee", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "DELIVERY": "lazy"}, "DELIVERY"),
    (
        "node",
        {"AMQP_URL": NOWHERE, "RUN_ID": "r", "DELIVERY": "transient", "QUEUE_TYPE": "quorum"},
        "QUEUE_TYPE=quorum needs DELIVERY=persistent",
    ),
    (
        "monitor",
        {
            "AMQP_URL": NOWHERE,
            "RUN_ID": "r",
            "ALGORITHM": "bees",
            "PROCESSES": "4",
            "OPTIONS": '{"reeds": 0}',
        },
        "reeds",
    ),
    ("monitor", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "bees", "SEED": "abc"}, "SEED"),
    (
        "monitor",
        {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "bees", "STALL_TIMEOUT": "0"},
        "STALL_TIMEOUT",
    ),
    (
        "monitor",
        {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "bees", "JOIN_WINDOW": "-2"},
        "JOIN_WINDOW",
    ),
    (
        "monitor",
        {
            "AMQP_URL": NOWHERE,
            "RUN_ID": "r",
            "ALGORITHM": "ricart-agrawala",
            "PROCESSES": "3",
            "OPTIONS": '{"colour": 3}',
        },
        "colour",
    ),
]


@pytest.mark.parametrize(
    "role, env, words", SERVICE_CASES, ids=[f"{r}-{'-'.join(e)}" for r, e, _ in SERVICE_CASES]
)
def test_every_service_refuses_bad_environment_before_the_broker(role, env, words, cli):
    done = cli.service(role, env)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert words.lower() in done.stderr.lower(), done.stderr
    assert "cannot reach rabbitmq" not in done.stderr.lower()
