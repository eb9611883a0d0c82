"""The compose file: valid for docker-compose, scalable services really scalable, every command present."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yml"
SCALABLE = ("bee", "elf", "node")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_docker_compose_config_passes():
    tool = shutil.which("docker-compose")
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail("docker-compose is not installed (.ci/run installs it)")
        pytest.skip("docker-compose is not installed")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MUTEXLAB_", "BEES_", "ELVES_", "CLASSIC_"))}
    for profiles in ([], ["--profile", "elves"], ["--profile", "classic"]):
        done = subprocess.run([tool, "-f", str(COMPOSE), *profiles, "config", "-q"], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


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
        if name == "rabbitmq":
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


def test_broker_has_health_check_management_ui_and_no_hard_coded_credentials(compose):
    broker = compose["services"]["rabbitmq"]
    assert broker["image"].startswith("rabbitmq:3-management")
    assert "healthcheck" in broker
    assert any(str(p).endswith(":15672") for p in broker["ports"])
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
    assert services["monitor"]["environment"]["ALGORITHM"] == "bees"
    assert services["elf"]["profiles"] == services["mayor"]["profiles"] == services["elves-monitor"]["profiles"] == ["elves"]
    assert services["node"]["profiles"] == services["classic-monitor"]["profiles"] == ["classic"]
    for name in ("monitor", "elves-monitor", "classic-monitor"):
        assert services[name]["environment"]["PROCESSES"] == "0", "P is discovered: --scale needs no other change"
    for name in SCALABLE + ("mayor",):
        assert float(services[name]["environment"]["LINGER"]) > 0, "participants must outlive the monitor"


def test_dockerfile_installs_the_package_and_copies_the_services():
    text = (ROOT / "Dockerfile").read_text()
    assert "COPY services" in text and "pip install ." in text
    assert not (ROOT / ".env").exists() or ".env" in (ROOT / ".gitignore").read_text()
