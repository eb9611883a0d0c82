#!/usr/bin/env bash
# compose-check.sh — run the compose stacks for real, as docs/tour.md tells a user to, and judge them.
#
#   bash scripts/compose-check.sh                           # docker-compose (v1) and docker compose (v2)
#   COMPOSE_CHECK_TOOLS=v2 bash scripts/compose-check.sh    # only one of them (v1 | v2 | "v1 v2")
#   COMPOSE_CHECK_RUNS=bees bash scripts/compose-check.sh   # some runs (bees elves classic-ricart-agrawala
#                                                           # classic-raymond classic-file bees-transient
#                                                           # classic-transient cluster cluster-stop
#                                                           # bees-file elves-file philosophers program)
#   COMPOSE_CHECK_V1_RUNS=all bash scripts/compose-check.sh # every run with v1 too (default: a subset, below)
#   COMPOSE_CHECK_LANES=2 bash scripts/compose-check.sh     # the runs dealt to 2 lanes run at once (CI's)
#
# Needs a Docker engine (docker info) and the compose tool(s). For each tool: build the image, then
# run the bees (--scale bee=5), the elves profile and the classic profile with ricart-agrawala and
# with raymond, each with --exit-code-from its monitor, a user's algorithm by file in the classic profile
# ("classic-file": Ricart–Agrawala copied outside the checkout as a user writes it, named ra-file,
# mounted with ALGORITHM_FILE, docs/rabbitmq.md#your-algorithm-in-compose), the bees and the classic profile again
# with DELIVERY=transient ("bees-transient", "classic-transient": the monitor must say "complete (transient
# delivery)"), and the bees on the three-node cluster of the
# "cluster" profile (--scale bee=7, docs/cluster.md): once as docs/tour.md shows it ("cluster"), once
# with `stop rabbitmq-2` after the run has started ("cluster-stop"): that run must still pass, and
# rabbitmq-2 must have been stopped before its end. (--exit-code-from stops everything when any
# container it watches exits: there the brokers are started first, with up -d, and `up` is given
# only the monitor and the bees to watch.) Then a user's solution of each problem by
# file: the bees ("bees-file": examples/solutions/bees_reed_tokens.py as BEES_ALGORITHM), the elves
# ("elves-file": ELVES_FILE below as ELVES_ALGORITHM), the dining philosophers ("philosophers": the
# profile with examples/solutions/chandy_misra.py), and the C bee of examples/nodes/bee.c as compose
# services ("program": examples/nodes/compose.yml over the project's file, profile program, 4 bees;
# the binaries compiled here with gcc -static, NODES_BUILD=prebuilt: no registry to pull gcc:13
# from). v2 runs all of them; v1 only bees, classic-file and cluster-stop (COMPOSE_CHECK_V1_RUNS,
# "all" for every run). Why: each run takes as long as the bees' (40 s to 2 min by the machine's
# load), mostly the broker starting and stopping, and v1 reads the same file (tests/test_compose.py
# holds that the two give identical configurations): what v1 may do differently is how it runs
# the file, and those three use every compose command the others use (the default profile; a
# profile with the services named, --scale and --exit-code-from; a file mounted from outside the
# checkout through ALGORITHM_FILE; up -d, then stop mid-run), the others differing only in the
# program the image runs, which v2 checks. A run passes when compose exits 0, the
# monitor printed "<algorithm>: SAFE" for a complete run, and the trace it wrote to the "traces"
# volume passes `mutexlab verify` inside the image. `down -v` follows every run, whatever happened.
#
# The environment is .env.example copied to a temporary file (what `cp .env.example .env` gives) and
# passed with --env-file: a .env of yours is neither read nor changed, and variables of the example
# set in your shell are unset here. A fresh MUTEXLAB_RUN_SECRET is appended to it as the docs tell a
# user to (the last line wins; the compose file has no default and refuses to start without), and
# again before each run: a new secret per run. The project is the one the example names
# (COMPOSE_PROJECT_NAME, "mutexlab"); the script refuses to start when that project already has
# containers or volumes (they would go with `down -v`): stop yours first, or set
# COMPOSE_CHECK_PROJECT=another-name (written into the env file as COMPOSE_PROJECT_NAME too: v1 names
# the image after that variable, not after -p). The images are the project's own, mutexlab:<project>
# and mutexlab-program:<project> (docker-compose.yml, examples/nodes/compose.yml): those the check
# made (absent when it started) are removed at the end, a lane's too (`down -v` keeps an image), and
# so are the untagged ones v2 leaves (one build per service, the last tagged: docs/rabbitmq.md).
# The machine's broker ports are held for the whole check: 127.0.0.1:5672 and :15672, each by a
# listener of the script's own when nothing listens there yet (the stacks must start beside another
# broker: no fixed host port). After each run the trace is copied out as the docs show (`docker run
# --rm -v <project>_traces:/traces mutexlab:<project> cat /traces/X > X`), and after the documented teardown (`--profile elves
# --profile classic --profile cluster --profile philosophers down -v`) no container, volume or network of the project may
# be left.
# With COMPOSE_CHECK_LANES=N (default 1; CI: 2) the runs are dealt in turn to N lanes that run at once,
# each a copy of this script under its own project (<project>-1 ... -N, each checked empty first,
# each with its own env file, secrets, trace volume, teardown and leftover check): every run checks
# what it checks alone, and most of a run is waiting (a broker booting, the join window, containers
# stopping), which two lanes overlap on two CPUs. Each lane's output follows, then every result.
# Exit 0 when every run passed, 1 when one failed, 2 when something it needs is missing.
set -uo pipefail
cd "$(dirname "$0")/.."

