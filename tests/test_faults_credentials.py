"""Credentials: nothing hard-coded; compose takes the broker user and password
from the environment file with documented defaults; the management UI only on 127.0.0.1.

Allowed: RabbitMQ's own ``guest:guest``, which the broker accepts from localhost only, as the
documented local default of the benchmarks and the tests, and the defaults documented in
``.env.example``. Refused: any other password in a URL in the repository, any credential in the
product code (``shared/``, ``services/``), a literal password in the compose file.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import urlparse

import yaml
from conftest import missing

ROOT = Path(__file__).resolve().parents[1]
URL = re.compile(r"amqps?://[^\s\"'`<>)]+")


def tracked_files() -> list[Path]:
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        missing(f"not a git checkout (git ls-files failed): {done.stderr.strip()}")
    return [ROOT / name for name in done.stdout.splitlines() if (ROOT / name).is_file()]


def credentials_in(path: Path) -> list[tuple[int, str, str, str]]:
    """(line, user, password, host) of every AMQP URL carrying a password."""
    try:
        text = path.read_text()
    except (UnicodeDecodeError, OSError):
        return []
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for url in URL.findall(line):
            parsed = urlparse(url)
            if parsed.password:
                found.append((n, parsed.username or "", parsed.password, parsed.hostname or ""))
    return found


COMPOSE_OVERRIDE = "examples/nodes/compose.yml"  # the program nodes' override of docker-compose.yml
# as credentials_in splits the URL built of the two variables and their defaults
ENV_CREDENTIALS = ("${MUTEXLAB_BROKER_USER", "-mutexlab}:${MUTEXLAB_BROKER_PASSWORD:-mutexlab}")


def test_no_password_is_hard_coded_anywhere():
    problems = []
    for path in tracked_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("tests/") or rel in ("docker-compose.yml", ".env.example"):
            continue  # allowed; compose is checked below
        for line, user, password, host in credentials_in(path):
            if (rel == COMPOSE_OVERRIDE or rel.startswith("deploy/swarm/")) and (
                user,
                password,
            ) == ENV_CREDENTIALS:
                continue  # an override of docker-compose.yml, or a stack file: its variables and defaults
            if (user, password) == ("user", "pass"):
                continue  # a placeholder in documentation
            if rel.startswith(("shared/", "services/")):
                problems.append(f"{rel}:{line}: credentials in the product code")
            elif (user, password) != ("guest", "guest") or host not in ("127.0.0.1", "localhost"):
                problems.append(f"{rel}:{line}: password for {user!r} at {host!r}")
            # else: RabbitMQ's own guest, which it accepts from localhost only — the documented local default
    assert not problems, "\n".join(problems)


def test_the_grep_finds_a_planted_password(tmp_path):
    """The check above is not blind: a credential like the ones it refuses is found."""
    planted = tmp_path / "settings.py"
    planted.write_text('URL = "amqp://admin:s3cret@rabbitmq:5672/%2F"\nOK = "amqp://rabbitmq:5672/"\n')
    assert credentials_in(planted) == [(1, "admin", "s3cret", "rabbitmq")]


def test_compose_reads_user_and_password_from_the_env_file_with_the_documented_defaults():
    text = (ROOT / "docker-compose.yml").read_text()
    compose = yaml.safe_load(text)
    broker = compose["services"]["rabbitmq"]["environment"]
    defaults = dict(re.findall(r"^(MUTEXLAB_BROKER_\w+)=(.*)$", (ROOT / ".env.example").read_text(), re.M))
    assert set(defaults) == {"MUTEXLAB_BROKER_USER", "MUTEXLAB_BROKER_PASSWORD"}
    assert broker["RABBITMQ_DEFAULT_USER"] == f"${{MUTEXLAB_BROKER_USER:-{defaults['MUTEXLAB_BROKER_USER']}}}"
    assert (
        broker["RABBITMQ_DEFAULT_PASS"]
        == f"${{MUTEXLAB_BROKER_PASSWORD:-{defaults['MUTEXLAB_BROKER_PASSWORD']}}}"
    )
    interpolated = re.compile(
        r"amqp://\$\{MUTEXLAB_BROKER_USER(:-[^}]*)?\}:\$\{MUTEXLAB_BROKER_PASSWORD(:-[^}]*)?\}@"
    )
    urls = {
        name: (service.get("environment") or {}).get("AMQP_URL")
        for name, service in compose["services"].items()
    }
    urls = {name: url for name, url in urls.items() if url is not None}
    assert len(urls) >= 5
    for name, url in urls.items():
        assert interpolated.match(url), f"{name}: the credentials must come from the env file: {url}"
    # and no other AMQP URL with a literal password hides in the file
    for url in URL.findall(text):
        assert "@" not in url or interpolated.match(url), url
    # The real env file is never committed.
    assert ".env" in (ROOT / ".gitignore").read_text().split()
    assert ".env" not in [p.relative_to(ROOT).as_posix() for p in tracked_files()]


def test_only_the_management_ui_is_published_and_only_on_localhost():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    published = {name: service.get("ports") or [] for name, service in compose["services"].items()}
    assert {name for name, ports in published.items() if ports} == {"rabbitmq"}
    ports = published["rabbitmq"]
    assert len(ports) == 1
    match = re.fullmatch(r"([\d.]+):(\$\{[^}]+\}|\d+):(\d+)", str(ports[0]))
    assert match, f"expected HOST_IP:HOST_PORT:CONTAINER_PORT, got {ports[0]}"
    host_ip, host_port, container_port = match.groups()
    assert host_ip == "127.0.0.1", f"the management UI must be bound to 127.0.0.1: {ports[0]}"
    assert container_port == "15672", "only the management UI (AMQP stays inside the compose network)"
    assert host_port.startswith("${MUTEXLAB_MANAGEMENT_PORT")
