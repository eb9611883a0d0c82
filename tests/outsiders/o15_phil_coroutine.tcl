#!/usr/bin/env tclsh8.6
# Dining philosophers, Chandy & Misra's hygienic forks, for mutexlab's node protocol
# (docs/test-any-program.md). Tcl 8.6: the philosopher's life is one coroutine that yields
# whenever it waits for something (its hunger, its forks, the end of its meal); the main loop
# reads a line, resumes the coroutine with it, and writes what it said then done.
# No JSON package on our lab machines: fields are read with regexp (the input's own "type" is
# the last key on its line, the doc says; a body's keys come before it).
#
#   BROKEN_CLEAN=1   hands over a fork asked for while eating (two philosophers hold it)

set broken [expr {[info exists ::env(BROKEN_CLEAN)] && $::env(BROKEN_CLEAN) eq "1"}]
fconfigure stdout -buffering full
set out {}

proc say {json} { lappend ::out $json }
proc num {line key} {
  if {[regexp "\"$key\":(\[0-9\]+)" $line -> v]} { return $v }
  return ""
}

# fork f is shared by philosopher f (its left) and f-1 (its right; philosopher n for fork 1)
proc other {f} {
  global me n
  if {$f == $me} { return [expr {$me == 1 ? $n : $me - 1}] }
  return $f
}

proc send_fork {f} {
  global have dirty
  set have($f) 0
  set dirty($f) 0
  say "{\"type\":\"send\",\"to\":[other $f],\"body\":{\"type\":\"FORK\",\"fork\":$f}}"
}

proc ask_fork {f} {
  global token
  set token($f) 0
  say "{\"type\":\"send\",\"to\":[other $f],\"body\":{\"type\":\"REQ\",\"fork\":$f}}"
}

# a request token for fork f has come: give the fork if it is dirty and not in use
proc maybe_give {f} {
  global have dirty token state broken
  if {!$token($f) || !$have($f)} { return }
  if {$state eq "EATING" && !$broken} { return }
  if {$state ne "EATING" && !$dirty($f)} { return }
  send_fork $f
  if {$state eq "HUNGRY"} { ask_fork $f }
}

proc life {} {
  global me n forks have dirty token state
  while 1 {
    set line [yield]
    switch -- [kind $line] {
      request {
        set state HUNGRY
        say {{"type":"state","state":"HUNGRY"}}
        foreach f $forks { if {!$have($f) && $token($f)} { ask_fork $f } }
        try_eat
      }
      release {
        set state THINKING
        say {{"type":"exit","resource":"meal"}}
        foreach f $forks { say "{\"type\":\"exit\",\"resource\":\"fork:$f\"}"; set dirty($f) 1 }
        say {{"type":"state","state":"THINKING"}}
        foreach f $forks { maybe_give $f }
      }
      recv {
        set f [num $line fork]
        if {[string match {*"type":"REQ"*} $line]} {
          set token($f) 1
          maybe_give $f
        } else {
          set have($f) 1
          set dirty($f) 0
          try_eat
        }
      }
    }
  }
}

proc try_eat {} {
  global forks have state
  if {$state ne "HUNGRY"} { return }
  foreach f $forks { if {!$have($f)} { return } }
  set state EATING
  say {{"type":"state","state":"EATING"}}
  foreach f $forks { say "{\"type\":\"enter\",\"resource\":\"fork:$f\"}" }
  say {{"type":"enter","resource":"meal"}}
}

proc kind {line} {
  regexp {"type":"(\w+)"\}\s*$} $line -> k
  return $k
}

proc start {line} {
  global me n forks have dirty token state
  set me [num $line id]
  set n [num $line nodes]
  set forks [list $me [expr {$me % $n + 1}]]
  set state THINKING
  # the fork between i and j starts dirty with the lower id; the request token with the other
  foreach f $forks {
    set mine [expr {$me < [other $f]}]
    set have($f) $mine
    set dirty($f) $mine
    set token($f) [expr {!$mine}]
  }
  catch {rename philosopher {}}
  coroutine philosopher life
}

while {[gets stdin line] >= 0} {
  if {[string trim $line] eq ""} { continue }
  set out {}
  if {[kind $line] eq "init"} {
    start $line
    puts {{"type":"done","reinit":true}}
  } else {
    philosopher $line
    foreach l $out { puts $l }
    puts {{"type":"done"}}
  }
  flush stdout
}