TOOLS=${COMPOSE_CHECK_TOOLS:-v1 v2}
ALL_RUNS="bees elves classic-ricart-agrawala classic-raymond classic-file bees-transient \
classic-transient cluster cluster-stop bees-file elves-file philosophers program"   # in the order they run
RUNS=${COMPOSE_CHECK_RUNS:-$ALL_RUNS}
V1_RUNS=${COMPOSE_CHECK_V1_RUNS:-bees classic-file cluster-stop}   # (why: the header)
LANES=${COMPOSE_CHECK_LANES:-1}
PAIRS=${COMPOSE_CHECK_PAIRS:-}   # a lane's share ("v2:bees v1:cluster-stop ..."), given by the script itself
# runs_with TOOL NAME: whether the check runs NAME with TOOL (asked for, and v1's subset; a lane: its share)
runs_with() {
  [ -z "$PAIRS" ] || { [[ " $PAIRS " == *" $1:$2 "* ]]; return; }
  [[ " $TOOLS " == *" $1 "* && " $RUNS " == *" $2 "* ]] || return 1
  [ "$1" != v1 ] || [ "$V1_RUNS" = all ] || [[ " $V1_RUNS " == *" $2 "* ]]
}
UP_TIMEOUT=${COMPOSE_CHECK_TIMEOUT:-600}     # seconds for one `up`, broker start included

die() { echo "compose-check: $*" >&2; exit 2; }
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info); start one first"
[ -f .env.example ] && [ -f docker-compose.yml ] || die "run from a mutexlab checkout"

