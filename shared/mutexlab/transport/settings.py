"""Service configuration from the environment (pydantic-settings).

Every service needs ``AMQP_URL`` and ``RUN_ID``; nothing has a default credential. The
participants (every role) need nothing else: the monitor tells them the algorithm,
P, the options, the seed and the dwell times when it admits them (membership.py). The monitor
carries the run's configuration. A participant loads a ``.py`` file only when its own
``ALGORITHM`` names it (the monitor's welcome must then name the same algorithm).

Environment variables (all validated before a service touches the broker):

| variable | who | meaning |
|---|---|---|
| ``AMQP_URL`` | all | broker URL, e.g. ``amqp://user:pass@rabbitmq:5672/%2F`` (required); a cluster's nodes comma-separated |
| ``SKIP_UNRESOLVED_NODES`` | all | ``true``: leave out the nodes of ``AMQP_URL`` whose host name does not resolve (compose: the cluster's peers when the ``cluster`` profile is off); the queue type is still decided on the whole list, and ``DELIVERY=transient`` is refused when more than one node resolves (a cluster) |
| ``QUEUE_TYPE`` | all | ``classic``, ``quorum`` or ``auto`` (default: quorum when ``AMQP_URL`` names several nodes; classic with ``DELIVERY=transient``) |
| ``DELIVERY`` | all | ``persistent`` (default: durable queues, persistent messages, acks behind confirms; survives a broker restart) or ``transient`` (no disk, end-to-end retransmission; does not survive a broker restart: docs/wire.md#delivery-modes); the same for every process of the run |
| ``RUN_ID`` | all | letters, digits, ``_`` and ``-``; names the run's exchange and queues (required) |
| ``MUTEXLAB_RUN_SECRET`` | all | the run's secret (≥ 16 characters): every message is signed and checked with it (``auth.py``); the same for every process of the run |
| ``MUTEXLAB_RUN_SECRET_FILE`` | all | without ``MUTEXLAB_RUN_SECRET``: a file holding it (a swarm's or Kubernetes' mounted secret), read, never created |
| ``ALGORITHM`` | monitor | ``bees``, ``elves``, a classic algorithm (``ricart-agrawala`` ...), a dotted module or a ``.py`` file declaring ``SPEC`` |
| ``ALGORITHM`` | participants | optional: the algorithm they take part in; a ``.py`` file must be named here to be loaded (the same path as the monitor's) |
| ``PROCESSES`` | monitor | P (bees, elves or nodes); 0 = discover: P is whoever joined in the join window |
| ``OPTIONS`` | monitor | JSON object of algorithm options, e.g. ``{"flowers": 2, "reeds": 2}`` |
| ``SEED`` | monitor | seed given to ``make_setup`` (random initial clocks ...) |
| ``DWELL`` | all | seconds every dwell kind lasts (monitor: for everyone; participant: override) |
| ``DWELL_TIMES`` | all | JSON object ``{kind: seconds}`` overriding ``DWELL`` per kind |
| ``JOIN_WINDOW`` | monitor | discovery: the roster closes after this many quiet seconds (again from a reconnect) |
| ``JOIN_TIMEOUT`` | all | give up when the roster is not complete after this many seconds |
| ``STALL_TIMEOUT`` | monitor | no trace event for this long while unfinished: the run stalled |
| ``STABLE_NAME`` | participants | a name its orchestrator gives it, ending in ``-<n>`` (a StatefulSet's pod name, ``bee-3``; a swarm task's slot): it asks to be ``<role>-<n>``, and is when the run has that name (membership.py) |
| ``HEARTBEAT`` | participants | seconds between status heartbeats to the monitor |
| ``TRACE_FLUSH`` | participants | seconds a trace event waits at most for its batch to the monitor (default 0.25; 0: a batch per step) |
| ``LINGER`` | participants | seconds to stay idle after the stop (or a refusal) before exiting (compose: 60) |
| ``MONITOR_TIMEOUT`` | participants | give up (exit 3) when the run's monitor has not been consuming for this long (looked at every tenth of it, never more often than every ``HEARTBEAT``) |
| ``TRACE`` | monitor | write the trace (JSON Lines) to this path |
| ``SUMMARY_JSON`` | monitor | also write the verdict and summary as JSON to this path |
| ``CLEANUP`` | monitor | delete the run's exchanges and queues at the end (default true) |
| ``QUEUE_EXPIRES`` | all | seconds a run's queue outlives its last use (``x-expires``; the monitor renews them while it lives), default 300; 0: never; the same for every process of the run |
| ``MUTEXLAB_PARENT_PID`` | all | set by ``mutexlab run``: the service ends when this process (its parent) is gone (spawn.py) |
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ..bus.auth import check_secret, file_secret
from ..bus.broker import QUEUE_EXPIRES, node_urls
from ..limits import InputError, unique_keys
from ..setups import ConfigError

RUN_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def check_run_id(value: str) -> str:
    if not RUN_ID.match(value):
        raise ValueError(f"run id must be 1–64 letters, digits, '_' or '-', got {value!r}")
    return value


def check_url(value: str) -> str:
    """``value`` checked (``node_urls``) and written without blanks: ``url[,url...]``."""
    return ",".join(node_urls(value))


QUEUE_TYPES = ("auto", "classic", "quorum")
DELIVERIES = ("persistent", "transient")


def queue_kind(url: str, queue_type: str = "auto", delivery: str = "persistent") -> str:
    """The queue type a run's queues are declared with: ``classic`` or ``quorum`` as asked; ``auto``
    is quorum when ``url`` names several nodes (a cluster: docs/cluster.md), else classic. Transient
    delivery keeps nothing on disk: its queues are classic (a quorum queue is always durable), on
    one node: a cluster is refused, as its point (surviving a node's loss) is what transient lacks."""
    if queue_type not in QUEUE_TYPES:
        raise ValueError(f"QUEUE_TYPE must be one of {', '.join(QUEUE_TYPES)}, got {queue_type!r}")
    if delivery not in DELIVERIES:
        raise ValueError(f"DELIVERY must be one of {', '.join(DELIVERIES)}, got {delivery!r}")
    if delivery == "transient":
        if queue_type == "quorum":
            raise ValueError("QUEUE_TYPE=quorum needs DELIVERY=persistent (a quorum queue is always durable)")
        if len(node_urls(url)) > 1:
            raise ValueError(
                "DELIVERY=transient runs on one broker node; a cluster (several nodes in AMQP_URL) "
                "needs DELIVERY=persistent to survive a node's loss"
            )
        return "classic"
    if queue_type != "auto":
        return queue_type
    return "quorum" if len(node_urls(url)) > 1 else "classic"


def json_object(value: Any) -> dict:
    """``value`` as a dict: a dict as is, a string parsed as a JSON object (empty: {}); anything
    else is refused with a message quoting the value (load() prefixes the variable's name), so a
    mangled variable shows what arrived."""
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            parsed = json.loads(value, object_pairs_hook=unique_keys)
        except InputError as exc:
            raise ValueError(f"{exc}: {value!r}") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON ({exc}): {value!r}") from None
        if not isinstance(parsed, dict):
            raise ValueError(f"must be a JSON object, got {value!r}")
        return parsed
    if not isinstance(value, dict):
        raise ValueError(f"must be a JSON object, got {value!r}")
    return value


def check_dwell_times(value: Any) -> dict[str, float]:
    value = json_object(value)
    out = {}
    for kind, seconds in value.items():
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0:
            raise ValueError(f"dwell time of {kind!r} must be a number of seconds ≥ 0, got {seconds!r}")
        out[str(kind)] = float(seconds)
    return out


class _Common(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="", case_sensitive=False, extra="ignore", env_ignore_empty=True
    )

    amqp_url: str
    run_id: str
    queue_type: Literal["auto", "classic", "quorum"] = "auto"
    delivery: Literal["persistent", "transient"] = "persistent"
    dwell: float | None = Field(default=None, ge=0)
    # NoDecode: the validator below parses the JSON, so a bad value is reported with the value itself.
    dwell_times: Annotated[dict[str, float], NoDecode] = Field(default_factory=dict)
    join_timeout: float = Field(default=120.0, gt=0)
    queue_expires: float = Field(default=QUEUE_EXPIRES, ge=0, le=86400 * 365)
    log_level: str = "INFO"
    skip_unresolved_nodes: bool = False
    mutexlab_run_secret: SecretStr | None = None
    mutexlab_run_secret_file: str | None = None
    _secret: str = PrivateAttr(default="")

    @model_validator(mode="after")
    def _run_secret(self):
        """Every process of a run signs and checks its messages with the run's secret: required."""
        given = self.mutexlab_run_secret.get_secret_value() if self.mutexlab_run_secret else ""
        if given:  # (empty: unset, as compose passes an unset variable on)
            self._secret = check_secret(given)
        elif self.mutexlab_run_secret_file:
            try:
                self._secret = file_secret(self.mutexlab_run_secret_file)
            except OSError as exc:
                raise ValueError(f"MUTEXLAB_RUN_SECRET_FILE: cannot read it: {exc}") from None
        else:
            raise ValueError(
                "no run secret: set MUTEXLAB_RUN_SECRET (the same for every process of the run) "
                "or MUTEXLAB_RUN_SECRET_FILE (docs/rabbitmq.md#authenticated-runs)"
            )
        return self

    @property
    def run_secret(self) -> str:
        """The run's secret: every message is signed and checked with it (auth.py)."""
        return self._secret

    @field_validator("amqp_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_url(value)

    @property
    def queue_kind(self) -> str:
        """``classic`` or ``quorum``: ``QUEUE_TYPE`` with ``auto`` decided (``queue_kind()``)."""
        return queue_kind(self.amqp_url, self.queue_type, self.delivery)

    @model_validator(mode="after")
    def _delivery(self):
        url = self.amqp_url
        if self.delivery == "transient" and self.skip_unresolved_nodes:
            url = node_urls(url)[0]  # the nodes are counted once the unresolved ones are left out
        queue_kind(url, self.queue_type, self.delivery)  # quorum with transient, a cluster: refused
        return self

    @field_validator("run_id")
    @classmethod
    def _run(cls, value: str) -> str:
        return check_run_id(value)

    @field_validator("dwell_times", mode="before")
    @classmethod
    def _dwell(cls, value: Any) -> dict[str, float]:
        return check_dwell_times(value)


class ParticipantSettings(_Common):
    algorithm: str | None = None  # what this participant may take part in (a file: loaded up front)
    stable_name: str | None = None  # the orchestrator's name for it: asks for <role>-<n>
    heartbeat: float = Field(default=1.0, gt=0)
    # seconds a trace event waits at most before its batch goes to the monitor (tracing.py); 0: every step
    trace_flush: float = Field(default=0.25, ge=0)
    linger: float = Field(default=0.0, ge=0)
    monitor_timeout: float = Field(default=60.0, gt=0)
    # DIRECTED: the director of ``mutexlab replay --over-rabbitmq`` decides when this process starts
    # and acts, and carries every protocol message to it (directed.py); no timer fires.
    directed: bool = False

    @field_validator("stable_name")
    @classmethod
    def _stable_name(cls, value: str | None) -> str | None:
        from .membership import wanted_name

        wanted_name("participant", value)  # refused unless it ends in -<n>
        return value


class MonitorSettings(_Common):
    algorithm: str
    processes: int = Field(default=0, ge=0)
    options: Annotated[dict[str, Any], NoDecode] = Field(default_factory=dict)
    seed: int = 0
    dwell: float | None = Field(default=0.2, ge=0)
    join_window: float = Field(default=3.0, gt=0)
    stall_timeout: float = Field(default=15.0, gt=0)
    trace: str | None = None
    summary_json: str | None = None
    cleanup: bool = True
    # DUPLICATES: the director may deliver a message twice (a scenario's ``duplicate`` steps): the
    # trace's header says so (docs/trace-format.md), so the audit takes the second receive.
    duplicates: bool = False

    @field_validator("options", mode="before")
    @classmethod
    def _options(cls, value: Any) -> Any:
        return json_object(value)


def load(cls: type[BaseSettings], **overrides: Any):
    """Read settings, turning every problem into one ConfigError naming the variables."""
    try:
        return cls(**overrides)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']).upper() or 'settings'}: "
            f"{e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        )
        raise ConfigError(f"bad configuration: {problems}") from None
    except (json.JSONDecodeError, ValueError) as exc:
        raise ConfigError(f"bad configuration: {exc}") from None


def resolvable_nodes(settings, resolves=None):
    """``settings`` with the nodes of ``AMQP_URL`` whose host name does not resolve left out (all
    kept if none resolves: the connection error then names them), and ``QUEUE_TYPE`` decided on the
    whole list first, so every process of a run declares the same queues; and the hosts left out.
    ``DELIVERY=transient`` needs one node: it is judged on the nodes that resolve (ValueError for
    several: a cluster), so compose's default profile, whose peers do not exist, runs it. Under compose a stopped container's name does not resolve: the "cluster" profile's peers are
    named for every service but exist only with that profile."""
    import socket
    from urllib.parse import urlsplit

    def default(host: str) -> bool:
        try:
            socket.getaddrinfo(host, None)
        except OSError:
            return False
        return True

    nodes = node_urls(settings.amqp_url)
    hosts = [urlsplit(n).hostname or "" for n in nodes]
    ok = [(resolves or default)(h) for h in hosts]
    if not any(ok):
        return settings, []
    kept = ",".join(n for n, good in zip(nodes, ok) if good)
    if settings.delivery == "transient":  # one node that resolves, or a cluster: refused (ValueError)
        queue_type = queue_kind(kept, settings.queue_type, settings.delivery)
    else:
        queue_type = settings.queue_kind  # on the whole list: every process of the run decides alike
    if all(ok):
        return settings, []
    update = {"amqp_url": kept, "queue_type": queue_type}
    return settings.model_copy(update=update), [h for h, good in zip(hosts, ok) if not good]
