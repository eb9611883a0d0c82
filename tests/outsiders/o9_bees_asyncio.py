#!/usr/bin/env python3
"""Mason bees for mutexlab's node protocol, in Python's asyncio: standard input and output as an
asyncio StreamReader and StreamWriter (connect_read_pipe / connect_write_pipe), each answer written
and drained at once. Written from docs/test-any-program.md alone.

The reeds are dealt by rank, no messages: bee i has rank i-1, reed rank % T + 1, and is the
(rank // T)-th bee of that reed; a reed holds cocoons // eggs bees, so the bees past that retire
at once. A bee waits for the bee before it on its reed to hand the reed on (HANDOFF). The flowers
are kept by bee 1, who grants them in order of asking (FLOWER / GRANT / BACK). On a flower a bee
writes ``pause``; at the ``wake`` it leaves the flower and lays its egg.

  --greedy   bee 1 grants a flower when none is free (K + 1 on the flowers)
  --chatty   prints each grant on standard output (a line that is not JSON)
"""

import asyncio
import json
import sys

GREEDY = "--greedy" in sys.argv
CHATTY = "--chatty" in sys.argv


class Bee:
    def __init__(self, init: dict) -> None:
        self.me, self.n = init["id"], init["nodes"]
        o = init["options"]
        self.reeds, self.eggs, self.flowers = o["reeds"], o["eggs"], o["flowers"]
        self.fit = o["cocoons"] // o["eggs"]
        rank = self.me - 1
        self.reed, self.place = rank % self.reeds + 1, rank // self.reeds
        self.laid = 0
        self.free, self.waiting = self.flowers, []  # bee 1's, the keeper's
        self.out: list[dict] = []

    def say(self, **line) -> None:
        self.out.append(line)

    def send(self, to: int, kind: str, **body) -> None:
        self.say(type="send", to=to, body={"type": kind, **body})

    # --- a bee's life
    def start(self) -> None:
        if self.place >= self.fit:
            self.say(type="event", event="retire", rank=self.me - 1, would_be_reed=self.reed)
            self.say(type="state", state="RETIRED")
        elif self.place == 0:
            self.take_reed()
        else:
            self.say(type="state", state="WAIT_REED")

    def take_reed(self) -> None:
        self.say(type="enter", resource=f"reed:{self.reed}")
        self.say(type="state", state="ON_REED")
        self.ask_flower()

    def ask_flower(self) -> None:
        self.say(type="state", state="WAIT_FLOWER")
        if self.me == 1:
            self.keeper(1, "FLOWER")
        else:
            self.send(1, "FLOWER")

    def on_flower(self) -> None:
        self.say(type="enter", resource="flower")
        self.say(type="state", state="ON_FLOWER")
        self.say(type="pause")

    def wake(self) -> None:
        self.say(type="exit", resource="flower")
        self.laid += 1
        in_reed = self.place * self.eggs + self.laid
        self.say(type="event", event="egg", reed=self.reed, count=self.laid, in_reed=in_reed)
        if self.me == 1:
            self.keeper(1, "BACK")
        else:
            self.send(1, "BACK")
        if self.laid < self.eggs:
            self.say(type="state", state="ON_REED")
            self.ask_flower()
            return
        self.say(type="exit", resource=f"reed:{self.reed}")
        self.say(type="event", event="death", eggs=self.laid)
        self.say(type="state", state="DEAD")
        after = self.me + self.reeds
        if after <= self.n and self.place + 1 < self.fit:
            self.send(after, "HANDOFF", reed=self.reed)

    # --- bee 1 keeps the flowers
    def keeper(self, sender: int, kind: str) -> None:
        if kind == "FLOWER":
            self.waiting.append(sender)
        elif kind == "BACK":
            self.free += 1
        while self.waiting and (self.free > 0 or (GREEDY and self.free == 0)):
            bee = self.waiting.pop(0)
            self.free -= 1
            if CHATTY:
                print(f"granted a flower to bee {bee}, {self.free} left", flush=True)
            if bee == 1:
                self.on_flower()
            else:
                self.send(bee, "GRANT")

    def recv(self, sender: int, body: dict) -> None:
        kind = body["type"]
        if kind in ("FLOWER", "BACK"):
            self.keeper(sender, kind)
        elif kind == "GRANT":
            self.on_flower()
        elif kind == "HANDOFF":
            self.take_reed()


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    bee = None
    while line := await reader.readline():
        if not line.strip():
            continue
        msg = json.loads(line)
        done: dict = {"type": "done"}
        if msg["type"] == "init":
            bee = Bee(msg)
            bee.start()
            done["reinit"] = True
        elif msg["type"] == "recv":
            bee.recv(msg["from"], msg["body"])
        elif msg["type"] == "wake":
            bee.wake()
        lines = bee.out + [done]
        bee.out = []
        writer.write(b"".join(json.dumps(o).encode() + b"\n" for o in lines))
        await writer.drain()


asyncio.run(main())
