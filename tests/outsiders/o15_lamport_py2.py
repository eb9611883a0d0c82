#!/usr/bin/env python2
# -*- coding: utf-8 -*-
#
# Lamport's mutual exclusion (1978) for mutexlab's node protocol -- Python 2.7, the department's
# cluster still runs it.  Written from docs/test-any-program.md only.
#
# Every node keeps the whole request queue, ordered by (timestamp, id).  A node enters once its
# own request heads the queue and it has heard from every peer with a later timestamp (links are
# FIFO, which the algorithm needs).  RELEASE is broadcast on exit.
#
#   python2 o15_lamport_py2.py              the node
#   BROKEN_TIE=1 python2 o15_lamport_py2.py compares timestamps only (equal stamps: both first)
#   python2 o15_lamport_py2.py --iterate    reads with "for line in sys.stdin" (our old habit)
import json
import os
import sys

BROKEN_TIE = os.environ.get('BROKEN_TIE') == '1'


class Node(object):
    def __init__(self, msg):
        self.me = msg['id']
        self.peers = list(msg['peers'])
        self.clock = 0
        self.queue = []          # [(ts, id)]
        self.last_seen = {}      # peer -> latest timestamp heard from it
        for p in self.peers:
            self.last_seen[p] = 0
        self.mine = None         # (ts, id) of my pending request
        self.inside = False

    def tick(self, other=0):
        self.clock = max(self.clock, other) + 1
        return self.clock

    def first(self, a, b):
        if BROKEN_TIE:
            return a[0] <= b[0]
        return a < b             # tuples: timestamp, then id

    def can_enter(self):
        if self.mine is None or self.inside:
            return False
        for entry in self.queue:
            if entry != self.mine and not self.first(self.mine, entry):
                return False
        for p in self.peers:
            if self.last_seen[p] <= self.mine[0]:
                return False
        return True


out = []


def emit(**kw):
    out.append(json.dumps(kw))


def try_enter(node):
    if node.can_enter():
        node.inside = True
        emit(type='enter', resource='cs')


def handle(node, msg):
    kind = msg['type']
    if kind == 'request':
        ts = node.tick()
        node.mine = (ts, node.me)
        node.queue.append(node.mine)
        node.queue.sort()
        for p in node.peers:
            emit(type='send', to=p, body={'type': 'REQUEST', 'ts': ts})
        try_enter(node)
    elif kind == 'release':
        node.inside = False
        node.queue.remove(node.mine)
        node.mine = None
        emit(type='exit', resource='cs')
        ts = node.tick()
        for p in node.peers:
            emit(type='send', to=p, body={'type': 'RELEASE', 'ts': ts})
    elif kind == 'recv':
        body, sender = msg['body'], msg['from']
        node.tick(body['ts'])
        node.last_seen[sender] = max(node.last_seen[sender], body['ts'])
        if body['type'] == 'REQUEST':
            node.queue.append((body['ts'], sender))
            node.queue.sort()
            emit(type='send', to=sender, body={'type': 'ACK', 'ts': node.tick()})
        elif body['type'] == 'RELEASE':
            node.queue = [e for e in node.queue if e[1] != sender]
        try_enter(node)


def lines():
    if '--iterate' in sys.argv:
        for line in sys.stdin:
            yield line
        return
    while True:
        try:
            yield raw_input()
        except EOFError:
            return


def main():
    node = None
    for line in lines():
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        del out[:]
        if msg['type'] == 'init':
            node = Node(msg)
            print json.dumps({'type': 'done', 'reinit': True})
        else:
            handle(node, msg)
            for l in out:
                print l
            print json.dumps({'type': 'done'})
        sys.stdout.flush()


if __name__ == '__main__':
    main()
