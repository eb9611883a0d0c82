"""The compose file: docker-compose (v1) and docker compose (v2) read it identically, with or
without .env copied from .env.example; scalable services really scalable, every command present.
Running it for real is scripts/compose-check.sh (called by .ci/run)."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import missing

from mutexlab.setups import ConfigError
from mutexlab.transport.settings import MonitorSettings, load

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yml"
EXAMPLE = ROOT / ".env.example"
SCALABLE = ("bee", "elf", "node", "philosopher")
MONITORS = ("monitor", "elves-monitor", "classic-monitor", "philosophers-monitor")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def _tool(argv: list[str], what: str) -> list[str]:
    """The compose command ``argv`` if it works here; skip without it (fail under CI: .ci/run
    installs docker-compose and starts the engine, which brings the compose v2 plugin)."""
    if not (
        shutil.which(argv[0]) and subprocess.run([*argv, "version"], capture_output=True).returncode == 0
    ):
        missing(f"{what} is not installed")
    return argv


def _clean_env() -> dict:
    """The environment without anything the compose file or .env could set, so only the env file speaks."""
    names = {
        line.split("=", 1)[0] for line in EXAMPLE.read_text().splitlines() if re.match(r"^[A-Z_]+=", line)
    }
    return {
        k: v
        for k, v in os.environ.items()
        if k not in names and not k.startswith(("COMPOSE_", "MUTEXLAB_", "BEES_", "ELVES_", "CLASSIC_"))
    }


def _config(tool: list[str], env_file: Path, *files: Path, project: str = "") -> dict:
    """``config`` of every service (all profiles: v1 prints a service of a profile not asked for, v2
    does not), as the tool resolves it with ``env_file``; ``files`` over the project's file (with
    the profile ``program`` of examples/nodes/compose.yml), and ``project`` given with ``-p``."""
    done = subprocess.run(
        [
            *tool,
            "--env-file",
            str(env_file),
            *(["-p", project] if project else []),
            "-f",
            str(COMPOSE),
            *[arg for f in files for arg in ("-f", str(f))],
            "--profile",
            "elves",
            "--profile",
            "classic",
            "--profile",
            "philosophers",
            "--profile",
            "cluster",
            *(["--profile", "program"] if files else []),
            "config",
        ],
        cwd=ROOT,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)


def _normalised(config: dict) -> dict:
    """What a service runs with, in a form both versions print alike (v1 writes ports and volumes
    short, v2 long; v2 adds networks and ``required``)."""
    out = {}
    for name, service in config["services"].items():
        ports = []
        for port in service.get("ports", []):
            if isinstance(port, dict):
                port = f"{port.get('host_ip', '')}:{port.get('published', '')}:{port['target']}/{port.get('protocol', 'tcp')}"
            ports.append(str(port))
        volumes = []
        for volume in service.get("volumes", []):
            if isinstance(volume, dict):
                volume = f"{volume['source']}:{volume['target']}:{'ro' if volume.get('read_only') else 'rw'}"
            volumes.append(str(volume))
        out[name] = {
            "environment": {k: str(v) for k, v in (service.get("environment") or {}).items()},
            "command": service.get("command"),
            "image": service.get("image"),
            "profiles": service.get("profiles"),
            "ports": ports,
            "volumes": volumes,
            "depends_on": {k: v["condition"] for k, v in (service.get("depends_on") or {}).items()},
            "replicas": (service.get("deploy") or {}).get("replicas"),
        }
    return out


def test_no_default_holds_a_closing_brace():
    """v1 ends ${VAR:-default} at the first "}", v2 at the matching one: a "}" in a default (a JSON
    object, say) makes them disagree — v1 appended a stray "}" to every OPTIONS set in .env."""
    text = COMPOSE.read_text()
    for start in (m.start() for m in re.finditer(r"\$\{", text)):
        depth, end = 0, start + 1
        for end in range(start + 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        inner = text[start + 2 : end]
        assert "{" not in inner and "}" not in inner, f"nested braces in ${{{inner}}}"


SECRET_LINE = "MUTEXLAB_RUN_SECRET=" + "0123456789abcdef" * 4


def _env_file(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.slow  # 2 CPU-s, 3 s: docker-compose v1 is a Python program that starts three times
def test_v1_and_v2_give_identical_configuration(tmp_path):
    """The same file, the same env file: docker-compose 1.29 and docker compose v2 must agree on
    every service — and .env.example documents the defaults (same result as an env file holding
    the run's secret alone, which has no default). The secret line is appended as docs/tour.md
    appends it: the last one wins over the example's empty one."""
    v1 = _tool(["docker-compose"], "docker-compose (v1)")
    v2 = _tool(["docker", "compose"], "docker compose (v2)")
    example = _env_file(tmp_path / "example.env", EXAMPLE.read_text() + SECRET_LINE + "\n")
    alone = _env_file(tmp_path / "alone.env", SECRET_LINE + "\n")
    configs = {
        (tool[0], path.name): _normalised(_config(tool, path))
        for tool in (v1, v2)
        for path in (example, alone)
    }
    assert configs[("docker-compose", example.name)] == configs[("docker", example.name)]
    # Without COMPOSE_PROJECT_NAME (no .env) the one difference: the image's tag names the project,
    # which v2 takes from the directory and v1 cannot see (its fallback: mutexlab:latest).
    for tool, tag in (("docker-compose", "latest"), ("docker", _config(v2, alone)["name"])):
        for service in configs[(tool, alone.name)].values():
            if service["image"].startswith("mutexlab:"):
                assert service.pop("image") == f"mutexlab:{tag}", (tool, service)
                service["image"] = "mutexlab:mutexlab"  # as with .env, for the comparisons below
    assert configs[("docker-compose", alone.name)] == configs[("docker", alone.name)]
    assert configs[("docker-compose", example.name)] == configs[("docker-compose", alone.name)]
    services = configs[("docker-compose", example.name)]
    for name in MONITORS:
        environment = services[name]["environment"]
        options = json.loads(environment["OPTIONS"])
        assert isinstance(options, dict) and options, environment["OPTIONS"]
        assert environment["MUTEXLAB_RUN_SECRET"] == SECRET_LINE.split("=", 1)[1]
        settings = load(MonitorSettings, **{k.lower(): v for k, v in environment.items()})
        assert settings.processes == 0 and settings.options == options


def test_the_env_file_fixes_the_project_name(tmp_path):
    """docker-compose 1.29 refuses a top-level ``name:``; COMPOSE_PROJECT_NAME in .env names the
    project for both (scripts/compose-check.sh checks v1's containers carry it)."""
    assert "\nname:" not in COMPOSE.read_text()
    assert re.search(r"^COMPOSE_PROJECT_NAME=mutexlab$", EXAMPLE.read_text(), re.M)
    v2 = _tool(["docker", "compose"], "docker compose (v2)")
    env = _env_file(tmp_path / "env", EXAMPLE.read_text() + SECRET_LINE + "\n")
    assert _config(v2, env)["name"] == "mutexlab"


PROGRAM = ROOT / "examples" / "nodes" / "compose.yml"


def _built_images(config: dict) -> set[str]:
    return {service["image"] for service in config["services"].values() if service.get("build")}


@pytest.mark.slow  # docker-compose v1 starts twice
def test_each_project_builds_and_tags_its_own_image(tmp_path):
    """Two projects (COMPOSE_PROJECT_NAME in .env, or -p with v2) never overwrite each other's image:
    before, every project tagged mutexlab:latest (and mutexlab-program:latest), so building one
    replaced the other's — and docker-compose v1, which never rebuilds an image that exists, then ran
    the other checkout's code; swarm's `docker build -t mutexlab .` was replaced too."""
    v1 = _tool(["docker-compose"], "docker-compose (v1)")
    v2 = _tool(["docker", "compose"], "docker compose (v2)")
    env = _env_file(tmp_path / "env", EXAMPLE.read_text() + SECRET_LINE + "\n")
    other = _env_file(
        tmp_path / "other", EXAMPLE.read_text() + SECRET_LINE + "\nCOMPOSE_PROJECT_NAME=first14x\n"
    )
    ours = {"mutexlab:mutexlab", "mutexlab-program:mutexlab"}
    theirs = {"mutexlab:first14x", "mutexlab-program:first14x"}
    for tool in (v1, v2):
        assert _built_images(_config(tool, env, PROGRAM)) == ours, tool
        assert _built_images(_config(tool, other, PROGRAM)) == theirs, tool
    assert _built_images(_config(v2, env, PROGRAM, project="first14x")) == theirs  # v2 alone: -p too
    text = COMPOSE.read_text() + PROGRAM.read_text()
    assert "mutexlab:latest" not in text and "mutexlab-program:latest" not in text


def test_scalable_services_have_no_container_name_or_fixed_host_port(compose):
    services = compose["services"]
    for name in SCALABLE:
        assert name in services
        assert "container_name" not in services[name]
        assert "ports" not in services[name]
    for name, service in services.items():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} beyond localhost"


