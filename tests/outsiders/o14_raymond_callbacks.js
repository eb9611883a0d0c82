// Raymond's tree mutex for mutexlab's line protocol, from the docs alone, in callback style.
//
// Node i's parent in the tree is floor(i / 2); node 1 starts with the token. Input comes from
// 'data' events (the chunks split into lines by hand, the tail kept for the next chunk); each
// answer's lines are written one by one, the next from the callback of the write before it, the
// done line last: the answer is complete only once the stream has taken it all.
//
// --no-reask: after handing the token on at a release, the node forgets to ask for it back on
// behalf of the requests still queued behind the one it served.
"use strict";

const NO_REASK = process.argv.includes("--no-reask");

let me = 0;
let holder = 0;
let using = false;
let asked = false;
let queue = [];

function reset(id) {
  me = id;
  holder = id === 1 ? 1 : Math.floor(id / 2);
  using = false;
  asked = false;
  queue = [];
}

function assignPrivilege(out) {
  if (holder !== me || using || queue.length === 0) return;
  const head = queue.shift();
  asked = false;
  if (head === me) {
    using = true;
    out.push({ type: "enter", resource: "cs" });
  } else {
    holder = head;
    out.push({ type: "send", to: head, body: { type: "TOKEN" } });
  }
}

function makeRequest(out) {
  if (holder !== me && queue.length > 0 && !asked) {
    out.push({ type: "send", to: holder, body: { type: "REQUEST" } });
    asked = true;
  }
}

function handle(msg) {
  const out = [];
  switch (msg.type) {
    case "init":
      reset(msg.id);
      return [{ type: "done", reinit: true }];
    case "request":
      queue.push(me);
      assignPrivilege(out);
      makeRequest(out);
      break;
    case "release":
      using = false;
      out.push({ type: "exit", resource: "cs" });
      assignPrivilege(out);
      if (!NO_REASK) makeRequest(out);
      break;
    case "recv":
      if (msg.body.type === "REQUEST") {
        queue.push(msg.from);
      } else if (msg.body.type === "TOKEN") {
        holder = me;
      }
      assignPrivilege(out);
      makeRequest(out);
      break;
    default:
      break;
  }
  out.push({ type: "done" });
  return out;
}

// Each answer written line after line, in the order the inputs came.
let writing = Promise.resolve();

function writeLines(lines) {
  return new Promise((resolve, reject) => {
    const next = (i) => {
      if (i === lines.length) return resolve();
      process.stdout.write(JSON.stringify(lines[i]) + "\n", (err) => (err ? reject(err) : next(i + 1)));
    };
    next(0);
  });
}

let tail = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  const parts = (tail + chunk).split("\n");
  tail = parts.pop();
  for (const part of parts) {
    if (part.trim() === "") continue;
    const answer = handle(JSON.parse(part));
    writing = writing.then(() => writeLines(answer));
  }
});
process.stdin.on("end", () => {
  writing.then(() => process.exit(0));
});
