#!/usr/bin/gawk -f
# Dining philosophers for `mutexlab test philosophers`, Chandy-Misra's hygienic forks, in gawk.
# Written the gawk way: no JSON library, fields cut out with match(); the input line's own
# "type" is its last key (mutexlab sorts them), so it is taken from the end of the line.
#   -v bug=greedy   a hungry philosopher keeps a dirty fork it is asked for (deadlock)
#   -v bug=wrap     the fork shared across the table's wrap goes to philosopher N-1 (off by one)
#   -v bug=onefork  eats as soon as it holds its left fork
#   -v bug=noflush  never calls fflush()
#   -v bug=twolines writes an answer and its done on one line
function num(key,   m) { return match($0, "\"" key "\":(-?[0-9]+)", m) ? m[1] + 0 : -1 }
function out(s) { buf = buf s "\n" }
function other(f) {                      # the neighbour sharing fork f with me
  if (f == id) { if (id == 1) return (bug == "wrap" && n > 2) ? n - 1 : n; return id - 1 }
  return f                               # my right fork f is philosopher f's left
}
function send(to, type, f) { out("{\"type\":\"send\",\"to\":" to ",\"body\":{\"type\":\"" type "\",\"fork\":" f "}}") }
function askall(   f) {
  for (f in mine) if (!fork[f] && token[f]) { send(other(f), "REQ", f); token[f] = 0 }
}
function tryeat() {
  if (state == "HUNGRY" && fork[left] && (fork[right] || bug == "onefork")) {
    state = "EATING"
    out("{\"type\":\"enter\",\"resource\":\"fork:" left "\"}")
    if (fork[right]) out("{\"type\":\"enter\",\"resource\":\"fork:" right "\"}")
    out("{\"type\":\"enter\",\"resource\":\"meal\"}")
    out("{\"type\":\"state\",\"state\":\"EATING\"}")
  }
}
function give(f) {                       # a request for f is pending here
  if (fork[f] && dirty[f] && state != "EATING" && !(bug == "greedy" && state == "HUNGRY")) {
    fork[f] = 0; dirty[f] = 0; send(other(f), "FORK", f)
    if (state == "HUNGRY") { send(other(f), "REQ", f); token[f] = 0 }
  }
}
{
  buf = ""
  if (!match($0, /"type":"([a-z]+)"}$/, t)) { print "{\"type\":\"log\",\"unparsed\":1}" ; next }
  kind = t[1]
  if (kind == "init") {
    id = num("id"); n = num("nodes"); left = id; right = id % n + 1
    delete mine; delete fork; delete token; delete dirty
    mine[left] = 1; mine[right] = 1
    for (f in mine) {                    # the fork starts, dirty, with the lower id
      o = other(f + 0)
      if (id < o) { fork[f] = 1; dirty[f] = 1; token[f] = 0 } else { fork[f] = 0; token[f] = 1 }
    }
    state = "THINKING"
    out("{\"type\":\"done\",\"reinit\":true}")
  } else if (kind == "request") {
    state = "HUNGRY"; out("{\"type\":\"state\",\"state\":\"HUNGRY\"}")
    askall(); tryeat()
    out("{\"type\":\"done\"}")
  } else if (kind == "release") {
    state = "THINKING"
    out("{\"type\":\"exit\",\"resource\":\"meal\"}")
    out("{\"type\":\"exit\",\"resource\":\"fork:" left "\"}")
    if (fork[right]) out("{\"type\":\"exit\",\"resource\":\"fork:" right "\"}")
    out("{\"type\":\"state\",\"state\":\"THINKING\"}")
    for (f in mine) { dirty[f] = 1; if (token[f]) give(f + 0) }
    out("{\"type\":\"done\"}")
  } else if (kind == "recv") {
    f = num("fork")
    if ($0 ~ /"type":"REQ"/) { token[f] = 1; give(f) }
    else { fork[f] = 1; dirty[f] = 0; tryeat() }
    out("{\"type\":\"done\"}")
  }
  if (bug == "twolines") sub(/\n\{"type":"done"\}\n$/, "{\"type\":\"done\"}\n", buf)
  printf "%s", buf
  if (bug != "noflush") fflush()
}