def test_every_service_command_exists_and_matches_its_role(compose):
    for name, service in compose["services"].items():
        if service["image"].startswith("rabbitmq:"):  # the broker and the cluster's other nodes
            continue
        command = service["command"]
        assert command[0] == "python" and len(command) == 2
        script = ROOT / command[1]
        assert script.is_file(), f"{name}: {command[1]} does not exist"
        role = script.parent.name
        assert f'main("{role}")' in script.read_text()
        expected = "monitor" if name.endswith("monitor") else name
        assert role == expected
        assert service["depends_on"]["rabbitmq"]["condition"] == "service_healthy"


def test_each_monitor_starts_after_its_participants(compose):
    """Joins wait in the monitor's queue, so a monitor started after every scaled participant
    admits them all even when a loaded machine starts containers seconds apart (once, with the
    monitor first, the join window closed on 2 of 5 nodes)."""
    services = compose["services"]
    for monitor, participants in (
        ("monitor", ["bee"]),
        ("elves-monitor", ["elf", "mayor"]),
        ("classic-monitor", ["node"]),
        ("philosophers-monitor", ["philosopher"]),
    ):
        depends = services[monitor]["depends_on"]
        assert set(depends) == {"rabbitmq", *participants}
        assert all(depends[p]["condition"] == "service_started" for p in participants)
        for participant in participants:
            assert not any(m in services[participant]["depends_on"] for m in MONITORS)


