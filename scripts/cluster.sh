#!/usr/bin/env bash
# cluster.sh — a three-node RabbitMQ cluster on this machine, for the cluster tests and for trying
# failover by hand (docs/cluster.md). It never touches the machine's own broker (5672, node rabbit@…).
#
#   bash scripts/cluster.sh start           # start three nodes and join them into one cluster
#   bash scripts/cluster.sh status          # each node: running or not, and the cluster's members
#   bash scripts/cluster.sh urls            # the AMQP_URL of the cluster (three URLs, comma-separated)
#   bash scripts/cluster.sh stop            # stop the three nodes and remove their files
#   bash scripts/cluster.sh stop-node N     # stop node N (1-3) gracefully      (failover tests)
#   bash scripts/cluster.sh kill-node N     # SIGKILL node N's Erlang VM          (failover tests)
#   bash scripts/cluster.sh start-node N    # start node N again; it rejoins the cluster
#
# Node N is "$MUTEXLAB_CLUSTER_NAME-cN@localhost" (default mutexlab-c1 … mutexlab-c3), listens for AMQP on
# 127.0.0.1:$((MUTEXLAB_CLUSTER_PORT + N - 1)) (default 5681-5683) and for Erlang distribution on that
# port + 20000 (25681-25683); no plugins (no management port). Its data, logs and pid file live in
# $MUTEXLAB_CLUSTER_DIR/cN (default ${TMPDIR:-/tmp}/mutexlab-cluster). The three share an Erlang
# cookie of their own, made at start ($MUTEXLAB_CLUSTER_DIR/cookie), not the machine broker's.
# cluster_partition_handling is pause_minority (docs/cluster.md says why). Credentials: RabbitMQ's
# guest/guest, which it accepts from localhost only.
# Exit 0 on success, 1 when a node did not start or join (its log's tail is printed), 2 on bad usage.
set -euo pipefail

NAME=${MUTEXLAB_CLUSTER_NAME:-mutexlab}
PORT=${MUTEXLAB_CLUSTER_PORT:-5681}
DIR=${MUTEXLAB_CLUSTER_DIR:-${TMPDIR:-/tmp}/$NAME-cluster}
NODES=(1 2 3)

die() { echo "cluster.sh: $1" >&2; exit "${2:-1}"; }
[[ $NAME =~ ^[A-Za-z0-9_-]+$ ]] || die "MUTEXLAB_CLUSTER_NAME must be letters, digits, '_' or '-', got '$NAME'" 2
[[ $PORT =~ ^[0-9]+$ ]] && [ "$PORT" -ge 1024 ] && [ "$PORT" -le 45000 ] \
  || die "MUTEXLAB_CLUSTER_PORT must be a port in 1024-45000, got '$PORT'" 2
for tool in rabbitmq-server rabbitmqctl; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed (apt-get install rabbitmq-server)"
done

node_name() { echo "$NAME-c$1@localhost"; }
amqp_port() { echo $((PORT + $1 - 1)); }
dist_port() { echo $((PORT + 20000 + $1 - 1)); }
check_n() { [[ ${1:-} =~ ^[123]$ ]] || die "node number must be 1, 2 or 3, got '${1:-}'" 2; }

cookie() { cat "$DIR/cookie"; }