work=$(mktemp -d -t mutexlab-compose-check.XXXXXX)
cp .env.example "$work/env"
new_secret() { python3 -c 'import secrets; print("MUTEXLAB_RUN_SECRET=" + secrets.token_hex(32))' >>"$work/env"; }
new_secret
# The example alone speaks: unset what it (or compose itself) would take from the shell instead.
while IFS= read -r name; do unset "$name"; done < <(sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p' .env.example)
unset COMPOSE_FILE COMPOSE_PROFILES COMPOSE_PROJECT_NAME
project=$(sed -n 's/^COMPOSE_PROJECT_NAME=//p' "$work/env")
project_args=()
if [ -n "${COMPOSE_CHECK_PROJECT:-}" ]; then
  project=$COMPOSE_CHECK_PROJECT; project_args=(-p "$project")
  echo "COMPOSE_PROJECT_NAME=$project" >>"$work/env"   # the last line wins: v1's image tag too
fi
[ -n "$project" ] || die ".env.example sets no COMPOSE_PROJECT_NAME"
image="mutexlab:$project"   # docker-compose.yml's image: mutexlab:${COMPOSE_PROJECT_NAME}
ours=""                     # set once the project is known to be the check's own
made_images=()              # the project's images that did not exist before the check: removed at the end
for name in "$image" "mutexlab-program:$project"; do
  docker image inspect "$name" >/dev/null 2>&1 || made_images+=("$name")
done

compose=()          # the tool of the current round, with --env-file and the project
current=""          # the run in progress, for the trap
# Every profile, as the documented teardown names them; a run over an override file
# (OVERRIDE=FILE) adds "-f docker-compose.yml -f FILE" and that file's profile (its own teardown).
all_profiles=(--profile elves --profile classic --profile cluster --profile philosophers)
cleanup() {   # the teardown docs/tour.md documents, word for word
  if [ -n "$current" ]; then
    "${compose[@]}" "${all_profiles[@]}" down -v >"$work/down.log" 2>&1 \
      || { echo "  down -v failed:"; tail -5 "$work/down.log"; }
    current=""
  fi
}
# what of the project is left: containers, volumes, networks (one name a line). Containers: those
# compose made (labelled oneoff True or False); a `docker run` of the image carries the labels the
# image was built with (project and service of the last build), so another lane's copy would match.
project_objects() {
  docker ps -a --format '{{.Names}}' --filter "label=com.docker.compose.project=$project" --filter label=com.docker.compose.oneoff
  docker volume ls -q --filter "label=com.docker.compose.project=$project"
  docker network ls --format '{{.Name}}' --filter "label=com.docker.compose.project=$project"
}
holder=""
made_nodes_build=""
lane_pids=()
stop_lanes() {   # an interrupted check: each lane (and the command it waits for) stopped, then its trap
  local pid     # tears its own project down before we go
  for pid in "${lane_pids[@]}"; do kill -TERM "$pid" 2>/dev/null; pkill -TERM -P "$pid" 2>/dev/null; done
  [ ${#lane_pids[@]} -eq 0 ] || wait "${lane_pids[@]}" 2>/dev/null
}
trap 'stop_lanes; cleanup; [ -z "$holder" ] || kill "$holder" 2>/dev/null; rm -rf "$work" ${made_nodes_build:+"$made_nodes_build"}
      [ ${#made_images[@]} -eq 0 ] || docker image rm "${made_images[@]}" >/dev/null 2>&1
      [ -z "$ours" ] || docker image prune -f --filter "label=com.docker.compose.project=$project" >/dev/null 2>&1' EXIT
trap 'echo "compose-check: interrupted"; exit 130' INT TERM

leftovers=$(project_objects | wc -l)
[ "$leftovers" -eq 0 ] || die "compose project '$project' already has containers or volumes (yours?), which \
'down -v' would remove; stop it first (docker compose down), or set COMPOSE_CHECK_PROJECT=another-name"
ours=1   # from here the project's untagged images are the check's own builds: pruned at the end

# Another broker's ports: hold those that are free with a listener of ours until the script ends.
python3 - "$work/held" <<'PY' &
import socket, sys, time
held = []
for port in (5672, 15672):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        s.listen()
        held.append(s)
        print(f"{port} held by compose-check", file=open(sys.argv[1], "a"))
    except OSError:
        print(f"{port} already taken", file=open(sys.argv[1], "a"))
time.sleep(86400)
PY
holder=$!
for _ in $(seq 50); do [ "$(cat "$work/held" 2>/dev/null | wc -l)" = 2 ] && break; sleep 0.1; done
echo "== 127.0.0.1 ports: $(tr '\n' ';' <"$work/held" 2>/dev/null)"

# A user's algorithm (classic-file), as a user writes one: a protocol module with absolute
# imports and a name of its own, in a directory outside the checkout.
sed -e 's/^\(\s*\)from \.\.\([a-z]\)/\1from mutexlab.\2/' -e 's/^\(\s*\)from \.\([a-z]\)/\1from mutexlab.protocols.\2/' \
  -e 's/"ricart-agrawala"/"ra-file"/g' shared/mutexlab/protocols/ricart_agrawala.py >"$work/ra_file.py"

# A user's solution of the elves (elves-file): the hamster killers without an arbiter, a file of
# examples/solutions (its SPEC's name is read from it: spec_name).
ELVES_FILE=examples/solutions/elves_no_arbiter.py

# A lane's own `docker run`s of the image drop the compose labels the image carries from its build
# (project and service): compose counts any container so labelled as one of its project's, and
# `up --exit-code-from` there would attach to it and stop when it exits.
unlabelled=()
[ -z "${COMPOSE_CHECK_LANE:-}" ] || unlabelled=(--label com.docker.compose.project= --label com.docker.compose.service=)

# spec_name FILE: the name the algorithm file declares (its SPEC), read inside the image; when it
# declares none, the error's last line and a non-zero status.
spec_name() {
  local file; file=$(realpath "$1")
  docker run --rm "${unlabelled[@]}" -v "$file:/algorithm/algorithm.py:ro" "$image" python -c \
    'from mutexlab.protocols.registry import resolve; print(resolve("/algorithm/algorithm.py").name)' 2>&1 | tail -1
}

# The C nodes for the "program" run (examples/nodes/compose.yml, NODES_BUILD=prebuilt), compiled here
# into examples/nodes/build/ (git-ignored; removed at the end when this script made it).
if [ -z "${COMPOSE_CHECK_LANE:-}" ] && { runs_with v1 program || runs_with v2 program; }; then   # a lane: done for it
  command -v gcc >/dev/null || die "the program run compiles examples/nodes/bee.c: gcc is not installed"
  [ -d examples/nodes/build ] || made_nodes_build=examples/nodes/build
  mkdir -p examples/nodes/build
  for node in bee ricart_agrawala philosopher; do
    gcc -O2 -Wall -Werror -static -o "examples/nodes/build/$node" "examples/nodes/$node.c" \
      || die "gcc -static could not build examples/nodes/$node.c (a static C library is needed: libc6-dev)"
  done
fi

results=()
failed=0
record() {   # record TOOL RUN VERDICT SECONDS
  results+=("$(printf '%-3s %-24s %5ss  %s' "$1" "$2" "$4" "$3")")
  echo "== $1 $2: $3 (${4}s)"
}

# stop_once_started MONITOR SERVICE: in the background, once MONITOR has started the run, stop SERVICE
# (compose stop); "$work/stopped" then holds the time it was stopped, "$work/stop.log" what stop said.
stop_once_started() {
  local monitor=$1 service=$2 i
  for i in $(seq 1 "$UP_TIMEOUT"); do
    "${compose[@]}" logs --no-color "$monitor" 2>/dev/null | grep -q " — started" && break
    sleep 1
  done
  "${compose[@]}" --profile cluster stop "$service" >"$work/stop.log" 2>&1 && date +%s >"$work/stopped"
}

# one_run TOOL NAME MONITOR TRACE ALGORITHM SCALED [ENV=VALUE ...] [FIRST=S1,S2...] [STOP=SERVICE] -- COMPOSE-ARGS...
# ALGORITHM: the name the monitor's verdict must give; file:PATH, the name the file at PATH declares.
# SCALED ("5 bee") is how many of the scaled role the monitor must have admitted. FIRST: services
# started beforehand with `up -d`. STOP=SERVICE: stop that service once the run has started (it must
# be stopped before the run ends, and the run pass). With ALGORITHM_FILE=... the trace is verified
# with --algorithm naming the mounted file (its own invariants: docs/rabbitmq.md). OVERRIDE=FILE:PROFILE:
# the run is over the project's file and FILE (-f both), and its teardown adds --profile PROFILE.
# IMAGE=NAME: the trace is copied out with NAME:<project>, the image the run built (default mutexlab).
one_run() {
  local tool=$1 name=$2 monitor=$3 trace=$4 algorithm=$5 scaled=$6; shift 6
  local envs=() stop="" first="" verify_args=() override="" copy_image=$image
  while [ "$1" != -- ]; do
    case $1 in
      STOP=*) stop=${1#STOP=} ;;
      IMAGE=*) copy_image="${1#IMAGE=}:$project" ;;
      FIRST=*) first=${1#FIRST=} ;;
      OVERRIDE=*) override=${1#OVERRIDE=} ;;
      ALGORITHM_FILE=*) envs+=("$1"); verify_args=(--algorithm /algorithm/algorithm.py) ;;
      *) envs+=("$1") ;;
    esac
    shift
  done; shift
  runs_with "$tool" "$name" || return 0
  if [[ $algorithm == file:* ]]; then
    local declared
    declared=$(spec_name "${algorithm#file:}") || declared="(${algorithm#file:} declares no algorithm: $declared)"
    algorithm=$declared
  fi
  local saved_compose=("${compose[@]}") saved_profiles=("${all_profiles[@]}")
  if [ -n "$override" ]; then
    compose+=(-f docker-compose.yml -f "${override%%:*}")
    all_profiles+=(--profile "${override##*:}")
  fi
  local log="$work/$tool-$name.log" t0=$SECONDS code verdict stopper=""
  echo; echo "== $tool $name: ${compose[*]} $*${stop:+ (and \`stop $stop\` once the run has started)}"
  new_secret
  current=$name
  rm -f "$work/stopped" "$work/stop.log"
  if [ -n "$first" ]; then
    echo "   first: ${compose[*]} --profile cluster up -d ${first//,/ }"
    # shellcheck disable=SC2086  # the list is split into service names
    env "${envs[@]}" "${compose[@]}" --profile cluster up -d ${first//,/ } >"$work/first.log" 2>&1 \
      || { echo "-- up -d failed:"; cat "$work/first.log"; }
  fi
  if [ -n "$stop" ]; then stop_once_started "$monitor" "$stop" & stopper=$!; fi
  env "${envs[@]}" timeout "$UP_TIMEOUT" "${compose[@]}" "$@" >"$log" 2>&1
  code=$?
  local ended; ended=$(date +%s)
  if [ -n "$stopper" ]; then kill "$stopper" 2>/dev/null; wait "$stopper" 2>/dev/null; fi
  local t_up=$((SECONDS - t0))
  # The monitor's verdict, from its own log (compose prefixes every line with the container's name).
  "${compose[@]}" "${all_profiles[@]}" logs --no-color "$monitor" >"$work/monitor.log" 2>&1
  local said ok=1
  said=$(sed -n 's/^[^|]*| //p' "$work/monitor.log" | grep -E "^$algorithm: (SAFE|VIOLATION)|over RabbitMQ, run .* — " | tr '\n' ';')
  verdict="exit $code"
  [ "$code" -eq 0 ] || ok=0
  if [ -n "$stop" ]; then
    # when the monitor gave its verdict (the log line's timestamp), as Unix time
    local judged
    judged=$("${compose[@]}" --profile cluster logs --no-color --timestamps "$monitor" 2>/dev/null \
      | grep -E "[|] [^ ]+ $algorithm: (SAFE|VIOLATION)" | head -1 | sed -n 's/^[^|]*| \([^ ]*\) .*/\1/p')
    judged=$(date -d "$judged" +%s 2>/dev/null || echo "$ended")
    if [ -f "$work/stopped" ] && [ "$(cat "$work/stopped")" -le "$judged" ]; then
      verdict+=", $stop stopped $((judged - $(cat "$work/stopped")))s before the verdict"
      local moved   # the monitor's summary: "reconnects N, redelivered M" (all processes)
      moved=$(sed -n 's/^[^|]*| .*\(reconnects [0-9]*, redelivered [0-9]*\).*/\1/p' "$work/monitor.log" | head -1)
      [ -z "$moved" ] || verdict+=" ($moved)"
    else
      verdict+=", $stop was NOT stopped before the verdict: $(tr '\n' ' ' <"$work/stop.log" 2>/dev/null)"; ok=0
    fi
  fi
  local summary mode=""   # "5 bees, 3.35s wall clock" from "bees over RabbitMQ, run compose-bees: 5 bees, ... — complete"
  [[ " ${envs[*]} " != *" DELIVERY=transient "* ]] || mode=" (transient delivery)"  # said after "complete"
  summary=$(sed -n "s/^[^|]*| .* over RabbitMQ, run [^:]*: \(.*\) — complete${mode}\$/\1/p" "$work/monitor.log" | head -1)
  if grep -qE "[|] $algorithm: SAFE\$" "$work/monitor.log" && [ -n "$summary" ]; then
    verdict+=", monitor SAFE complete$mode ($summary)"
    case " $summary" in
      *" $scaled"*) ;;
      *) verdict+=", expected $scaled(s)"; ok=0 ;;
    esac
  else
    verdict+=", monitor: ${said:-no verdict}"; ok=0
  fi
  # Quiet output: no warnings about cluster peers a profile does not start (only a stopped node may
  # be missed), and the brokers' start-up logs kept out of it (their console logs warnings only).
  if [ -z "$stop" ] && grep -q "cannot connect to rabbitmq-" "$log"; then
    verdict+=", warnings about broker nodes not started: $(grep -m1 "cannot connect to rabbitmq-" "$log")"; ok=0
  fi
  local broker_lines; broker_lines=$(grep -cE "^[^|]*rabbitmq(-[23])?([-_][0-9]+)? +[|]" "$log")
  verdict+=", $(wc -l <"$log") lines of output ($broker_lines from the brokers)"
  # The project's containers must carry the fixed project name (v1 takes it from the env file only).
  if [ -z "$(docker ps -aq --filter "label=com.docker.compose.project=$project" --filter label=com.docker.compose.oneoff \
                             --filter "label=com.docker.compose.service=$monitor")" ]; then
    verdict+=", no '$monitor' container of project '$project'"; ok=0
  fi
  # The trace, judged inside the image by the code that wrote it.
  env "${envs[@]}" "${compose[@]}" "${all_profiles[@]}" run --rm --no-deps -T "$monitor" \
    mutexlab verify "$trace" "${verify_args[@]}" >"$work/verify.log" 2>&1
  code=$?
  local t_verify=$((SECONDS - t0 - t_up))
  if [ "$code" -eq 0 ] && grep -q "^$algorithm: SAFE" "$work/verify.log"; then
    verdict+=", verify SAFE"
  else
    verdict+=", verify exit $code: $(head -c 200 "$work/verify.log" | tr '\n' ' ')"; ok=0
  fi
  if [ "$ok" -ne 1 ]; then
    failed=1
    echo "-- last lines of the run's output:"; tail -40 "$log"
    echo "-- verify:"; cat "$work/verify.log"
  fi
  # The trace copied out, as the docs show it (before the teardown removes the volume).
  docker run --rm "${unlabelled[@]}" -v "${project}_traces:/traces" "$copy_image" cat "$trace" >"$work/copied.jsonl" 2>"$work/copy.log"
  if [ "$(head -c 1 "$work/copied.jsonl")" = "{" ]; then
    verdict+=", trace copied out ($(wc -l <"$work/copied.jsonl") lines)"
  else
    verdict+=", trace NOT copied out: $(head -c 200 "$work/copy.log" | tr '\n' ' ')"; ok=0
  fi
  local t_down=$SECONDS left
  cleanup
  compose=("${saved_compose[@]}")
  all_profiles=("${saved_profiles[@]}")
  t_down=$((SECONDS - t_down))
  left=$(project_objects | tr '\n' ' ')
  if [ -n "$left" ]; then
    verdict+=", LEFT after the teardown: $left"; ok=0
    docker ps -aq --filter "label=com.docker.compose.project=$project" --filter label=com.docker.compose.oneoff \
      | xargs -r docker rm -f >/dev/null
    docker volume ls -q --filter "label=com.docker.compose.project=$project" | xargs -r docker volume rm -f >/dev/null
    docker network ls -q --filter "label=com.docker.compose.project=$project" | xargs -r docker network rm >/dev/null
  else
    verdict+=", clean teardown"
  fi
  [ "$ok" -eq 1 ] || failed=1
  record "$tool" "$name" "$([ "$ok" -eq 1 ] && echo PASS || echo FAIL): $verdict; up ${t_up}s, verify ${t_verify}s, down ${t_down}s" \
    $((SECONDS - t0))
}

# Lanes (COMPOSE_CHECK_LANES=N, CI: 2): the runs dealt in turn to N copies of this script run at
# once, each under a project of its own (<project>-1 ... -N) and with its own env file, secrets,
# trace volume, teardown and leftover check; the ports held and the nodes compiled above are shared.
# Each run's checks are unchanged; only their order and concurrency change. The image is built
# first, once per tool, so that the lanes' own builds (each recorded, as always) find it cached.
if [ -z "$PAIRS" ] && [ "$LANES" -gt 1 ]; then
  pairs=()
  for tool in $TOOLS; do for run in $ALL_RUNS; do runs_with "$tool" "$run" && pairs+=("$tool:$run"); done; done
  for tool in $TOOLS; do
    case $tool in v1) base=(docker-compose) ;; v2) base=(docker compose) ;; *) die "COMPOSE_CHECK_TOOLS: unknown tool '$tool' (v1, v2)" ;; esac
    "${base[@]}" version >/dev/null 2>&1 || die "$tool (${base[*]}) is not installed"
    echo "== $tool: building the image for the lanes"
    "${base[@]}" --env-file "$work/env" "${project_args[@]}" "${all_profiles[@]}" build >"$work/build.log" 2>&1 \
      || { tail -30 "$work/build.log"; echo "compose-check: $tool build failed"; exit 1; }
  done
  for lane in $(seq 1 "$LANES"); do
    share=""
    for i in "${!pairs[@]}"; do [ $((i % LANES + 1)) -ne "$lane" ] || share+=" ${pairs[$i]}"; done
    [ -n "$share" ] || continue
    echo "== lane $lane (project $project-$lane):$share"
    COMPOSE_CHECK_LANE=$lane COMPOSE_CHECK_PAIRS="$share" COMPOSE_CHECK_PROJECT="$project-$lane" \
      COMPOSE_CHECK_RESULTS="$work/results-$lane" bash "$0" >"$work/lane-$lane.log" 2>&1 &
    lane_pids+=($!)
  done
  status=0
  for i in "${!lane_pids[@]}"; do
    wait "${lane_pids[$i]}"; code=$?
    [ "$code" -le "$status" ] || status=$code
  done
  lane_pids=()
  for lane in $(seq 1 "$LANES"); do
    [ -f "$work/lane-$lane.log" ] || continue
    echo; echo "=================== lane $lane"; cat "$work/lane-$lane.log"
  done
  echo; echo "== compose-check summary ($LANES lanes, projects $project-1 to $project-$LANES)"
  for tool in $TOOLS; do cat "$work"/results-* 2>/dev/null | grep "^$tool "; done
  exit "$status"
