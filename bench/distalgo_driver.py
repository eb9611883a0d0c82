"""Run one DistAlgo program with its sends and critical-section entries counted (Python 3.7 only).

Used by ``bench/distalgo.py`` inside the DistAlgo venv: ``python distalgo_driver.py FILE.da ARGS``.
Patches, in every DistAlgo process (forked from this one), ``DistProcess.send`` (protocol messages,
counted per addressee; the examples' termination messages ``done``/``Done`` left out),
``output`` (a line containing ``in cs`` is one entry, stamped) and ``_delayed_start`` (the
process's ``run`` timed); each process prints one line ``DA-COUNT {json}`` to stderr at its end.
This file is not part of the mutexlab package (it runs on DistAlgo's interpreter).
"""

import json
import sys
import time

import da.__main__
import da.sim

_send, _output, _start = da.sim.DistProcess.send, da.sim.DistProcess.output, da.sim.DistProcess._delayed_start  # noqa: SLF001 - DistAlgo's start-up hook, which it offers no public way to replace
STATS = {"sent": 0, "entries": 0, "first_entry": None, "last_entry": None, "start": None, "end": None}


def _is_done(message):
    return isinstance(message, tuple) and message and str(message[0]).lower() == "done"


def send(self, message, to, channel=None, **rest):
    if not _is_done(message):
        # a set (or list) of addressees, else one process id (itself a tuple: not counted by length)
        STATS["sent"] += len(to) if isinstance(to, (set, frozenset, list)) else 1
    return _send(self, message, to, channel=channel, **rest)


def output(self, *message, **kwargs):
    if message and "in cs" in str(message[0]).lower():
        now = time.time()
        STATS["entries"] += 1
        STATS["first_entry"] = STATS["first_entry"] or now
        STATS["last_entry"] = now
    return _output(self, *message, **kwargs)


def delayed_start(self):
    STATS["start"] = time.time()
    try:
        return _start(self)
    finally:
        STATS["end"] = time.time()
        sys.stderr.write("DA-COUNT " + json.dumps(dict(STATS, process=str(self._id))) + "\n")
        sys.stderr.flush()


da.sim.DistProcess.send = send
da.sim.DistProcess.output = output
da.sim.DistProcess._delayed_start = delayed_start  # noqa: SLF001 - see above

if __name__ == "__main__":
    sys.argv = ["da", *sys.argv[1:]]
    sys.exit(da.__main__.libmain())
