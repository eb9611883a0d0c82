#!/usr/bin/env python3
"""Mason bees for mutexlab's node protocol, asyncio style.

Bee 1 doubles as the hive's registrar: every bee (bee 1 too) asks it for a reed
and for a flower and tells it when it leaves them. Reeds go by arrival order:
the r-th bee to ask gets reed r mod T + 1 as that reed's (r div T)-th bee, and
bees beyond cocoons/eggs per reed retire.

stdin is read through asyncio.StreamReader (connect_read_pipe); everything an
input causes is collected and written, then flushed, in one go.

flags: --broken (registrar lets K+1 bees on the flowers), --banner (says hello
on stdout), --stderr-mb N (N MB of debug on stderr per init), --two-per-line
(flower enter and exit on one line), --segv (bee 2 dies of SIGSEGV on its 2nd
egg), --flood (bee 2 answers its reed with log lines forever),
--endless-line (bee 2 writes one line that never ends)
"""

import asyncio
import json
import os
import signal
import sys

FLAGS = set(sys.argv[1:])
STDERR_MB = 0
if "--stderr-mb" in sys.argv:
    STDERR_MB = int(sys.argv[sys.argv.index("--stderr-mb") + 1])

REGISTRAR = 1


class Bee:
    def __init__(self, msg):
        self.me = msg["id"]
        o = msg["options"]
        self.eggs_each, self.reeds, self.flowers = o["eggs"], o["reeds"], o["flowers"]
        self.per_reed = o["cocoons"] // o["eggs"]
        self.out = []
        # my own life
        self.reed = None
        self.base = 0
        self.laid = 0
        # the registrar's books (bee 1 only)
        self.rank = 0
        self.reed_busy = {}
        self.reed_wait = {}
        self.free = self.flowers
        self.flower_wait = []

    def emit(self, **line):
        self.out.append(line)

    def tell(self, to, **body):
        if to == self.me:
            self.on_message(self.me, body)
        else:
            self.emit(type="send", to=to, body=body)

    # --- the registrar -------------------------------------------------
    def reg_reed(self, who):
        r = self.rank
        self.rank += 1
        reed, slot = r % self.reeds + 1, r // self.reeds
        if slot >= self.per_reed:
            self.tell(who, type="RETIRE", would_be_reed=reed)
        elif self.reed_busy.get(reed):
            self.reed_wait.setdefault(reed, []).append((who, slot))
        else:
            self.reed_busy[reed] = True
            self.tell(who, type="REED", reed=reed, base=slot * self.eggs_each)

    def reg_reed_free(self, reed):
        self.reed_busy[reed] = False
        waiting = self.reed_wait.get(reed)
        if waiting:
            who, slot = waiting.pop(0)
            self.reed_busy[reed] = True
            self.tell(who, type="REED", reed=reed, base=slot * self.eggs_each)

    def reg_flower(self, who):
        room = self.free + 1 if "--broken" in FLAGS else self.free
        if room > 0 and not self.flower_wait:
            self.free -= 1
            self.tell(who, type="FLOWER")
        else:
            self.flower_wait.append(who)

    def reg_flower_free(self):
        self.free += 1
        while self.flower_wait and self.free > 0:
            self.free -= 1
            self.tell(self.flower_wait.pop(0), type="FLOWER")

    # --- a bee ------------------------------------------------------------
    def start(self):
        self.emit(type="state", state="WAIT_REED")
        self.tell(REGISTRAR, type="ASK_REED")

    def on_message(self, frm, body):
        kind = body["type"]
        if kind == "ASK_REED":
            self.reg_reed(frm)
        elif kind == "LEAVE_REED":
            self.reg_reed_free(body["reed"])
        elif kind == "ASK_FLOWER":
            self.reg_flower(frm)
        elif kind == "LEAVE_FLOWER":
            self.reg_flower_free()
        elif kind == "RETIRE":
            self.emit(type="event", event="retire", would_be_reed=body["would_be_reed"])
            self.emit(type="state", state="RETIRED")
        elif kind == "REED":
            self.reed, self.base = body["reed"], body["base"]
            self.emit(type="enter", resource=f"reed:{self.reed}")
            self.emit(type="state", state="ON_REED")
            if "--flood" in FLAGS and self.me == 2:
                while True:
                    sys.stdout.write('{"type":"log","text":"still here"}\n')
            if "--endless-line" in FLAGS and self.me == 2:
                sys.stdout.write('{"type":"log","text":"')
                while True:
                    sys.stdout.write("x" * 65536)
            self.tell(REGISTRAR, type="ASK_FLOWER")
        elif kind == "FLOWER":
            self.laid += 1
            if "--segv" in FLAGS and self.me == 2 and self.laid == 2:
                os.kill(os.getpid(), signal.SIGSEGV)
            if "--two-per-line" in FLAGS:
                self.out.append('{"type":"enter","resource":"flower"}{"type":"exit","resource":"flower"}')
            else:
                self.emit(type="enter", resource="flower")
                self.emit(type="exit", resource="flower")
            self.emit(
                type="event", event="egg", reed=self.reed, count=self.laid, in_reed=self.base + self.laid
            )
            self.tell(REGISTRAR, type="LEAVE_FLOWER")
            if self.laid < self.eggs_each:
                self.tell(REGISTRAR, type="ASK_FLOWER")
            else:
                self.emit(type="exit", resource=f"reed:{self.reed}")
                self.emit(type="event", event="death", eggs=self.laid)
                self.emit(type="state", state="DEAD")
                self.tell(REGISTRAR, type="LEAVE_REED", reed=self.reed)


async def stdin_reader():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    return reader


async def main():
    if "--banner" in FLAGS:
        sys.stdout.write("hive v0.3 ready\n")
    reader = await stdin_reader()
    bee = None
    while True:
        raw = await reader.readline()
        if not raw:
            break
        if not raw.strip():
            continue
        msg = json.loads(raw)
        if msg["type"] == "init":
            bee = Bee(msg)
            if STDERR_MB:
                chunk = f"[bee {bee.me}] debug: " + "." * 1000 + "\n"
                for _ in range(STDERR_MB * 1000):
                    sys.stderr.write(chunk)
                sys.stderr.flush()
            bee.start()
            bee.emit(type="done", reinit=True)
        elif msg["type"] == "recv":
            bee.on_message(msg["from"], msg["body"])
            bee.emit(type="done")
        else:
            bee.emit(type="log", what=f"unexpected {msg['type']}")
            bee.emit(type="done")
        for line in bee.out:
            sys.stdout.write(line if isinstance(line, str) else json.dumps(line))
            sys.stdout.write("\n")
        bee.out = []
        sys.stdout.flush()


asyncio.run(main())
