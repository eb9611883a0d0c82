#!/usr/bin/env python3
# Raymond's tree-based token algorithm, as a node for `mutexlab test mutex --node ...`.
#
# The nodes form a fixed tree: node i's parent is i // 2 (node 1 is the root and starts with
# the PRIVILEGE).  HOLDER points towards the privilege; each node queues who asked it.
#
# I/O is done on the raw file descriptors (os.read / os.write): no Python buffering anywhere,
# so nothing ever needs a flush.  After each release the node also writes a little stats line
# (a "log" line: the protocol ignores those) in the same write as its done.
#
#   RAYMOND_BUG=1   hand the privilege on as soon as someone asks, even while using it
import json
import os
import sys

STDIN, STDOUT = 0, 1
BUG = os.environ.get("RAYMOND_BUG") == "1"


class Raymond:
    def __init__(self, me, n):
        self.me, self.n = me, n
        self.parent = me // 2 if me > 1 else None
        self.holder = me if me == 1 else self.parent
        self.using = False
        self.asked = False
        self.queue = []
        self.entries = 0

    # --- the two procedures from the paper -------------------------------------------------
    def assign_privilege(self, out):
        if self.holder == self.me and (not self.using or BUG) and self.queue:
            self.holder = self.queue.pop(0)
            self.asked = False
            if self.holder == self.me:
                self.using = True
                self.entries += 1
                out.append({"type": "enter", "resource": "cs"})
            else:
                out.append({"type": "send", "to": self.holder, "body": {"type": "PRIVILEGE"}})

    def make_request(self, out):
        if self.holder != self.me and self.queue and not self.asked:
            out.append({"type": "send", "to": self.holder, "body": {"type": "REQUEST"}})
            self.asked = True

    # --- events ---------------------------------------------------------------------------------
    def on(self, msg, out):
        t = msg["type"]
        if t == "request":
            self.queue.append(self.me)
        elif t == "release":
            self.using = False
            out.append({"type": "exit", "resource": "cs"})
        elif t == "recv":
            kind = msg["body"].get("type")
            if kind == "REQUEST":
                self.queue.append(msg["from"])
            elif kind == "PRIVILEGE":
                self.holder = self.me
            else:
                os.write(2, f"node {self.me}: what is {kind!r}?\n".encode())
        self.assign_privilege(out)
        self.make_request(out)


def write_lines(objs):
    data = b"".join(json.dumps(o, separators=(",", ":")).encode() + b"\n" for o in objs)
    while data:
        n = os.write(STDOUT, data)
        data = data[n:]


def main():
    node = None
    pending = b""
    while True:
        chunk = os.read(STDIN, 65536)
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for raw in lines:
            if not raw.strip():
                continue
            msg = json.loads(raw)
            if msg["type"] == "init":
                node = Raymond(msg["id"], msg["nodes"])
                write_lines([{"type": "done", "reinit": True}])
                continue
            out = []
            node.on(msg, out)
            out.append({"type": "done"})
            if msg["type"] == "release":
                out.append({"type": "log", "stats": {"node": node.me, "entries": node.entries}})
            write_lines(out)
    sys.exit(0)


if __name__ == "__main__":
    main()
