#!/usr/bin/env bash
# swarm-check.sh — run the swarm stacks for real, as docs/swarm.md tells a user to, and judge them.
#
#   bash scripts/swarm-check.sh                        # bees, elves, classic (Ricart–Agrawala)
#   SWARM_CHECK_RUNS=bees bash scripts/swarm-check.sh  # some of them (bees elves classic)
#
# Needs a Docker engine (docker info). When the engine is not in a swarm, the script makes it a
# one-node swarm (`docker swarm init --advertise-addr 127.0.0.1`: nothing listens beyond the
# machine) and leaves it at the end (`docker swarm leave --force`, and the docker_gwbridge network
# swarm created, when it was not there before): the engine ends as it was found. An engine already
# in a swarm is used as it is (it must be a manager) and left in it.
# It builds the image (`docker build -t mutexlab .`; SWARM_CHECK_IMAGE names another tag), then for
# each run: a fresh secret in a file of its own (mode 600, removed at the end), `docker stack deploy
# --resolve-image never -c deploy/swarm/broker.yml -c deploy/swarm/<run>.yml <stack>`, a wait for
# the monitor's task to end, and the judgement. A run passes when the monitor's task exited 0, its
# log says "<algorithm>: SAFE" for a complete run of the expected number of participants, each
# participant was admitted under the name its task slot gives it (STABLE_NAME: bee-N), no service
# of the stack mounts a volume (nothing shared between participants: the secret is a Docker secret),
# the trace copied out of the monitor's container (`docker cp`, as the docs show) passes `mutexlab
# verify` inside the image, and after `docker stack rm` no container, network, secret or volume of
# the stack is left. Stacks are named <prefix>-<run> (SWARM_CHECK_PREFIX, default mutexlab-check);
# the script refuses to start when a stack of that name exists.
# Exit 0 when every run passed, 1 when one failed, 2 when something it needs is missing.
set -uo pipefail
cd "$(dirname "$0")/.."

RUNS=${SWARM_CHECK_RUNS:-bees elves classic}
IMAGE=${SWARM_CHECK_IMAGE:-mutexlab:latest}
PREFIX=${SWARM_CHECK_PREFIX:-mutexlab-check}
RUN_TIMEOUT=${SWARM_CHECK_TIMEOUT:-300}   # seconds for the monitor's task to end, broker start included

die() { echo "swarm-check: $*" >&2; exit 2; }
# a misspelt name would otherwise run nothing and pass
[ -n "${RUNS// /}" ] || die "SWARM_CHECK_RUNS names no run (bees elves classic)"
for run in $RUNS; do
  case $run in bees | elves | classic) ;; *) die "SWARM_CHECK_RUNS: no run named '$run' (bees elves classic)" ;; esac
done
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info); start one first"
[ -f deploy/swarm/broker.yml ] || die "run from a mutexlab checkout"

work=$(mktemp -d -t mutexlab-swarm-check.XXXXXX)
swarm_state=$(docker info --format '{{.Swarm.LocalNodeState}}')
made_swarm=""          # set when this script made the swarm (then it leaves it)
had_gwbridge=""        # docker_gwbridge existed before (then it stays)
current=""             # the stack in progress, for the trap
docker network inspect docker_gwbridge >/dev/null 2>&1 && had_gwbridge=1

# stack_objects STACK: what of the stack is left (containers, networks, secrets, services), one a line
stack_objects() {
  local label="label=com.docker.stack.namespace=$1"
  docker ps -aq --filter "$label" | sed 's/^/container /'
  docker network ls -q --filter "$label" | sed 's/^/network /'
  docker secret ls -q --filter "$label" 2>/dev/null | sed 's/^/secret /'
  docker service ls -q --filter "$label" 2>/dev/null | sed 's/^/service /'
}
# remove STACK: docker stack rm, then wait (up to 60 s) until nothing of it is left
remove() {
  docker stack rm "$1" >"$work/rm.log" 2>&1 || { echo "  stack rm failed:"; cat "$work/rm.log"; }
  for _ in $(seq 1 60); do [ -z "$(stack_objects "$1")" ] && return 0; sleep 1; done
  return 1
}
finish() {
  [ -z "$current" ] || remove "$current"
  if [ -n "$made_swarm" ]; then
    docker swarm leave --force >/dev/null 2>&1 || echo "swarm-check: docker swarm leave --force failed"
    [ -n "$had_gwbridge" ] || docker network rm docker_gwbridge >/dev/null 2>&1
  fi
  rm -rf "$work"
}
trap finish EXIT
trap 'echo "swarm-check: interrupted"; exit 130' INT TERM

