#!/usr/bin/env bash
# K-mutual exclusion for `mutexlab test kmutex --node`, in bash alone: `read -r` a line at a time,
# the fields picked out with [[ =~ ]] (the inputs' keys are sorted, so a line's own "type" is its
# last key), printf for the answers (a pipe, but every printf is its own write: nothing to flush).
# Node 1 keeps a desk of K permits: ASK, OK, BACK; it asks itself without messages.
# Slow to start (a second of "loading"), chatty on standard error.
#
#   --lenient   the desk hands out K+1 permits
#   --sleepy N  sleeps N seconds before its first answer (a slow starter)
lenient=0 sleepy=1
while [ $# -gt 0 ]; do
  case $1 in
    --lenient) lenient=1 ;;
    --sleepy) sleepy=$2; shift ;;
  esac
  shift
done
echo "desk: loading for ${sleepy}s" >&2
sleep "$sleepy"

me=0 k=0 free=0 queue=() inside=0
send() { printf '{"type":"send","to":%d,"body":{"type":"%s"}}\n' "$1" "$2"; }
enter() { inside=1; printf '{"type":"enter","resource":"cs"}\n'; }

ask() {  # the desk: someone asks for a permit
  local who=$1
  if (( free > 0 || (lenient && free == 0) )); then
    free=$((free - 1))
    if (( who == me )); then enter; else send "$who" OK; fi
  else
    queue+=("$who")
  fi
}

back() {  # the desk: a permit comes back
  free=$((free + 1))
  if (( ${#queue[@]} > 0 && free > 0 )); then
    local who=${queue[0]}
    queue=("${queue[@]:1}")
    free=$((free - 1))
    if (( who == me )); then enter; else send "$who" OK; fi
  fi
}

while IFS= read -r line; do
  [[ $line =~ \"type\":\"([a-z]+)\"\}$ ]] || { echo "desk: what is this: $line" >&2; exit 3; }
  kind=${BASH_REMATCH[1]}
  echo "desk $me: $kind (free $free, queue ${queue[*]})" >&2
  case $kind in
    init)
      [[ $line =~ ^\{\"id\":([0-9]+), ]] && me=${BASH_REMATCH[1]}
      [[ $line =~ \"k\":([0-9]+) ]] && k=${BASH_REMATCH[1]}
      free=$k queue=() inside=0
      printf '{"type":"done","reinit":true}\n'
      continue ;;
    request)
      if (( me == 1 )); then ask 1; else send 1 ASK; fi ;;
    release)
      inside=0
      printf '{"type":"exit","resource":"cs"}\n'
      if (( me == 1 )); then back; else send 1 BACK; fi ;;
    recv)
      [[ $line =~ ^\{\"body\":\{\"type\":\"([A-Z]+)\"\},\"from\":([0-9]+), ]] || exit 4
      case ${BASH_REMATCH[1]} in
        ASK) ask "${BASH_REMATCH[2]}" ;;
        BACK) back ;;
        OK) enter ;;
      esac ;;
  esac
  printf '{"type":"done"}\n'
done
echo "desk $me: input ended" >&2
