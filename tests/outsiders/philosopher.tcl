#!/usr/bin/env tclsh
# A dining philosopher in Tcl, written outside mutexlab from docs/test-any-program.md alone:
# Chandy-Misra forks (dirty or clean), lines parsed with regexp (tclsh has no JSON), the input's own
# type read as its last key. Its argument -broken forgets to hand on its right fork after a meal.
set broken [expr {[lsearch $argv -broken] >= 0}]
fconfigure stdout -buffering line
fconfigure stdin -buffering line
proc out {s} { puts $s }
proc reset {} {
  global id n have dirty deferred hungry eating
  array unset have; array unset dirty; array unset deferred
  set hungry 0; set eating 0
}
proc left {} { global id; return $id }
proc right {} { global id n; return [expr {$id % $n + 1}] }
proc other {f} {
  # the neighbour sharing fork f with me
  global id n
  if {$f == $id} { return [expr {$id == 1 ? $n : $id - 1}] }
  return [expr {$id % $n + 1}]
}
proc tryeat {} {
  global have hungry eating
  if {$hungry && $have([left]) && $have([right])} {
    set eating 1; set hungry 0
    out "{\"type\":\"enter\",\"resource\":\"fork:[left]\"}"
    out "{\"type\":\"enter\",\"resource\":\"fork:[right]\"}"
    out "{\"type\":\"enter\",\"resource\":\"meal\"}"
    out {{"type":"state","state":"EATING"}}
  }
}
proc give {f} {
  global have deferred
  set have($f) 0; set deferred($f) 0
  out "{\"type\":\"send\",\"to\":[other $f],\"body\":{\"type\":\"FORK\",\"fork\":$f}}"
}
proc ask {f} {
  out "{\"type\":\"send\",\"to\":[other $f],\"body\":{\"type\":\"REQ\",\"fork\":$f}}"
}
reset
while {[gets stdin line] >= 0} {
  if {![regexp {"type":"(\w+)"\}$} $line -> type]} { out {{"type":"done"}}; continue }
  switch $type {
    init {
      reset
      regexp {"id":(\d+)} $line -> id
      regexp {"nodes":(\d+)} $line -> n
      foreach f [list [left] [right]] {
        set o [other $f]
        set have($f) [expr {$id < $o}]
        set dirty($f) 1
        set deferred($f) 0
      }
      out {{"type":"state","state":"THINKING"}}
      out {{"type":"done","reinit":true}}
      continue
    }
    request {
      set hungry 1
      out {{"type":"state","state":"HUNGRY"}}
      foreach f [lsort -unique [list [left] [right]]] { if {!$have($f)} { ask $f } }
      tryeat
    }
    release {
      set eating 0
      out {{"type":"exit","resource":"meal"}}
      out "{\"type\":\"exit\",\"resource\":\"fork:[left]\"}"
      out "{\"type\":\"exit\",\"resource\":\"fork:[right]\"}"
      out {{"type":"state","state":"THINKING"}}
      set dirty([left]) 1; set dirty([right]) 1
      foreach f [list [left] [right]] {
        if {$deferred($f)} {
          if {$broken && $f == [right]} continue
          give $f
        }
      }
    }
    recv {
      regexp {"body":\{"fork":(\d+),"type":"(\w+)"\}} $line -> f kind
      if {$kind eq "REQ"} {
        if {$have($f) && $dirty($f) && !$eating} {
          give $f
          if {$hungry} { ask $f }
        } else {
          set deferred($f) 1
        }
      } else {
        set have($f) 1; set dirty($f) 0
        tryeat
      }
    }
  }
  out {{"type":"done"}}
}
