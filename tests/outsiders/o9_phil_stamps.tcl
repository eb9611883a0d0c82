#!/usr/bin/env tclsh
# Dining philosophers for mutexlab's node protocol, in Tcl's event loop (fileevent on a
# non-blocking stdin, vwait): a hungry philosopher stamps its hunger with its Lamport clock and
# asks its neighbours for the forks it lacks; a fork goes to the earlier hunger, (stamp, id) in
# order, and a philosopher that gives one up while hungry asks for it back. Output fully
# buffered, flushed after each done. Written from docs/test-any-program.md alone.
#   -forget        after a meal it forgets to hand on a fork asked for while it ate (its neighbour starves)
#   -exit-early    exits once it has eaten all its meals (before its input ends)
set forget [expr {"-forget" in $argv}]
set early [expr {"-exit-early" in $argv}]
fconfigure stdin -blocking 0 -buffering line -translation lf
fconfigure stdout -buffering full -translation lf

proc emit {s} { puts stdout $s }
proc field {text name} {
  # a number field of the line (top level or in its body: the names used here are unique)
  if {[regexp "\"$name\":(-?\\d+)" $text -> v]} { return $v }
  return ""
}
proc neighbour {f} {
  # who shares fork f with me: f is my left (f == id) or my right
  global id n
  if {$f == $id} { return [expr {$id == 1 ? $n : $id - 1}] }
  return [expr {$id % $n + 1}]
}
proc forks {} { global id n; return [list $id [expr {$id % $n + 1}]] }
proc before {ts1 id1 ts2 id2} {
  return [expr {$ts1 < $ts2 || ($ts1 == $ts2 && $id1 < $id2)}]
}
proc give {f} {
  global have clock
  set have($f) 0
  incr clock
  emit "{\"type\":\"send\",\"to\":[neighbour $f],\"body\":{\"type\":\"FORK\",\"fork\":$f,\"ts\":$clock}}"
}
proc ask {f} {
  global stamp
  emit "{\"type\":\"send\",\"to\":[neighbour $f],\"body\":{\"type\":\"ASK\",\"fork\":$f,\"ts\":$stamp}}"
}
proc try_eat {} {
  global hungry eating have
  lassign [forks] l r
  if {$hungry && $have($l) && $have($r)} {
    set hungry 0; set eating 1
    emit "{\"type\":\"enter\",\"resource\":\"fork:$l\"}"
    emit "{\"type\":\"enter\",\"resource\":\"fork:$r\"}"
    emit {{"type":"enter","resource":"meal"}}
    emit {{"type":"state","state":"EATING"}}
  }
}
proc init {text} {
  global id n clock hungry eating stamp have asked meals eaten
  set id [field $text id]; set n [field $text nodes]; set meals [field $text meals]
  set clock 0; set hungry 0; set eating 0; set stamp 0; set eaten 0
  array unset have; array unset asked
  # a fork starts with the lower-numbered of its two philosophers
  foreach f [forks] {
    set other [neighbour $f]
    set have($f) [expr {$id < $other}]
    set asked($f) ""
  }
}
proc handle {text} {
  global clock hungry eating stamp have asked id meals eaten early forget
  regexp {"type":"(\w+)"\}$} $text -> type
  switch -- $type {
    init { init $text; return {{"type":"done","reinit":true}} }
    request {
      set hungry 1; set stamp [incr clock]
      emit {{"type":"state","state":"HUNGRY"}}
      foreach f [forks] { if {!$have($f)} { ask $f } }
      try_eat
    }
    release {
      set eating 0; incr eaten
      lassign [forks] l r
      emit {{"type":"exit","resource":"meal"}}
      emit "{\"type\":\"exit\",\"resource\":\"fork:$l\"}"
      emit "{\"type\":\"exit\",\"resource\":\"fork:$r\"}"
      emit {{"type":"state","state":"THINKING"}}
      foreach f [forks] {
        if {$asked($f) ne "" && !$forget} { set asked($f) ""; give $f }
      }
      if {$early && $eaten == $meals} { emit {{"type":"done"}}; flush stdout; exit 0 }
    }
    recv {
      regexp {"body":\{([^\}]*)\}} $text -> body
      regexp {"type":"(\w+)"} $body -> what
      set from [field $text from]; set f [field $body fork]; set ts [field $body ts]
      if {$ts > $clock} { set clock $ts }
      incr clock
      if {$what eq "FORK"} {
        set have($f) 1
        set a $asked($f)
        if {$a ne "" && (!$hungry || ![before $stamp $id $a $from])} {
          set asked($f) ""; give $f
          if {$hungry} { ask $f }
        }
        try_eat
      } elseif {!$have($f)} {
        set asked($f) $ts   ;# it is on its way to me: answered when it comes
      } elseif {$eating || ($hungry && [before $stamp $id $ts $from])} {
        set asked($f) $ts
      } else {
        give $f
        if {$hungry} { ask $f }
      }
    }
  }
  return {{"type":"done"}}
}
proc onread {} {
  if {[gets stdin line] < 0} {
    if {[eof stdin]} { exit 0 }
    return   ;# half a line so far
  }
  if {[string trim $line] eq ""} { return }
  emit [handle $line]
  flush stdout
}
fileevent stdin readable onread
vwait forever