fi

for tool in $TOOLS; do
  [ -z "$PAIRS" ] || [[ " $PAIRS " == *" $tool:"* ]] || continue   # a lane without a run of this tool
  case $tool in
    v1) base=(docker-compose) ;;
    v2) base=(docker compose) ;;
    *)  die "COMPOSE_CHECK_TOOLS: unknown tool '$tool' (v1, v2)" ;;
  esac
  "${base[@]}" version >/dev/null 2>&1 || die "$tool (${base[*]}) is not installed"
  compose=("${base[@]}" --env-file "$work/env" "${project_args[@]}")
  echo; echo "== $tool: $("${base[@]}" version 2>/dev/null | head -1)"
  t0=$SECONDS
  if "${compose[@]}" "${all_profiles[@]}" build >"$work/build.log" 2>&1; then
    record "$tool" build "PASS: image $image" $((SECONDS - t0))
  else
    tail -30 "$work/build.log"; record "$tool" build "FAIL: build" $((SECONDS - t0)); failed=1; continue
  fi
  one_run "$tool" bees monitor /traces/bees.jsonl bees "5 bee" -- \
    up --scale bee=5 --exit-code-from monitor
  one_run "$tool" elves elves-monitor /traces/elves.jsonl elves "4 el" -- \
    --profile elves up --scale elf=4 --exit-code-from elves-monitor elves-monitor elf mayor
  one_run "$tool" classic-ricart-agrawala classic-monitor /traces/classic.jsonl ricart-agrawala "5 node" -- \
    --profile classic up --scale node=5 --exit-code-from classic-monitor classic-monitor node
  one_run "$tool" classic-raymond classic-monitor /traces/classic.jsonl raymond "5 node" CLASSIC_ALGORITHM=raymond -- \
    --profile classic up --scale node=5 --exit-code-from classic-monitor classic-monitor node
  one_run "$tool" classic-file classic-monitor /traces/classic.jsonl ra-file "5 node" \
    ALGORITHM_FILE="$work/ra_file.py" CLASSIC_ALGORITHM=/algorithm/algorithm.py -- \
    --profile classic up --scale node=5 --exit-code-from classic-monitor classic-monitor node
  # Transient delivery (docs/wire.md#delivery-modes): the same stacks with DELIVERY=transient.
  one_run "$tool" bees-transient monitor /traces/bees.jsonl bees "5 bee" DELIVERY=transient -- \
    up --scale bee=5 --exit-code-from monitor
  one_run "$tool" classic-transient classic-monitor /traces/classic.jsonl ricart-agrawala "5 node" \
    DELIVERY=transient -- --profile classic up --scale node=5 --exit-code-from classic-monitor classic-monitor node
  one_run "$tool" cluster monitor /traces/bees.jsonl bees "7 bee" -- \
    --profile cluster up --scale bee=7 --exit-code-from monitor
  # DWELL 1: the run lasts long enough for rabbitmq-2 to be stopped while it goes on (with 0.5 a
  # stop under load 46 once landed after the verdict: a graceful stop hands its queues over first).
  one_run "$tool" cluster-stop monitor /traces/bees.jsonl bees "7 bee" DWELL=1 \
    FIRST=rabbitmq,rabbitmq-2,rabbitmq-3 STOP=rabbitmq-2 -- \
    --profile cluster up --scale bee=7 --exit-code-from monitor monitor bee
  # A user's solution of each problem, by file.
  one_run "$tool" bees-file monitor /traces/bees.jsonl file:examples/solutions/bees_reed_tokens.py "5 bee" \
    ALGORITHM_FILE=./examples/solutions/bees_reed_tokens.py BEES_ALGORITHM=/algorithm/algorithm.py -- \
    up --scale bee=5 --exit-code-from monitor
  one_run "$tool" elves-file elves-monitor /traces/elves.jsonl "file:$ELVES_FILE" "4 el" \
    ALGORITHM_FILE="$(realpath "$ELVES_FILE")" ELVES_ALGORITHM=/algorithm/algorithm.py -- \
    --profile elves up --scale elf=4 --exit-code-from elves-monitor elves-monitor elf mayor
  one_run "$tool" philosophers philosophers-monitor /traces/philosophers.jsonl \
    file:examples/solutions/chandy_misra.py "5 philosopher" \
    ALGORITHM_FILE=./examples/solutions/chandy_misra.py -- \
    --profile philosophers up --scale philosopher=5 --exit-code-from philosophers-monitor philosophers-monitor philosopher
  one_run "$tool" program program-monitor /traces/program-bees.jsonl bees "4 bee" \
    OVERRIDE=examples/nodes/compose.yml:program IMAGE=mutexlab-program NODES_BUILD=prebuilt -- \
    --profile program up --scale program-bee=4 --exit-code-from program-monitor program-monitor program-bee
done

echo; echo "== compose-check summary (project $project)"
printf '%s\n' "${results[@]}"
[ -z "${COMPOSE_CHECK_RESULTS:-}" ] || printf '%s\n' "${results[@]}" >"$COMPOSE_CHECK_RESULTS"
exit $failed