def test_broker_has_health_check_management_ui_and_no_hard_coded_credentials(compose):
    broker = compose["services"]["rabbitmq"]
    assert broker["image"].startswith("rabbitmq:3-management")
    assert "healthcheck" in broker
    assert broker["ports"] == ["127.0.0.1:${MUTEXLAB_MANAGEMENT_PORT:-}:15672"], "no fixed host port"
    assert re.search(r"^MUTEXLAB_MANAGEMENT_PORT=$", EXAMPLE.read_text(), re.M), "Docker picks the port"
    assert broker["environment"]["RABBITMQ_DEFAULT_PASS"].startswith("${")
    for name, service in compose["services"].items():
        url = (service.get("environment") or {}).get("AMQP_URL")
        if url is not None:
            assert "${MUTEXLAB_BROKER_PASSWORD" in url, f"{name}: credentials must come from the env file"
    example = (ROOT / ".env.example").read_text()
    assert "MUTEXLAB_BROKER_USER=" in example and "MUTEXLAB_BROKER_PASSWORD=" in example


def test_profiles_bees_by_default_elves_and_classic_on_demand(compose):
    services = compose["services"]
    assert "profiles" not in services["bee"] and "profiles" not in services["monitor"]
    assert services["monitor"]["environment"]["ALGORITHM"] == "${BEES_ALGORITHM:-bees}"
    assert (
        services["elf"]["profiles"]
        == services["mayor"]["profiles"]
        == services["elves-monitor"]["profiles"]
        == ["elves"]
    )
    assert services["node"]["profiles"] == services["classic-monitor"]["profiles"] == ["classic"]
    assert (
        services["philosopher"]["profiles"]
        == services["philosophers-monitor"]["profiles"]
        == ["philosophers"]
    )
    for name in MONITORS:
        assert services[name]["environment"]["PROCESSES"] == "0", (
            "P is discovered: --scale needs no other change"
        )
    for name in SCALABLE + ("mayor",):
        assert float(services[name]["environment"]["LINGER"]) > 0, "participants must outlive the monitor"


