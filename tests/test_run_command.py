"""``mutexlab run`` and the services refuse bad settings with a clear message, before the broker."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mutexlab.cli import main

# An address nothing answers at: reaching the broker would fail differently (exit 3, after a wait).
NOWHERE = "amqp://127.0.0.1:1/%2F"


@pytest.mark.parametrize(
    "argv, words",
    [
        (["mutex", "--algorithm", "nope"], "argument --algorithm/-a: invalid choice: 'nope'"),
        (["mutex", "--option", "quorums=7", "--algorithm", "maekawa"], "quorum"),
        (["mutex", "--option", "colour=3"], "colour"),
        (["bees", "--cocoons", "7"], "multiple"),
        (["elves", "--poison", "2", "--hamsters", "5-5"], "poison"),
        (["elves", "--hamsters", "a-b"], "--hamsters"),
        (["mutex", "--run-id", "a b"], "run id"),
        (["mutex", "--trace", "/no/such/dir/t.jsonl"], "does not exist"),
        (["bees", "--report", "/no/such/dir/r.html"], "does not exist"),
        (["mutex", "--options", "/no/such/options.json"], "cannot read options file"),
    ],
)
def test_bad_settings_exit_2_before_the_broker(argv, words, capsys):
    argv = ["run", *argv]
    if "--amqp-url" not in argv:
        argv += ["--amqp-url", NOWHERE]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own refusals (a flag's type)
        code = exc.code
    assert code == 2
    assert words in capsys.readouterr().err


def test_bad_url_and_bad_numbers(capsys):
    assert main(["run", "mutex", "--amqp-url", "http://x"]) == 2
    assert "amqp://" in capsys.readouterr().err
    for argv in (
        ["run", "mutex", "--nodes", "0"],
        ["run", "bees", "--dwell", "-1"],
        ["run", "mutex", "--dwell-kind", "cs"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2


@pytest.mark.parametrize(
    "role, env, words",
    [
        ("node", {}, "AMQP_URL"),
        ("node", {"AMQP_URL": NOWHERE, "RUN_ID": "x y"}, "run id"),
        ("bee", {"AMQP_URL": "redis://x", "RUN_ID": "r"}, "amqp://"),
        ("monitor", {"AMQP_URL": NOWHERE, "RUN_ID": "r"}, "ALGORITHM"),
        ("monitor", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "bees", "OPTIONS": "{bad"}, "options"),
        (
            "monitor",
            {
                "AMQP_URL": NOWHERE,
                "RUN_ID": "r",
                "ALGORITHM": "bees",
                "PROCESSES": "4",
                "OPTIONS": '{"flowers": 0}',
            },
            "flowers",
        ),
        (
            "monitor",
            {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "nope", "PROCESSES": "4"},
            "unknown algorithm",
        ),
        ("monitor", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "nope"}, "unknown algorithm"),
        (
            "monitor",
            {"AMQP_URL": NOWHERE, "RUN_ID": "r", "ALGORITHM": "no.such.module"},
            "cannot be imported",
        ),
        ("elf", {"AMQP_URL": NOWHERE, "RUN_ID": "r", "DWELL_TIMES": '{"rest": -1}'}, "dwell time"),
    ],
)
def test_services_refuse_bad_environment(role, env, words, cli):
    """In this process with only ``env`` (the ``cli`` fixture); the entry point itself is the next test's."""
    done = cli.service(role, env)
    assert done.returncode == 2, done.stderr
    assert words.lower() in done.stderr.lower()


def test_services_entry_point_names_the_roles():
    done = subprocess.run(
        [sys.executable, "-m", "mutexlab.services", "wizard"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "unknown role 'wizard'" in done.stderr


def test_no_broker_is_reported_at_once_with_exit_3(capsys):
    assert main(["run", "mutex", "--amqp-url", NOWHERE]) == 3
    err = capsys.readouterr().err
    assert "cannot use RabbitMQ at amqp://127.0.0.1:1" in err and "is it running?" in err


@pytest.mark.broker
def test_refused_credentials_are_reported_without_the_password(amqp_url, capsys):
    from urllib.parse import urlparse

    where = urlparse(amqp_url)
    url = f"amqp://nobody:secret-pw@{where.hostname}:{where.port or 5672}/%2F"
    assert main(["run", "mutex", "--amqp-url", url]) == 3
    err = capsys.readouterr().err
    assert "refused the login: authentication failed" in err and "secret-pw" not in err


@pytest.mark.broker
def test_run_with_options_file_dwell_kinds_and_report(amqp_url, tmp_path):
    options = tmp_path / "options.json"
    options.write_text('{"token_holder": 2}')
    report = tmp_path / "run.html"
    code = main(
        [
            "run",
            "mutex",
            "--algorithm",
            "suzuki-kasami",
            "--nodes",
            "3",
            "-M",
            "1",
            "--options",
            str(options),
            "--think",
            "0",
            "--cs",
            "0.05",
            "--dwell",
            "0",
            "--amqp-url",
            amqp_url,
            "--report",
            str(report),
        ]
    )
    assert code == 0
    assert "<html" in report.read_text().lower()
    trace = report.with_suffix(".jsonl")
    header = trace.read_text().splitlines()[0]
    assert '"suzuki-kasami"' in header and main(["verify", str(trace)]) == 0