case $swarm_state in
  inactive)
    docker swarm init --advertise-addr 127.0.0.1 >"$work/init.log" 2>&1 \
      || { cat "$work/init.log"; die "docker swarm init --advertise-addr 127.0.0.1 failed"; }
    made_swarm=1
    echo "== one-node swarm made (docker swarm init --advertise-addr 127.0.0.1); left at the end" ;;
  active)
    [ "$(docker info --format '{{.Swarm.ControlAvailable}}')" = true ] \
      || die "this engine is a swarm worker: run the check on a manager"
    echo "== the engine is already a swarm manager: used as it is, left in its swarm" ;;
  *) die "the engine's swarm is '$swarm_state': neither inactive nor active" ;;
esac
for run in $RUNS; do
  [ -z "$(stack_objects "$PREFIX-$run")" ] || die "stack $PREFIX-$run exists already; remove it (docker stack rm) \
or set SWARM_CHECK_PREFIX"
done

t0=$SECONDS
docker build -t "$IMAGE" . >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; die "docker build failed"; }
echo "== image $IMAGE built (${SECONDS}s)"

results=()
failed=0

# one_run RUN ALGORITHM COUNT-VARIABLE COUNT ROLE TRACE SERVICE: deploy, wait, judge, remove.
# ROLE: how the monitor's summary counts the participants ("5 bees": bee); SERVICE: the scaled one.
one_run() {
  local run=$1 algorithm=$2 count_var=$3 count=$4 role=$5 trace=$6 service=$7
  case " $RUNS " in *" $run "*) ;; *) return 0 ;; esac
  local stack=$PREFIX-$run t0=$SECONDS ok=1 verdict="" task="" state="" code="" container
  echo; echo "== $run: $count_var=$count docker stack deploy --resolve-image never -c deploy/swarm/broker.yml -c deploy/swarm/$run.yml $stack"
  (umask 077 && python3 -c 'import secrets; print(secrets.token_hex(32))' >"$work/$run.secret")
  current=$stack
  if ! env "$count_var=$count" RUN_SECRET_FILE="$work/$run.secret" MUTEXLAB_IMAGE="$IMAGE" \
      docker stack deploy --resolve-image never -c deploy/swarm/broker.yml -c "deploy/swarm/$run.yml" "$stack" \
      >"$work/deploy.log" 2>&1; then
    cat "$work/deploy.log"; ok=0; verdict="deploy failed"
  fi
  # The monitor's task: wait until it has ended (complete, failed, rejected, shutdown).
  local i
  for i in $(seq 1 "$RUN_TIMEOUT"); do
    task=$(docker service ps -q --no-trunc "${stack}_monitor" 2>/dev/null | head -1)
    [ -n "$task" ] && state=$(docker inspect --format '{{.Status.State}}' "$task" 2>/dev/null)
    case $state in complete|failed|rejected|shutdown|orphaned) break ;; esac
    sleep 1
  done
  local t_run=$((SECONDS - t0))
  code=$(docker inspect --format '{{.Status.ContainerStatus.ExitCode}}' "$task" 2>/dev/null)
  container=$(docker inspect --format '{{.Status.ContainerStatus.ContainerID}}' "$task" 2>/dev/null)
  verdict+="monitor task ${state:-none} (exit ${code:-?})"
  [ "$state" = complete ] && [ "$code" = 0 ] || ok=0
  docker service logs --raw "${stack}_monitor" >"$work/monitor.log" 2>&1
  local summary
  summary=$(sed -n 's/^.* over RabbitMQ, run [^:]*: \(.*\) — complete$/\1/p' "$work/monitor.log" | head -1)
  if grep -qx "$algorithm: SAFE" "$work/monitor.log" && [ -n "$summary" ]; then
    verdict+=", monitor SAFE complete ($summary)"
    case " $summary" in *" $count $role"*) ;; *) verdict+=", expected $count $role(s)"; ok=0 ;; esac
  else
    verdict+=", monitor: $(grep -E "^$algorithm: |— " "$work/monitor.log" | tr '\n' ';' || true)"; ok=0
  fi
  # Ids from the orchestrator's names: the participant in task slot N was admitted as <role>-N
  # (STABLE_NAME; docker service logs prefixes each line with the task's <service>.<slot>.<id>).
  local pairs named wrong
  docker service logs --no-trunc "${stack}_$service" >"$work/participants.log" 2>&1
  pairs=$(sed -n "s/^${stack}_$service\.\([0-9]*\)\.[^|]*|.*: admitted as $service-\([0-9]*\) .*/\1 \2/p" \
    "$work/participants.log")   # "<slot> <n>" for each "admitted as <service>-<n>"
  named=$(printf '%s' "$pairs" | grep -c .)
  wrong=$(printf '%s\n' "$pairs" | awk 'NF && $1 != $2' | tr '\n' ';')
  if [ "$named" -eq "$count" ] && [ -z "$wrong" ]; then
    verdict+=", each $service named by its task slot"
  else
    verdict+=", $named of $count ${service}s admitted; slot and name differ: ${wrong:-none}"; ok=0
  fi
  # Nothing shared between participants: no service of the stack mounts a volume.
  local mounts
  mounts=$(docker service ls -q --filter "label=com.docker.stack.namespace=$stack" \
    | xargs -r docker service inspect --format '{{.Spec.Name}}: {{len .Spec.TaskTemplate.ContainerSpec.Mounts}}' \
    | grep -v ': 0$' | tr '\n' ' ')
  if [ -n "$mounts" ]; then verdict+=", services with mounts: $mounts"; ok=0; else verdict+=", no volume mounted"; fi
  # The broker's own anonymous volume (the image's VOLUME): it must go with the stack.
  local broker_volumes
  broker_volumes=$(docker ps -aq --filter "label=com.docker.swarm.service.name=${stack}_rabbitmq" \
    | xargs -r docker inspect --format '{{range .Mounts}}{{.Name}} {{end}}')
  # The trace, copied out of the monitor's container as the docs show, judged inside the image.
  if [ -n "$container" ] && docker cp "$container:$trace" "$work/trace.jsonl" 2>"$work/cp.log"; then
    verdict+=", trace copied out ($(wc -l <"$work/trace.jsonl") lines)"
    if docker run --rm -v "$work/trace.jsonl:/trace.jsonl:ro" "$IMAGE" mutexlab verify /trace.jsonl \
        >"$work/verify.log" 2>&1 && grep -q "^$algorithm: SAFE" "$work/verify.log"; then
      verdict+=", verify SAFE"
    else
      verdict+=", verify: $(head -c 200 "$work/verify.log" | tr '\n' ' ')"; ok=0
    fi
  else
    verdict+=", trace NOT copied out: $(head -c 200 "$work/cp.log" | tr '\n' ' ')"; ok=0
  fi
  if [ "$ok" -ne 1 ]; then
    echo "-- the monitor's last lines:"; tail -30 "$work/monitor.log"
    docker service ps --no-trunc "$stack" 2>/dev/null | head -20
  fi
  local t_rm=$SECONDS left=""
  remove "$stack" || left=$(stack_objects "$stack" | tr '\n' ' ')
  current=""
  for v in $broker_volumes; do docker volume inspect "$v" >/dev/null 2>&1 && left+="volume $v "; done
  t_rm=$((SECONDS - t_rm))
  if [ -n "$left" ]; then verdict+=", LEFT after docker stack rm: $left"; ok=0; else verdict+=", removed cleanly"; fi
  [ "$ok" -eq 1 ] || failed=1
  local line
  line=$(printf '%-8s %5ss  %s' "$run" $((SECONDS - t0)) \
    "$([ "$ok" -eq 1 ] && echo PASS || echo FAIL): $verdict; run ${t_run}s, rm ${t_rm}s")
  results+=("$line")
  echo "== $line"
}

one_run bees bees BEES 5 bee /traces/bees.jsonl bee
one_run elves elves ELVES 4 el /traces/elves.jsonl elf
one_run classic ricart-agrawala NODES 5 node /traces/classic.jsonl node

echo; echo "== swarm-check summary (${SECONDS}s in all)"
printf '%s\n' "${results[@]}"
exit $failed
