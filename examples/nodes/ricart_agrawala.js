// Ricart–Agrawala as a mutexlab node in JavaScript (Node.js): JSON Lines on stdin and stdout.
//
//   mutexlab test mutex --node "node examples/nodes/ricart_agrawala.js" --nodes 3
//
// Every input line is answered with the node's outputs and then {"type":"done"}
// (docs/test-any-program.md). A request is (timestamp, id), the smaller first.
"use strict";
const readline = require("readline");

let me = 0, peers = [], clock = 0, myTs = 0;
let requesting = false, holding = false, replies = new Set(), deferred = [];
const out = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const earlier = (tsA, idA, tsB, idB) => tsA < tsB || (tsA === tsB && idA < idB);

function handle(line) {
  if (line.type === "request") {
    myTs = ++clock;
    requesting = true;
    replies = new Set();
    for (const peer of peers) out({ type: "send", to: peer, body: { type: "REQUEST", ts: myTs } });
  } else if (line.type === "release") {
    holding = false;
    out({ type: "exit", resource: "cs" });
    for (const peer of deferred) out({ type: "send", to: peer, body: { type: "REPLY", ts: ++clock } });
    deferred = [];
  } else if (line.type === "recv") {
    const body = line.body, sender = line.from;
    if (body.type === "REQUEST") {
      clock = Math.max(clock, body.ts) + 1;
      if (holding || (requesting && earlier(myTs, me, body.ts, sender))) deferred.push(sender);
      else out({ type: "send", to: sender, body: { type: "REPLY", ts: ++clock } });
    } else if (body.type === "REPLY") {
      replies.add(sender);
    }
  }
  if (requesting && replies.size === peers.length) {
    requesting = false;
    holding = true;
    out({ type: "enter", resource: "cs" });
  }
}

readline.createInterface({ input: process.stdin }).on("line", (text) => {
  const line = JSON.parse(text);
  if (line.type === "init") {
    me = line.id; peers = line.peers; clock = 0; myTs = 0;
    requesting = false; holding = false; replies = new Set(); deferred = [];
    out({ type: "done", reinit: true });
  } else {
    handle(line);
    out({ type: "done" });
  }
});
