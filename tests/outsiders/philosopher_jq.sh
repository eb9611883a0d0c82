#!/bin/bash
# A dining philosopher in bash, every input parsed by one jq call, written outside mutexlab from
# docs/test-any-program.md: forks are tokens, a neighbour asks for one (ASK) and gets it (FORK);
# a hungry philosopher yields a fork only to a lower id, and asks for it back.
#   ./philosopher_jq.sh greedy     yields no fork while hungry (a deadlock)
#   ./philosopher_jq.sh one-fork   eats holding its left fork alone
mode="$1"
declare -A have pending
emit() { printf '%s\n' "$1"; }
nb_of() { # neighbour sharing fork $1
  if [ "$1" -eq "$L" ]; then echo $(( (me + n - 2) % n + 1 )); else echo $(( me % n + 1 )); fi
}
try_eat() {
  if [ "$hungry" = 1 ] && [ "$eating" = 0 ]; then
    if { [ "${have[$L]}" = 1 ] && [ "${have[$R]}" = 1 ]; } || { [ "$mode" = one-fork ] && [ "${have[$L]}" = 1 ]; }; then
      eating=1
      emit "{\"type\":\"enter\",\"resource\":\"fork:$L\"}"
      [ "$mode" = one-fork ] || emit "{\"type\":\"enter\",\"resource\":\"fork:$R\"}"
      emit '{"type":"enter","resource":"meal"}'
      emit '{"type":"state","state":"EATING"}'
    fi
  fi
}
give() { # fork
  have[$1]=0; pending[$1]=0
  emit "{\"type\":\"send\",\"to\":$(nb_of $1),\"body\":{\"type\":\"FORK\",\"fork\":$1}}"
}
ask() { emit "{\"type\":\"send\",\"to\":$(nb_of $1),\"body\":{\"type\":\"ASK\",\"fork\":$1}}"; }
while IFS= read -r line; do
  [ -z "$line" ] && continue
  IFS='|' read -r type from btype fork id nodes < <(jq -r '[.type, (.from // ""), (.body.type // ""), (.body.fork // ""), (.id // ""), (.nodes // "")] | map(tostring) | join("|")' <<<"$line")
  case "$type" in
    init)
      me=$id; n=$nodes; L=$me; R=$(( me % n + 1 )); hungry=0; eating=0
      have=(); pending=()
      for f in $L $R; do
        o=$(nb_of $f); if [ "$me" -lt "$o" ]; then have[$f]=1; else have[$f]=0; fi; pending[$f]=0
      done
      emit '{"type":"state","state":"THINKING"}'
      emit '{"type":"done","reinit":true}'; continue ;;
    request)
      hungry=1; emit '{"type":"state","state":"HUNGRY"}'
      for f in $L $R; do [ "${have[$f]}" = 1 ] || ask $f; done
      try_eat ;;
    release)
      eating=0; hungry=0
      emit '{"type":"exit","resource":"meal"}'
      emit "{\"type\":\"exit\",\"resource\":\"fork:$L\"}"
      [ "$mode" = one-fork ] || emit "{\"type\":\"exit\",\"resource\":\"fork:$R\"}"
      emit '{"type":"state","state":"THINKING"}'
      for f in $L $R; do [ "${pending[$f]}" = 1 ] && [ "${have[$f]}" = 1 ] && give $f; done ;;
    recv)
      if [ "$btype" = ASK ]; then
        if [ "${have[$fork]}" = 1 ]; then
          if [ "$eating" = 0 ] && { [ "$hungry" = 0 ] || { [ "$mode" != greedy ] && [ "$from" -lt "$me" ]; }; }; then
            give $fork; [ "$hungry" = 1 ] && ask $fork
          else pending[$fork]=1; fi
        fi
      elif [ "$btype" = FORK ]; then
        have[$fork]=1; try_eat
      fi ;;
  esac
  emit '{"type":"done"}'
done
