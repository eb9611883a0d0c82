#!/usr/bin/env python3
"""A central-coordinator mutex node written with asyncio, importing nothing of mutexlab: node 1
grants `cs` in request order. Standard input is read by an asyncio stream, each input handled by
a coroutine and answered (then `done`) before the next is read.

GRANT_ALWAYS = True is its bug: the coordinator grants without waiting for the holder's RELEASE."""

import asyncio
import json
import sys

GRANT_ALWAYS = False


class Coordinator:
    def __init__(self, me):
        self.me, self.holder, self.queue = me, None, []

    async def arrive(self, who, out):
        if self.holder is None or GRANT_ALWAYS:
            await self.grant(who, out)
        else:
            self.queue.append(who)

    async def grant(self, who, out):
        self.holder = who
        if who == self.me:
            out({"type": "enter", "resource": "cs"})
        else:
            out({"type": "send", "to": who, "body": {"type": "GRANT"}})

    async def leave(self, out):
        self.holder = None
        if self.queue:
            await self.grant(self.queue.pop(0), out)


async def handle(node, line, out):
    kind = line["type"]
    if kind == "request":
        if node.me == 1:
            await node.arrive(1, out)
        else:
            out({"type": "send", "to": 1, "body": {"type": "REQUEST"}})
    elif kind == "release":
        out({"type": "exit", "resource": "cs"})
        if node.me == 1:
            await node.leave(out)
        else:
            out({"type": "send", "to": 1, "body": {"type": "RELEASE"}})
    elif kind == "recv":
        body = line["body"]["type"]
        if body == "REQUEST":
            await node.arrive(line["from"], out)
        elif body == "RELEASE":
            await node.leave(out)
        elif body == "GRANT":
            out({"type": "enter", "resource": "cs"})


async def main():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def out(message):
        sys.stdout.write(json.dumps(message) + "\n")

    node = None
    while line := await reader.readline():
        message = json.loads(line)
        if message["type"] == "init":
            node = Coordinator(message["id"])
            out({"type": "done", "reinit": True})
        else:
            await handle(node, message, out)
            out({"type": "done"})
        sys.stdout.flush()


asyncio.run(main())
