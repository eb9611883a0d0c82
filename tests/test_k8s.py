"""The Kubernetes manifests (deploy/k8s/, docs/kubernetes.md), rendered offline with `kubectl
kustomize` and validated against the Kubernetes API schemas (kubernetes-validate, strict), then
held to what a run needs: ids from the pods' names, the run's secret, the broker's address, the
monitor's outcome as a Job's. No cluster is reachable here: nothing is applied."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import jsonschema
import kubernetes_validate as kv
import pytest
import yaml
from conftest import missing

from mutexlab.protocols.registry import build_setup
from mutexlab.transport.membership import role_of, wanted_name

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"
# overlay -> (algorithm, the scaled StatefulSet, the fixed ones, P as shipped)
RUNS = {
    "bees": ("bees", "bee", (), 5),
    "elves": ("elves", "elf", ("mayor",), 4),
    "classic": ("ricart-agrawala", "node", (), 5),
}
# The oldest Kubernetes the manifests claim (StatefulSet spec.ordinals: beta and on from 1.27) and
# the newest whose schemas kubernetes-validate ships.
VERSIONS = ("1.27.0", "1.37.0")
SECRET_KEY = "secret"


def _kubectl() -> str:
    """kubectl with a kustomize of v5 or later (`labels`, `replacements`; tested with v5.5.0)."""
    if not shutil.which("kubectl"):
        missing("kubectl is not installed (apt-get install kubectl)")
    done = subprocess.run(["kubectl", "version", "--client", "-o", "json"], capture_output=True, text=True)
    version = json.loads(done.stdout or "{}").get("kustomizeVersion", "")
    major = version.lstrip("v").split(".")[0]
    if not major.isdigit() or int(major) < 5:
        missing(f"kubectl's kustomize is {version or 'unknown'}: the manifests need v5 or later")
    return "kubectl"


def render(tmp_path: Path, run: str, edit=None) -> list[dict]:
    """deploy/k8s copied to ``tmp_path`` with a fresh run secret written as the docs say (``edit``,
    given the copy's root, may change it first), and ``run``'s overlay rendered by kubectl."""
    kubectl = _kubectl()
    tree = tmp_path / "k8s"
    if not tree.exists():
        shutil.copytree(K8S, tree, ignore=shutil.ignore_patterns("run-secret"))
        (tree / "base" / "run-secret").write_text("0123456789abcdef" * 4 + "\n")
    if edit:
        edit(tree)
    done = subprocess.run([kubectl, "kustomize", str(tree / run)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def by_kind(objects: list[dict], kind: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def _env(container: dict) -> dict[str, dict]:
    return {e["name"]: e for e in container.get("env", [])}


def problems(objects: list[dict], run: str) -> list[str]:
    """What in a rendered run breaks it on a cluster: each a sentence naming the object."""
    algorithm, scaled, fixed, _ = RUNS[run]
    out: list[str] = []
    secrets, maps, claims = (
        by_kind(objects, "Secret"),
        by_kind(objects, "ConfigMap"),
        by_kind(objects, "PersistentVolumeClaim"),
    )
    brokers = by_kind(objects, "RabbitmqCluster")
    sets, jobs = by_kind(objects, "StatefulSet"), by_kind(objects, "Job")
    if list(brokers) != ["rabbitmq"]:
        out.append(f"RabbitmqClusters {sorted(brokers)}: the run needs exactly one, named rabbitmq")
    if list(jobs) != ["monitor"]:
        return [*out, f"Jobs {sorted(jobs)}: the run needs exactly one, the monitor"]
    job = jobs["monitor"]
    pods = {"Job monitor": job["spec"]["template"]["spec"]}
    pods |= {f"StatefulSet {n}": s["spec"]["template"]["spec"] for n, s in sets.items()}
    for where, pod in pods.items():
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for c in pod["containers"]:
            env, mounts = _env(c), {m["mountPath"]: m for m in c.get("volumeMounts", [])}
            # the run's secret: a file of a mounted Secret that exists, never the value in the manifest
            path = env.get("MUTEXLAB_RUN_SECRET_FILE", {}).get("value", "")
            mount = mounts.get(str(Path(path).parent))
            source = volumes.get(mount["name"], {}).get("secret", {}) if mount else {}
            name = source.get("secretName")
            if "MUTEXLAB_RUN_SECRET" in env:
                out.append(
                    f"{where}: MUTEXLAB_RUN_SECRET in the manifest (the secret must come from a Secret)"
                )
            if not name:
                out.append(f"{where}: MUTEXLAB_RUN_SECRET_FILE {path!r} is on no mounted Secret")
            elif name not in secrets:
                out.append(f"{where}: mounts Secret {name}, which the run does not have")
            elif SECRET_KEY not in secrets[name].get("data", {}) or Path(path).name != SECRET_KEY:
                out.append(f"{where}: Secret {name} has no key {SECRET_KEY!r} at {path!r}")
            # the broker: the operator's Service and default user
            url = env.get("AMQP_URL", {}).get("value", "")
            if urlsplit(url).hostname not in brokers:
                out.append(f"{where}: AMQP_URL {url!r} names no RabbitmqCluster of the run")
            for var, key in (("BROKER_USER", "username"), ("BROKER_PASSWORD", "password")):
                ref = env.get(var, {}).get("valueFrom", {}).get("secretKeyRef", {})
                if f"$({var})" not in url or ref != {"name": "rabbitmq-default-user", "key": key}:
                    out.append(f"{where}: AMQP_URL does not take {key} from rabbitmq-default-user")
            # RUN_ID and ALGORITHM from the run's ConfigMap, the same for every container
            if where != "Job monitor":
                for var in ("RUN_ID", "ALGORITHM", "QUEUE_TYPE"):
                    ref = env.get(var, {}).get("valueFrom", {}).get("configMapKeyRef", {})
                    if ref.get("name") not in maps or ref.get("key") != var:
                        out.append(f"{where}: {var} is not from the run's ConfigMap")
        # nothing shared between participants: they mount Secrets only
        if where != "Job monitor":
            shared = [n for n, v in volumes.items() if "secret" not in v]
            if shared:
                out.append(f"{where}: mounts volumes {shared} (participants share nothing but the broker)")
    # the monitor: its settings, P = the replicas, its verdict = the Job's outcome, its trace
    (monitor,) = job["spec"]["template"]["spec"]["containers"]
    menv = _env(monitor)
    from_maps = [e["configMapRef"]["name"] for e in monitor.get("envFrom", []) if "configMapRef" in e]
    settings = {k: v for n in from_maps for k, v in maps.get(n, {}).get("data", {}).items()}
    if settings.get("ALGORITHM") != algorithm or not settings.get("RUN_ID"):
        out.append(
            f"Job monitor: ALGORITHM {settings.get('ALGORITHM')!r} and RUN_ID from no ConfigMap of the run"
        )
    if monitor.get("command", [])[-1:] != ["services/monitor/main.py"]:
        out.append("Job monitor: does not run the monitor")
    replicas = sets.get(scaled, {}).get("spec", {}).get("replicas")
    if menv.get("PROCESSES", {}).get("value") != str(replicas):
        out.append(
            f"Job monitor: PROCESSES {menv.get('PROCESSES')} is not the {scaled}s' replicas ({replicas})"
        )
    spec = job["spec"]
    if spec.get("backoffLimit") != 0 or spec["template"]["spec"].get("restartPolicy") != "Never":
        out.append(
            "Job monitor: retried (backoffLimit 0 and restartPolicy Never make its exit status the verdict)"
        )
    if "podFailurePolicy" in spec:
        out.append("Job monitor: a podFailurePolicy could ignore the verdict's exit status")
    trace = settings.get("TRACE", "")
    mounts = {m["mountPath"]: m["name"] for m in monitor.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in spec["template"]["spec"].get("volumes", [])}
    claim = volumes.get(mounts.get(str(Path(trace).parent), ""), {}).get("persistentVolumeClaim", {})
    if claim.get("claimName") not in claims:
        out.append(f"Job monitor: its TRACE {trace!r} is on no PersistentVolumeClaim of the run")
    # ids from the pods' names: STABLE_NAME from metadata.name; ordinals from 1 give <role>-1..P
    for name in (scaled, *fixed):
        sts = sets.get(name)
        if sts is None:
            out.append(f"no StatefulSet {name}")
            continue
        (c,) = sts["spec"]["template"]["spec"]["containers"]
        if c.get("command", [])[-1:] != [f"services/{name}/main.py"]:
            out.append(f"StatefulSet {name}: does not run services/{name}/main.py")
        field = _env(c).get("STABLE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        if field != "metadata.name":
            out.append(f"StatefulSet {name}: STABLE_NAME is not the pod's name (metadata.name)")
        if name in fixed and sts["spec"].get("replicas") != 1:
            out.append(f"StatefulSet {name}: a fixed role runs once")
    return out


def pod_names(sts: dict) -> list[str]:
    """The pods a StatefulSet makes: <name>-<ordinal>, ordinals from spec.ordinals.start (else 0)."""
    start = sts["spec"].get("ordinals", {}).get("start", 0)
    return [f"{sts['metadata']['name']}-{start + i}" for i in range(sts["spec"].get("replicas", 1))]


@pytest.fixture(scope="module", params=sorted(RUNS))
def rendered(request, tmp_path_factory) -> tuple[str, list[dict]]:
    return request.param, render(tmp_path_factory.mktemp(request.param), request.param)


def test_the_rendered_objects_validate_against_the_kubernetes_schemas(rendered):
    run, objects = rendered
    kinds = set()
    for obj in objects:
        if obj["kind"] == "RabbitmqCluster":
            continue  # a CRD: not in the Kubernetes API schemas (test_the_broker_... below)
        for version in VERSIONS:
            kv.validate(obj, version, strict=True)
        kinds.add(obj["kind"])
    assert {"StatefulSet", "Job", "Secret", "ConfigMap", "PersistentVolumeClaim", "Service"} <= kinds


def test_the_schemas_catch_a_planted_mistake(rendered):
    run, objects = rendered
    sts = copy.deepcopy(next(o for o in objects if o["kind"] == "StatefulSet"))
    sts["spec"]["replicas"] = "five"
    with pytest.raises(kv.ValidationError):
        kv.validate(sts, VERSIONS[0], strict=True)
    job = copy.deepcopy(next(o for o in objects if o["kind"] == "Job"))
    job["spec"]["template"]["spec"]["containers"][0]["envFrm"] = []  # a misspelt field: strict refuses it
    with pytest.raises(kv.ValidationError):
        kv.validate(job, VERSIONS[0], strict=True)


def test_the_rendered_objects_carry_what_the_run_needs(rendered):
    run, objects = rendered
    assert problems(objects, run) == []


def test_the_pods_names_give_exactly_the_runs_protocol_names(rendered):
    """What the participants will ask for (membership.wanted_name of each pod's name) is every
    name of the scaled role the monitor's setup has, once each."""
    run, objects = rendered
    algorithm, scaled, _, p = RUNS[run]
    sts = by_kind(objects, "StatefulSet")[scaled]
    wanted = [wanted_name(scaled, pod) for pod in pod_names(sts)]
    names = sorted(n for n in build_setup(algorithm, p, {}, 0).names.values() if role_of(n) == scaled)
    assert sorted(wanted) == names and len(set(wanted)) == p


def test_replicas_are_p_for_the_monitor_too(tmp_path):
    def scale(tree: Path) -> None:
        k = tree / "classic" / "kustomization.yaml"
        k.write_text(k.read_text().replace("count: 5", "count: 7"))

    objects = render(tmp_path, "classic", scale)
    assert by_kind(objects, "StatefulSet")["node"]["spec"]["replicas"] == 7
    assert problems(objects, "classic") == []
    (monitor,) = by_kind(objects, "Job")["monitor"]["spec"]["template"]["spec"]["containers"]
    assert _env(monitor)["PROCESSES"]["value"] == "7"


def test_the_three_brokers_component_makes_every_queue_quorum(tmp_path):
    def three(tree: Path) -> None:
        k = tree / "elves" / "kustomization.yaml"
        k.write_text(k.read_text() + "components: [../components/three-brokers]\n")

    objects = render(tmp_path, "elves", three)
    assert problems(objects, "elves") == []
    assert by_kind(objects, "RabbitmqCluster")["rabbitmq"]["spec"]["replicas"] == 3
    (run_map,) = by_kind(objects, "ConfigMap").values()
    assert run_map["data"]["QUEUE_TYPE"] == "quorum" and run_map["data"]["ALGORITHM"] == "elves"


def test_a_planted_missing_secret_is_caught(tmp_path):
    """The run's Secret left out of the base (its generator deleted): every container is named."""

    def drop_secret(tree: Path) -> None:
        k = tree / "base" / "kustomization.yaml"
        text = k.read_text()
        k.write_text(text[: text.index("secretGenerator:")])

    found = problems(render(tmp_path, "bees", drop_secret), "bees")
    assert "Job monitor: mounts Secret run-secret, which the run does not have" in found
    assert "StatefulSet bee: mounts Secret run-secret, which the run does not have" in found


def test_the_check_catches_planted_breakage(rendered):
    run, good = rendered
    _, scaled, _, _ = RUNS[run]

    def pod(objs, kind, name):
        return by_kind(objs, kind)[name]["spec"]["template"]["spec"]

    def container(objs, kind, name):
        return pod(objs, kind, name)["containers"][0]

    def set_env(objs, kind, name, var, entry):
        c = container(objs, kind, name)
        c["env"] = [e for e in c["env"] if e["name"] != var] + ([{"name": var, **entry}] if entry else [])

    cases = {
        "the secret in plain text": (
            lambda o: set_env(o, "StatefulSet", scaled, "MUTEXLAB_RUN_SECRET", {"value": "x" * 32}),
            f"StatefulSet {scaled}: MUTEXLAB_RUN_SECRET in the manifest",
        ),
        "the secret not mounted": (
            lambda o: container(o, "StatefulSet", scaled).pop("volumeMounts"),
            f"StatefulSet {scaled}: MUTEXLAB_RUN_SECRET_FILE",
        ),
        "another broker": (
            lambda o: set_env(o, "Job", "monitor", "AMQP_URL", {"value": "amqp://u:p@elsewhere:5672/"}),
            "Job monitor: AMQP_URL 'amqp://u:p@elsewhere:5672/' names no RabbitmqCluster",
        ),
        "ids not from the pod's name": (
            lambda o: set_env(o, "StatefulSet", scaled, "STABLE_NAME", None),
            f"StatefulSet {scaled}: STABLE_NAME is not the pod's name",
        ),
        "P unlike the replicas": (
            lambda o: by_kind(
                o,
                "StatefulSet",
            )[scaled]["spec"].__setitem__("replicas", 9),
            "Job monitor: PROCESSES",
        ),
        "a retried monitor": (
            lambda o: by_kind(o, "Job")["monitor"]["spec"].__setitem__("backoffLimit", 3),
            "Job monitor: retried",
        ),
        "a shared volume": (
            lambda o: pod(o, "StatefulSet", scaled)["volumes"].append(
                {"name": "traces", "persistentVolumeClaim": {"claimName": "traces"}}
            ),
            f"StatefulSet {scaled}: mounts volumes ['traces']",
        ),
        "no broker": (lambda o: o.remove(by_kind(o, "RabbitmqCluster")["rabbitmq"]), "RabbitmqClusters []"),
    }
    for what, (plant, said) in cases.items():
        broken = copy.deepcopy(good)
        plant(broken)
        found = problems(broken, run)
        assert any(said in p for p in found), (what, found)


def strict_errors(schema: dict, value, where: str = "") -> list[str]:
    """Fields the CRD's schema does not declare (its structural schema allows none it does not list,
    unless it says x-kubernetes-preserve-unknown-fields), walked beside jsonschema's own checks."""
    if not isinstance(value, dict) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return []
    props = schema.get("properties")
    if props is None:
        extra = schema.get("additionalProperties")
        return (
            [e for k, v in value.items() for e in strict_errors(extra, v, f"{where}.{k}")]
            if isinstance(extra, dict)
            else []
        )
    out = [f"{where}.{k}: not in the schema" for k in value if k not in props and where]
    return out + [
        e for k, v in value.items() if k in props for e in strict_errors(props[k], v, f"{where}.{k}")
    ]


def test_the_broker_against_the_operators_published_crd(rendered):
    """The RabbitmqCluster against the RabbitMQ Cluster Operator's published CRD
    (config/crd/bases/rabbitmq.com_rabbitmqclusters.yaml of its repository), when
    MUTEXLAB_RABBITMQ_CRD names a copy: no registry reachable here ships it, and the project does
    not carry another project's file (docs/kubernetes.md#validating-offline)."""
    path = os.environ.get("MUTEXLAB_RABBITMQ_CRD")
    if not path:
        pytest.skip(
            "MUTEXLAB_RABBITMQ_CRD unset: the operator's CRD is in no package registry (docs/kubernetes.md)"
        )
    crd = yaml.safe_load(Path(path).read_text())
    run, objects = rendered
    (broker,) = by_kind(objects, "RabbitmqCluster").values()
    version = broker["apiVersion"].split("/")[1]
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == version)["schema"]["openAPIV3Schema"]
    validator = jsonschema.Draft4Validator(schema)
    assert [e.message for e in validator.iter_errors(broker)] == []
    assert strict_errors(schema, {k: broker[k] for k in ("spec",)}) == []
    planted = copy.deepcopy(broker)
    planted["spec"]["replicas"] = "one"
    planted["spec"]["rabbitmq"]["additionalConfg"] = "x"
    assert any("'one' is not of type 'integer'" in e.message for e in validator.iter_errors(planted))
    assert strict_errors(schema, {"spec": planted["spec"]}) == [
        ".spec.rabbitmq.additionalConfg: not in the schema"
    ]


def test_the_trace_reader_mounts_the_monitors_trace_volume_read_only(rendered):
    run, objects = rendered
    reader = yaml.safe_load((K8S / "trace-reader.yaml").read_text())
    for version in VERSIONS:
        kv.validate(reader, version, strict=True)
    (volume,) = reader["spec"]["volumes"]
    assert volume["persistentVolumeClaim"] == {"claimName": "traces", "readOnly": True}
    assert "traces" in by_kind(objects, "PersistentVolumeClaim")
    job = by_kind(objects, "Job")["monitor"]["spec"]["template"]["spec"]
    assert {"name": "traces", "persistentVolumeClaim": {"claimName": "traces"}} in job["volumes"]