MOUNT = "${ALGORITHM_FILE:-./services/algorithm-unset.py}:/algorithm/algorithm.py:ro"


def test_the_run_secret_reaches_every_container_alike_in_its_environment(compose):
    """docs/rabbitmq.md#authenticated-runs: every mutexlab container gets MUTEXLAB_RUN_SECRET in its
    own environment, the one value of .env or the shell; no file, no volume, no default."""
    services = compose["services"]
    for name, service in services.items():
        if service["image"].startswith("rabbitmq:"):
            assert not any("SECRET" in k for k in service.get("environment") or {}), name
            continue
        environment = service["environment"]
        assert environment["MUTEXLAB_RUN_SECRET"] == compose["x-run-secret"], name
        assert "MUTEXLAB_RUN_SECRET_FILE" not in environment, name
    assert compose["x-run-secret"].startswith("${MUTEXLAB_RUN_SECRET:?MUTEXLAB_RUN_SECRET is not set: ")
    assert "run-secret" not in compose["volumes"] and "/run-secret" not in (ROOT / "Dockerfile").read_text()
    assert "\nMUTEXLAB_RUN_SECRET=\n" in EXAMPLE.read_text(), "documented in .env.example, empty"


MAKE_SECRET = """python3 -c 'import secrets; print("MUTEXLAB_RUN_SECRET=" + secrets.token_hex(32))' >> .env"""


