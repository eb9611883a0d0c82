#!/usr/bin/env bash
# Central-server mutual exclusion in bash, node 1 the coordinator. Written from
# docs/test-any-program.md only. Style: jq runs as a coproc that turns every input line into a
# tab-separated record; the main loop polls stdin with `read -t 1` (a timeout just loops);
# output with echo/printf (bash builtins write at once). Pass --buffered to forget jq's
# --unbuffered (jq then keeps its answers in its buffer: the script waits on the coproc).
unbuf=--unbuffered
[[ ${1:-} == --buffered ]] && unbuf=
coproc JQ { exec jq -r $unbuf '[.type, (.from // 0), (.body.type // "-"), (.id // 0)] | @tsv'; }

me=0 holder=0
queue=()

grant_next() {
  if ((${#queue[@]} == 0)); then holder=0; return; fi
  holder=${queue[0]}
  queue=("${queue[@]:1}")
  if ((holder == 1)); then echo '{"type":"enter","resource":"cs"}'
  else printf '{"type":"send","to":%d,"body":{"type":"GRANT"}}\n' "$holder"; fi
}

want() {  # $1 asks the coordinator
  if ((holder == 0)); then queue=("$1"); grant_next; else queue+=("$1"); fi
}

while true; do
  if ! IFS= read -r -t 1 line; then
    (($? > 128)) && continue  # timed out: nothing yet
    break                     # end of input
  fi
  [[ -z $line ]] && continue
  printf '%s\n' "$line" >&"${JQ[1]}"
  IFS=$'\t' read -r type from btype id <&"${JQ[0]}"
  case $type in
    init) me=$id holder=0 queue=() ;;
    request) if ((me == 1)); then want 1; else echo '{"type":"send","to":1,"body":{"type":"ASK"}}'; fi ;;
    release)
      echo '{"type":"exit","resource":"cs"}'
      if ((me == 1)); then grant_next; else echo '{"type":"send","to":1,"body":{"type":"FREE"}}'; fi ;;
    recv)
      case $btype in
        ASK) want "$from" ;;
        FREE) grant_next ;;
        GRANT) echo '{"type":"enter","resource":"cs"}' ;;
      esac ;;
  esac
  echo '{"type":"done"}'
done
