"""The swarm stack files (deploy/swarm/, docs/swarm.md), as `docker stack config` merges them:
nothing shared between participants but the broker and a Docker secret, P the same as the
replicas, nothing restarted, nothing published. Running them for real on a one-node swarm is
scripts/swarm-check.sh (called by .ci/run)."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from conftest import missing

ROOT = Path(__file__).resolve().parents[1]
SWARM = ROOT / "deploy" / "swarm"
SECRET_FILE = "/run/secrets/run-secret"
# run file -> (the variable giving P, the scaled service, the fixed services)
RUNS = {"bees": ("BEES", "bee", ()), "elves": ("ELVES", "elf", ("mayor",)), "classic": ("NODES", "node", ())}


def stack_config(run: str, env: dict[str, str]) -> dict:
    """The broker's file and ``run``'s merged by `docker stack config` (no swarm needed)."""
    if not shutil.which("docker"):
        missing("the docker CLI is not installed")
    argv = ["docker", "stack", "config", "-c", str(SWARM / "broker.yml"), "-c", str(SWARM / f"{run}.yml")]
    clean = {k: v for k, v in os.environ.items() if k not in ("BEES", "ELVES", "NODES", "MUTEXLAB_IMAGE")}
    done = subprocess.run(argv, capture_output=True, text=True, env={**clean, **env}, cwd=ROOT)
    if done.returncode != 0 and "unknown command" in done.stderr + done.stdout:
        missing("this docker CLI has no `docker stack config`")
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)


def problems(config: dict, run: str) -> list[str]:
    """What in a merged stack breaks a swarm run: each a sentence naming the service."""
    count_var, scaled, fixed = RUNS[run]
    services = config.get("services", {})
    out = []
    if config.get("volumes"):
        out.append(f"top-level volumes {sorted(config['volumes'])}: nothing may be shared through a volume")
    secret = config.get("secrets", {}).get("run-secret", {})
    if not secret.get("file") and not secret.get("external"):
        out.append("no Docker secret run-secret (a file or an external secret)")
    for name, svc in services.items():
        if svc.get("volumes"):
            out.append(f"{name} mounts {svc['volumes']}: nothing may be shared through a volume")
        if svc.get("ports"):
            out.append(f"{name} publishes {svc['ports']}: a swarm run publishes nothing")
        if svc.get("deploy", {}).get("restart_policy", {}).get("condition") != "none":
            out.append(
                f"{name}: restart_policy condition is not none (a finished participant would start again)"
            )
        if name == "rabbitmq":
            continue
        env = svc.get("environment", {})
        if "run-secret" not in [s.get("source") for s in svc.get("secrets", [])]:
            out.append(f"{name} is not given the Docker secret run-secret")
        if env.get("MUTEXLAB_RUN_SECRET_FILE") != SECRET_FILE or env.get("MUTEXLAB_RUN_SECRET"):
            out.append(f"{name} does not read the run's secret from {SECRET_FILE} alone")
        hosts = {urlsplit(u).hostname for u in str(env.get("AMQP_URL", "")).split(",")}
        if hosts != {"rabbitmq"}:
            out.append(
                f"{name}: AMQP_URL names {sorted(h or '' for h in hosts)}, not the stack's broker rabbitmq"
            )
    monitor = services.get("monitor", {})
    menv = monitor.get("environment", {})
    replicas = services.get(scaled, {}).get("deploy", {}).get("replicas")
    if str(menv.get("PROCESSES")) != str(replicas):
        out.append(f"monitor PROCESSES={menv.get('PROCESSES')} but {scaled} has {replicas} replicas")
    if not menv.get("TRACE", "").startswith("/traces/"):
        out.append("monitor writes no trace under /traces (docs/swarm.md copies it from there)")
    if "node.role == manager" not in monitor.get("deploy", {}).get("placement", {}).get("constraints", []):
        out.append("monitor is not placed on a manager (where the docs copy its trace from)")
    stable = services.get(scaled, {}).get("environment", {}).get("STABLE_NAME", "")
    if stable != f"{scaled}-{{{{.Task.Slot}}}}":
        out.append(f"{scaled}: STABLE_NAME is {stable!r}, not its task slot ({scaled}-{{{{.Task.Slot}}}})")
    for name in fixed:
        if services.get(name, {}).get("deploy", {}).get("replicas", 1) != 1:
            out.append(f"{name} must run once")
    return out


@pytest.mark.parametrize("run", sorted(RUNS))
def test_each_stack_shares_nothing_but_the_broker_and_the_secret(run):
    count_var = RUNS[run][0]
    config = stack_config(run, {"RUN_SECRET_FILE": "/nonexistent/secret", count_var: "7"})
    assert problems(config, run) == []
    assert config["services"][RUNS[run][1]]["deploy"]["replicas"] == 7


def test_without_a_secret_file_the_deploy_is_refused_with_the_reason():
    if not shutil.which("docker"):
        missing("the docker CLI is not installed")
    done = subprocess.run(
        ["docker", "stack", "config", "-c", str(SWARM / "broker.yml"), "-c", str(SWARM / "bees.yml")],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "RUN_SECRET_FILE"},
    )
    assert done.returncode != 0
    assert "RUN_SECRET_FILE must name a file" in done.stderr


def test_the_check_catches_planted_breakage():
    good = stack_config("elves", {"RUN_SECRET_FILE": "/nonexistent/secret"})
    assert problems(good, "elves") == []
    cases = {
        "a shared volume": (
            lambda c: c["services"]["elf"].__setitem__("volumes", ["traces:/traces"]),
            "elf mounts",
        ),
        "a secret left out": (lambda c: c["services"]["mayor"].pop("secrets"), "mayor is not given"),
        "the secret in plain text": (
            lambda c: c["services"]["elf"]["environment"].__setitem__("MUTEXLAB_RUN_SECRET", "x" * 32),
            "elf does not read",
        ),
        "P unlike the replicas": (
            lambda c: c["services"]["elf"]["deploy"].__setitem__("replicas", 9),
            "monitor PROCESSES=4 but elf has 9",
        ),
        "a restart": (lambda c: c["services"]["monitor"]["deploy"].pop("restart_policy"), "monitor: restart"),
        "a published port": (
            lambda c: c["services"]["rabbitmq"].__setitem__("ports", ["15672:15672"]),
            "publishes",
        ),
        "another broker": (
            lambda c: c["services"]["elf"]["environment"].__setitem__(
                "AMQP_URL", "amqp://u:p@elsewhere:5672/"
            ),
            "elf: AMQP_URL names ['elsewhere']",
        ),
        "ids not from the slot": (
            lambda c: c["services"]["elf"]["environment"].pop("STABLE_NAME"),
            "elf: STABLE_NAME is ''",
        ),
        "two mayors": (
            lambda c: c["services"]["mayor"].__setitem__("deploy", {"replicas": 2}),
            "mayor must run once",
        ),
    }
    for what, (plant, said) in cases.items():
        broken = copy.deepcopy(good)
        plant(broken)
        found = problems(broken, "elves")
        assert any(said in p for p in found), (what, found)


@pytest.mark.parametrize("runs", ["bee", "bees elfs", " "])
def test_a_run_list_naming_no_known_run_is_refused(runs):
    """CI names the runs (CI_SWARM_RUNS): a misspelt name must not run nothing and pass."""
    done = subprocess.run(
        ["bash", "scripts/swarm-check.sh"],
        capture_output=True,
        text=True,
        env={**os.environ, "SWARM_CHECK_RUNS": runs},
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 2 and "SWARM_CHECK_RUNS" in done.stderr, done.stderr