@pytest.mark.parametrize("tool", [["docker-compose"], ["docker", "compose"]], ids=["v1", "v2"])
def test_without_a_run_secret_compose_refuses_and_names_the_fix(tool, tmp_path):
    """A plain ``up`` with no secret prepared (.env.example as it is, or no .env at all) never runs
    unauthenticated on a default: both tools refuse before creating anything, naming the variable
    and where the command that makes one is (docs/tour.md shows it, and so do the files)."""
    tool = _tool(tool, " ".join(tool))
    for env_file in (EXAMPLE, _env_file(tmp_path / "empty.env", "")):
        done = subprocess.run(
            [*tool, "--env-file", str(env_file), "-f", str(COMPOSE), "-p", "mutexlab-never-started", "up"],
            cwd=ROOT,
            env=_clean_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode != 0
        assert (
            "MUTEXLAB_RUN_SECRET is not set: put a fresh secret in .env as docs/tour.md shows" in done.stderr
        )
        assert "Creat" not in done.stdout + done.stderr, "refused before creating anything"
    for doc in ("docs/tour.md", "docs/rabbitmq.md", "docker-compose.yml", ".env.example"):
        assert MAKE_SECRET in (ROOT / doc).read_text(), f"{doc} does not show how to make the secret"


# -- nothing shared between the participants of a run --------------------------------------------
def runs_of(services: dict) -> dict[str, list[str]]:
    """Each monitor with its participants (what it waits for besides the brokers)."""
    return {
        name: [name, *(s for s in service.get("depends_on") or {} if not s.startswith("rabbitmq"))]
        for name, service in services.items()
        if name.endswith("monitor")
    }


def mounts(service: dict) -> list[tuple[str, str, bool]]:
    """(source, target, read-only) of each mount of a service, short or long syntax."""
    out = []
    for volume in service.get("volumes", []):
        if isinstance(volume, dict):
            out.append((volume["source"], volume["target"], bool(volume.get("read_only"))))
            continue
        match = re.fullmatch(r"(\$\{[^}]*\}|[^:]+):([^:]+)(?::(\w+))?", volume)
        assert match, volume
        out.append((match[1], match[2], match[3] == "ro"))
    return out


def shared_mounts(project: dict) -> list[str]:
    """What the participants of one run share: a named volume mounted by two of its services, or a
    host path two of them mount writable. (A read-only host file, ALGORITHM_FILE, is an input like
    the image's code, not a channel between them.)"""
    named = set(project.get("volumes") or {})
    out = []
    for monitor, members in runs_of(project["services"]).items():
        by_source: dict[str, list[tuple[str, bool]]] = {}
        for member in members:
            for source, _, read_only in mounts(project["services"][member]):
                by_source.setdefault(source, []).append((member, read_only))
        for source, users in by_source.items():
            if len(users) < 2:
                continue
            if source in named:
                out.append(f"run of {monitor}: volume {source} mounted by {', '.join(u for u, _ in users)}")
            elif not all(read_only for _, read_only in users):
                out.append(f"run of {monitor}: {source} mounted writable by {', '.join(u for u, _ in users)}")
    return out


def _with_program(compose: dict) -> dict:
    """The project's file with examples/nodes/compose.yml over it (the ``program`` run)."""
    program = yaml.safe_load((ROOT / "examples" / "nodes" / "compose.yml").read_text())
    return {**compose, "services": {**compose["services"], **program["services"]}}


def test_no_volume_is_shared_between_the_participants_of_a_run(compose):
    """Past one machine nothing may rely on a volume two participants share: the traces volume is
    the monitor's alone, the secret travels in each container's environment."""
    project = _with_program(compose)
    assert set(runs_of(project["services"])) == {*MONITORS, "program-monitor"}
    assert shared_mounts(project) == []
    for name, service in project["services"].items():
        if any(target == "/traces" for _, target, _ in mounts(service)):
            assert name.endswith("monitor"), f"{name} mounts the traces volume"


def test_the_shared_mount_check_catches_a_planted_shared_volume(compose):
    """The old run-secret volume put back, a participant given the traces volume, the algorithm
    file made writable: each is found."""
    project = copy.deepcopy(_with_program(compose))
    services = project["services"]  # (new lists: services merged from one anchor share theirs)
    project["volumes"]["run-secret"] = None
    for name in ("monitor", "bee"):
        services[name]["volumes"] = [*services[name]["volumes"], "run-secret:/run-secret"]
    services["node"]["volumes"] = [*services["node"]["volumes"], "traces:/traces"]
    services["elf"]["volumes"] = [v.removesuffix(":ro") for v in services["elf"]["volumes"]]
    assert shared_mounts(project) == [
        "run of monitor: volume run-secret mounted by monitor, bee",
        "run of elves-monitor: ${ALGORITHM_FILE:-./services/algorithm-unset.py} mounted writable by "
        "elves-monitor, elf, mayor",
        "run of classic-monitor: volume traces mounted by classic-monitor, node",
    ]


def test_an_algorithm_file_reaches_every_container_of_a_run_named_alike(compose):
    """docs/rabbitmq.md#your-algorithm-in-compose: ALGORITHM_FILE is mounted in every mutexlab
    container, and each participant is told its monitor's ALGORITHM (a participant loads a file
    only when its own environment names it)."""
    services = compose["services"]
    for name, service in services.items():
        if not service["image"].startswith("rabbitmq:"):
            assert MOUNT in service["volumes"], name
    for monitor, participants in (
        ("monitor", ["bee"]),
        ("elves-monitor", ["elf", "mayor"]),
        ("classic-monitor", ["node"]),
        ("philosophers-monitor", ["philosopher"]),
    ):
        algorithm = services[monitor]["environment"]["ALGORITHM"]
        assert all(services[p]["environment"]["ALGORITHM"] == algorithm for p in participants), monitor
    example = EXAMPLE.read_text()
    assert "ALGORITHM_FILE=./services/algorithm-unset.py" in example
    assert "BEES_ALGORITHM=bees" in example and "ELVES_ALGORITHM=elves" in example


def test_without_algorithm_file_the_placeholder_says_what_to_set(monkeypatch):
    from mutexlab.protocols import registry

    with pytest.raises(
        ConfigError, match="ALGORITHM_FILE is not set: compose mounts your algorithm's .py file"
    ):
        registry.resolve(str(ROOT / "services" / "algorithm-unset.py"))


def test_dockerfile_installs_the_package_and_copies_the_services():
    text = (ROOT / "Dockerfile").read_text()
    assert "COPY services" in text and "pip install ." in text
    assert not (ROOT / ".env").exists() or ".env" in (ROOT / ".gitignore").read_text()


def test_cluster_profile_three_brokers_one_cookie_every_service_given_all_three(compose):
    """docs/cluster.md: rabbitmq-2 and -3 only with --profile cluster; the three share the Erlang
    cookie from the env file; every service names the three nodes (the bus fails over between them)."""
    services = compose["services"]
    for name in ("rabbitmq-2", "rabbitmq-3"):
        assert services[name]["profiles"] == ["cluster"] and services[name]["hostname"] == name
    cookies = {
        services[n]["environment"]["RABBITMQ_ERLANG_COOKIE"] for n in ("rabbitmq", "rabbitmq-2", "rabbitmq-3")
    }
    assert cookies == {"${MUTEXLAB_ERLANG_COOKIE:-mutexlab-cluster-cookie}"}
    assert "MUTEXLAB_ERLANG_COOKIE=mutexlab-cluster-cookie" in (ROOT / ".env.example").read_text()
    for name, service in services.items():
        url = (service.get("environment") or {}).get("AMQP_URL")
        if url is not None:
            hosts = [part.split("@", 1)[1].split(":", 1)[0] for part in url.split(",")]
            assert hosts == ["rabbitmq", "rabbitmq-2", "rabbitmq-3"], name


def test_the_image_is_built_never_pulled_and_the_brokers_log_warnings_only(compose):
    """compose v2 would try to pull mutexlab:latest first; the brokers' start-up would bury the
    verdict; the cluster's peers, named for every service, are left out when not started."""
    services = compose["services"]
    ours = [s for s in services.values() if s.get("build")]
    assert ours and all(s.get("pull_policy") == "build" for s in ours)
    for name in ("rabbitmq", "rabbitmq-2", "rabbitmq-3"):
        script = " ".join(services[name]["entrypoint"])
        assert "log.console.level = warning" in script, name
    for name, service in services.items():
        if "AMQP_URL" in (service.get("environment") or {}):
            assert str(service["environment"].get("SKIP_UNRESOLVED_NODES")).lower() == "true", name


TEARDOWN = re.compile(r"docker compose((?: --profile \S+)*) down -v")
PRUNE = "docker image prune -f --filter label=com.docker.compose.project=mutexlab"


def test_the_documented_teardown_names_every_profile(compose):
    """A plain ``down -v`` leaves the containers (and the volumes they hold) of profiles it was not
    given, and v1 knows no ``--profile '*'``: the tour's and rabbitmq.md's teardown names them all."""
    profiles = {p for service in compose["services"].values() for p in service.get("profiles", [])}
    assert profiles == {"elves", "classic", "cluster", "philosophers"}
    for doc in ("docs/tour.md", "docs/rabbitmq.md"):
        found = [m.group(1).split()[1::2] for m in TEARDOWN.finditer((ROOT / doc).read_text())]
        assert found, f"{doc} documents no teardown"
        for named in found:
            assert set(named) == profiles, f"{doc}: teardown names {named}, not every profile"
        assert (
            "docker run --rm -v mutexlab_traces:/traces mutexlab:mutexlab cat /traces/"
            in (ROOT / doc).read_text()
        ), f"{doc}: how to copy a trace out before down -v"
        # compose v2 builds the image per service and tags the last: the others stay untagged
        assert PRUNE in (ROOT / doc).read_text(), f"{doc}: how to remove the untagged builds"
    assert 'docker image prune -f --filter "label=com.docker.compose.project=$project"' in CHECK.read_text()


# -- the solutions' compose commands in the docs: what scripts/compose-check.sh runs ---------------
SOLUTION_DOCS = ("docs/your-bees.md", "docs/problems-and-solutions.md", "docs/test-any-program.md")
CHECK = ROOT / "scripts" / "compose-check.sh"


def compose_commands(text: str) -> list[tuple[int, list[str]]]:
    """(line, words) of each ``docker compose`` command in the ```bash blocks of ``text``, its
    continuation lines joined."""
    out, block, pending, start = [], None, "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            block = line[3:].strip() if block is None else None
            continue
        if block != "bash":
            continue
        if not pending:
            start = number
        pending += line.rstrip("\\").strip() + " "
        if line.endswith("\\"):
            continue
        words, pending = pending.split(), ""
        if "docker" in words and words[words.index("docker") + 1 : words.index("docker") + 2] == ["compose"]:
            out.append((start, words))
    return out


def command_findings(doc: str, text: str) -> list[str]:
    """What in ``doc``'s compose commands the compose files do not have (a variable, a profile, a
    service), and each ``up`` whose arguments scripts/compose-check.sh does not run."""
    check = " ".join(CHECK.read_text().replace("\\\n", " ").split())
    out = []
    for line, words in compose_commands(text):
        where = f"{doc}:{line}"
        at = words.index("docker")
        env, rest = words[:at], words[at + 2 :]
        files, profiles = [COMPOSE], []
        while rest and rest[0] in ("-f", "--profile"):
            option, value, rest = rest[0], rest[1], rest[2:]
            if option == "--profile":
                profiles.append(value)
            elif value != "docker-compose.yml":
                files.append(ROOT / value)
        sources = "".join(f.read_text() for f in files)
        services: dict = {}
        for f in files:
            services |= yaml.safe_load(f.read_text())["services"]
        known = {p for s in services.values() for p in s.get("profiles", [])}
        for assignment in env:
            name, value = assignment.split("=", 1)
            if "${" + name not in sources:
                out.append(f"{where}: {name} is no variable of {', '.join(f.name for f in files)}")
            # the solution mounted is one of the checkout's, which the reader has (not my_algo.py,
            # which your-algorithm.md made a mutex algorithm)
            if name == "ALGORITHM_FILE" and not (ROOT / value).is_file():
                out.append(f"{where}: ALGORITHM_FILE {value} is no file of the checkout")
        out += [f"{where}: no profile {p!r}" for p in profiles if p not in known]
        command, args = rest[0], rest[1:]
        named = []
        for i, word in enumerate(args):
            if word == "--scale":
                named.append(args[i + 1].split("=")[0])
            elif word == "--exit-code-from":
                named.append(args[i + 1])
            elif not word.startswith("-") and args[i - 1] not in ("--scale", "--exit-code-from"):
                named.append(word)
                if command == "run":
                    break  # the service; what follows is its command
        for name in named:
            if name not in services:
                out.append(f"{where}: no service {name!r}")
            elif not set(services[name].get("profiles", [])) <= set(profiles):
                out.append(f"{where}: service {name!r} needs --profile {services[name]['profiles'][0]}")
        if command == "up" and " ".join(rest) not in check:
            out.append(f"{where}: scripts/compose-check.sh runs no `{' '.join(rest)}`")
    return out


COPY = re.compile(r"docker run --rm -v mutexlab_traces:/traces (\S+) cat /traces/")


def copy_findings(doc: str, text: str) -> list[str]:
    """Each trace copied out (``docker run … IMAGE cat /traces/…``) with an image other than the
    one the monitor of its block's ``up`` runs, with .env's project (``mutexlab``): another is not
    built by that run, and ``docker run`` then tries to pull it and leaves an empty file."""
    out, monitor, files = [], None, [COMPOSE]
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            monitor, files = None, [COMPOSE]
        words = line.rstrip("\\").split()
        if "--exit-code-from" in words:
            monitor = words[words.index("--exit-code-from") + 1]
        for i, word in enumerate(words[:-1]):
            if word == "-f" and words[i + 1] != "docker-compose.yml":
                files = [COMPOSE, ROOT / words[i + 1]]
        m = COPY.search(line)
        if m and monitor:
            services: dict = {}
            for f in files:
                services |= yaml.safe_load(f.read_text())["services"]
            image = services[monitor]["image"].replace("${COMPOSE_PROJECT_NAME:-latest}", "mutexlab")
            if m.group(1) != image:
                out.append(f"{doc}:{number}: copies the trace out with {m.group(1)}; {monitor} runs {image}")
    return out


@pytest.mark.parametrize("doc", SOLUTION_DOCS)
def test_a_trace_is_copied_out_with_the_image_its_run_built(doc):
    assert copy_findings(doc, (ROOT / doc).read_text()) == []


def test_the_copy_check_reports_the_image_the_program_run_does_not_build():
    """test-any-program.md copied the program run's trace with mutexlab:mutexlab, which only the
    project's own stacks build: after the program profile alone, `Unable to find image`."""
    text = (ROOT / "docs/test-any-program.md").read_text()
    planted = text.replace(
        "-v mutexlab_traces:/traces mutexlab-program:mutexlab", "-v mutexlab_traces:/traces mutexlab:mutexlab"
    )
    assert planted != text
    found = copy_findings("docs/test-any-program.md", planted)
    assert [f.split(": ", 1)[1] for f in found] == [
        "copies the trace out with mutexlab:mutexlab; program-monitor runs mutexlab-program:mutexlab"
    ]


@pytest.mark.parametrize("doc", SOLUTION_DOCS)
def test_the_solutions_compose_commands_name_what_exists_and_are_what_the_check_runs(doc):
    text = (ROOT / doc).read_text()
    assert compose_commands(text), f"{doc} shows no docker compose command"
    assert command_findings(doc, text) == []


def test_the_command_check_reports_planted_errors():
    text = (ROOT / "docs/your-bees.md").read_text()
    planted = (
        text.replace("BEES_ALGORITHM=/algorithm", "BEE_ALGORITHM=/algorithm", 1)
        .replace("up --scale bee=5", "--profile bees up --scale bees=5", 1)
        .replace("--exit-code-from monitor", "--exit-code-from monitor --no-build", 1)
    )
    found = command_findings("docs/your-bees.md", planted)
    assert [f.split(": ", 1)[1] for f in found] == [
        "BEE_ALGORITHM is no variable of docker-compose.yml",
        "no profile 'bees'",
        "no service 'bees'",
        "scripts/compose-check.sh runs no `up --scale bees=5 --exit-code-from monitor --no-build`",
    ]
    elves = (ROOT / "docs/problems-and-solutions.md").read_text()
    elves = elves.replace(
        "ALGORITHM_FILE=./examples/solutions/elves_no_arbiter.py", "ALGORITHM_FILE=./my_algo.py", 1
    )
    assert "ALGORITHM_FILE ./my_algo.py is no file of the checkout" in " ".join(
        command_findings("docs/problems-and-solutions.md", elves)
    )
    program = (ROOT / "docs/test-any-program.md").read_text().replace("--profile program \\", "\\", 1)
    assert "needs --profile program" in " ".join(command_findings("docs/test-any-program.md", program))
