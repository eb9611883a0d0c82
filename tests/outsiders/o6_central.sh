#!/bin/bash
# A central-coordinator mutex node in pure bash (no jq, no awk): node 1 keeps the lock and a
# queue; the others ASK it, get GRANT, and say RELEASE. Lines are read with `read -r` and taken
# apart with [[ =~ ]]; the input's own type is its last key. Written from docs/test-any-program.md.
# Flags, any number: crlf (\r\n line ends), split (each line in three writes), batch (a whole
# answer in one write), unicode (names with accents and an emoji), extra (unknown fields on every
# line), noisy (200 lines of stderr per input), exit3 (exits 3 at the end of its input), slow
# (sleeps 3 s before it reads anything), float-units (units 1.0), float-to (to 1.0),
# broken (the coordinator forgets that it holds the lock itself when a peer asks).
declare -A F; for a in "$@"; do F[$a]=1; done
EOL=$'\n'; [[ ${F[crlf]} ]] && EOL=$'\r\n'
X=''; [[ ${F[extra]} ]] && X=',"note":"extra","weight":3.5,"tags":["a",{"b":null}]'
WHO='node'; [[ ${F[unicode]} ]] && WHO='nœud-é-🐝-Ω'
BUF=''
out() {  # one protocol line
    local line="$1$EOL"
    if [[ ${F[batch]} ]]; then BUF+="$line"; return; fi
    if [[ ${F[split]} ]]; then
        local n=${#line} a=$((${#line} / 3))
        printf '%s' "${line:0:a}"; printf '%s' "${line:a:a}"; printf '%s' "${line:2*a}"
    else printf '%s' "$line"; fi
}
flush() { [[ ${F[batch]} ]] && printf '%s' "$BUF"; BUF=''; }
TO() { if [[ ${F[float-to]} ]]; then echo "$1.0"; else echo "$1"; fi; }
send() { out "{\"type\":\"send\",\"to\":$(TO "$1"),\"body\":{\"type\":\"$2\",\"who\":\"$WHO $ID\"}$X}"; }
enter() {
    local u=''; [[ ${F[float-units]} ]] && u=',"units":1.0'
    out "{\"type\":\"enter\",\"resource\":\"cs\"$u$X}"; out "{\"type\":\"state\",\"state\":\"HELD\"$X}"
}
grant() {  # the coordinator gives the lock to $1
    holder=$1
    if [[ $1 == 1 ]]; then enter; else remote=$1; send "$1" GRANT; fi
}
freed() {
    holder=0; remote=0
    if ((${#queue[@]})); then local next=${queue[0]}; queue=("${queue[@]:1}"); grant "$next"; fi
}
asked() {  # the coordinator is asked by $1
    local busy=$holder
    [[ ${F[broken]} ]] && busy=$remote
    if [[ $busy == 0 ]]; then grant "$1"; else queue+=("$1"); fi
}
[[ ${F[slow]} ]] && sleep 3
ID=0; holder=0; remote=0; queue=()
while IFS= read -r line; do
    [[ -z $line ]] && continue
    [[ ${F[noisy]} ]] && for i in $(seq 200); do echo "central $ID: noise $i about $line" >&2; done
    [[ $line =~ \"type\":\"([a-z]+)\"\}$ ]] || { echo "central: cannot read $line" >&2; exit 2; }
    type=${BASH_REMATCH[1]}
    case $type in
    init)
        [[ $line =~ \"id\":([0-9]+) ]]; ID=${BASH_REMATCH[1]}
        holder=0; remote=0; queue=()
        out "{\"type\":\"log\",\"hello\":\"$WHO $ID ready\"}"
        out "{\"type\":\"done\",\"reinit\":true$X}"; flush; continue ;;
    request)
        if [[ $ID == 1 ]]; then asked 1; else send 1 ASK; fi
        out "{\"type\":\"state\",\"state\":\"WANTED\"$X}" ;;
    release)
        out "{\"type\":\"exit\",\"resource\":\"cs\"$X}"; out "{\"type\":\"state\",\"state\":\"RELEASED\"$X}"
        if [[ $ID == 1 ]]; then freed; else send 1 RELEASE; fi ;;
    recv)
        [[ $line =~ ^\{\"body\":\{\"type\":\"([A-Z]+)\" ]]; kind=${BASH_REMATCH[1]}
        [[ $line =~ \"from\":([0-9]+),\"type\":\"recv\"\}$ ]]; from=${BASH_REMATCH[1]}
        case $kind in
        ASK) asked "$from" ;;
        RELEASE) freed ;;
        GRANT) enter ;;
        esac ;;
    esac
    out "{\"type\":\"done\"$X}"; flush
done
[[ ${F[exit3]} ]] && exit 3
exit 0