# node_env N: the environment rabbitmq-server and rabbitmqctl need for node N (in the array ENV).
node_env() {
  local d="$DIR/c$1"
  ENV=(RABBITMQ_NODENAME="$(node_name "$1")" RABBITMQ_NODE_PORT="$(amqp_port "$1")"
    RABBITMQ_DIST_PORT="$(dist_port "$1")" RABBITMQ_CONFIG_FILE="$d/rabbitmq.conf"
    RABBITMQ_MNESIA_BASE="$d/mnesia" RABBITMQ_LOG_BASE="$d/log"
    RABBITMQ_ENABLED_PLUGINS_FILE="$d/enabled_plugins" RABBITMQ_PID_FILE="$d/node.pid"
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-setcookie $(cookie)")
}

ctl() {   # ctl N ARGS...: rabbitmqctl against node N
  local n=$1; shift
  node_env "$n"
  env "${ENV[@]}" rabbitmqctl --erlang-cookie "$(cookie)" -n "$(node_name "$n")" "$@"
}

show_log() {
  echo "--- last lines of node $1's log:" >&2
  tail -n 30 "$DIR/c$1"/log/*.log 2>/dev/null >&2 || echo "(no log)" >&2
  [ -s "$DIR/c$1/launch.out" ] && { echo "--- what rabbitmq-server said at launch:" >&2; tail -n 30 "$DIR/c$1/launch.out" >&2; }
  return 0
}

launch() {   # launch N: start node N detached (its directory must exist)
  node_env "$1"
  env "${ENV[@]}" rabbitmq-server -detached >"$DIR/c$1/launch.out" 2>&1 \
    || { show_log "$1"; die "rabbitmq-server -detached failed for $(node_name "$1")"; }
}

await() {   # await N: wait until node N's application runs (epmd registration takes a moment)
  local t0=$SECONDS
  until ctl "$1" await_startup --timeout 30 >/dev/null 2>&1; do
    [ $((SECONDS - t0)) -lt "${MUTEXLAB_CLUSTER_TIMEOUT:-180}" ] || { show_log "$1"; die "node $(node_name "$1") did not start"; }
    sleep 1
  done
}

start() {
  if [ -f "$DIR/cookie" ]; then
    die "$DIR already holds a cluster (running or left over): bash scripts/cluster.sh stop first"
  fi
  for n in "${NODES[@]}"; do
    for port in "$(amqp_port "$n")" "$(dist_port "$n")"; do
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        die "port $port is taken; choose other ports with MUTEXLAB_CLUSTER_PORT"
      fi
    done
  done
  mkdir -p "$DIR"
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr 'a-f' 'A-F' >"$DIR/cookie"
  chmod 600 "$DIR/cookie"
  for n in "${NODES[@]}"; do
    mkdir -p "$DIR/c$n/log" "$DIR/c$n/mnesia"
    echo "[]." >"$DIR/c$n/enabled_plugins"
    cat >"$DIR/c$n/rabbitmq.conf" <<EOF
listeners.tcp.local = 127.0.0.1:$(amqp_port "$n")
cluster_partition_handling = pause_minority
EOF
  done
  # rabbitmq-server drops to the 'rabbitmq' user when started by root: the files must be its own.
  if [ "$(id -u)" -eq 0 ] && id rabbitmq >/dev/null 2>&1; then chown -R rabbitmq: "$DIR"; fi
  for n in "${NODES[@]}"; do launch "$n"; done
  for n in "${NODES[@]}"; do await "$n"; done
  for n in 2 3; do
    for step in stop_app "join_cluster $(node_name 1)" start_app; do
      # shellcheck disable=SC2086  # the step is a command and its argument
      out=$(ctl "$n" $step 2>&1) || { echo "$out" >&2; show_log "$n"; die "node $n: rabbitmqctl $step failed"; }
    done
  done
  members=$(ctl 1 eval 'length(rabbit_nodes:all_running()).')
  [ "$members" = 3 ] || die "the cluster has $members running nodes, not 3"
  echo "cluster of 3 nodes running: $(urls)"
}

urls() {
  local out=() n
  for n in "${NODES[@]}"; do out+=("amqp://127.0.0.1:$(amqp_port "$n")/%2F"); done
  (IFS=,; echo "${out[*]}")
}

status() {
  [ -f "$DIR/cookie" ] || { echo "no cluster in $DIR"; return 1; }
  local up=0 n
  for n in "${NODES[@]}"; do
    if ctl "$n" status >/dev/null 2>&1; then
      echo "$(node_name "$n") 127.0.0.1:$(amqp_port "$n"): running"; up=$((up + 1))
    else
      echo "$(node_name "$n") 127.0.0.1:$(amqp_port "$n"): down"
    fi
  done
  for n in "${NODES[@]}"; do
    if ctl "$n" status >/dev/null 2>&1; then
      echo "running members: $(ctl "$n" eval 'rabbit_nodes:all_running().')"; break
    fi
  done
  [ "$up" -eq 3 ]
}

pid_of() { cat "$DIR/c$1/node.pid" 2>/dev/null || true; }

is_ours() {   # is_ours PID N: the pid still is node N's Erlang VM (never kill anything else)
  local pid=$1
  [ -n "$pid" ] && [ -r "/proc/$pid/environ" ] \
    && tr '\0' '\n' <"/proc/$pid/environ" | grep -qx -- "RABBITMQ_NODENAME=$(node_name "$2")"
}

stop_node() {
  ctl "$1" shutdown >/dev/null 2>&1 || true
  local pid; pid=$(pid_of "$1")
  if is_ours "$pid" "$1"; then kill -9 "$pid" 2>/dev/null || true; fi
}

kill_node() {
  local pid; pid=$(pid_of "$1")
  is_ours "$pid" "$1" || die "node $(node_name "$1") is not running (pid file: '${pid}')"
  kill -9 "$pid"
}

stop() {
  [ -d "$DIR" ] || { echo "no cluster in $DIR"; return 0; }
  if [ -f "$DIR/cookie" ]; then
    for n in "${NODES[@]}"; do stop_node "$n"; done
  fi
  rm -rf "$DIR"
  echo "cluster stopped, $DIR removed"
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  status) status ;;
  urls) urls ;;
  stop-node) check_n "${2:-}"; stop_node "$2" ;;
  kill-node) check_n "${2:-}"; kill_node "$2" ;;
  start-node)
    check_n "${2:-}"
    [ -f "$DIR/cookie" ] || die "no cluster in $DIR (bash scripts/cluster.sh start)"
    if ctl "$2" status >/dev/null 2>&1; then echo "$(node_name "$2") is running"; exit 0; fi
    launch "$2"; await "$2"; echo "$(node_name "$2") started" ;;
  *) die "usage: cluster.sh start|stop|status|urls|stop-node N|kill-node N|start-node N" 2 ;;
esac
