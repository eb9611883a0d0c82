// Suzuki–Kasami's broadcast token algorithm, written from docs/test-any-program.md: an ES
// module reading its input with `for await` over readline, each answer computed in an async
// function that waits a timer tick (setTimeout) before it writes — all before its done.
// --eager: the holder hands the token to any asker, even while inside (two inside).
// --late: the enter is written by a timer after the done.
import { createInterface } from "node:readline";

const EAGER = process.argv.includes("--eager");
const LATE = process.argv.includes("--late");
const tick = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const write = (o) => process.stdout.write(JSON.stringify(o) + "\n");

let me, n, rn, token, inside, asking;

function init(m) {
  me = m.id; n = m.nodes;
  rn = new Array(n + 1).fill(0);
  token = me === 1 ? { ln: new Array(n + 1).fill(0), queue: [] } : null;
  inside = false; asking = false;
}

function enter(lines) {
  inside = true;
  lines.push({ type: "enter", resource: "cs" });
}

function passOn(lines) {
  if (!token || inside) return;
  for (let j = 1; j <= n; j++) {
    if (j !== me && !token.queue.includes(j) && rn[j] === token.ln[j] + 1) token.queue.push(j);
  }
  if (token.queue.length > 0) {
    const next = token.queue.shift();
    lines.push({ type: "send", to: next, body: { type: "TOKEN", ln: token.ln.slice(1), queue: token.queue } });
    token = null;
  }
}

async function answer(m) {
  await tick(1);
  const lines = [];
  switch (m.type) {
    case "request":
      asking = true;
      if (token) { asking = false; enter(lines); break; }
      rn[me] += 1;
      for (let j = 1; j <= n; j++) if (j !== me) lines.push({ type: "send", to: j, body: { type: "REQUEST", sn: rn[me] } });
      break;
    case "release":
      inside = false;
      lines.push({ type: "exit", resource: "cs" });
      if (token) { token.ln[me] = rn[me]; passOn(lines); }
      break;
    case "recv": {
      const b = m.body;
      if (b.type === "REQUEST") {
        rn[m.from] = Math.max(rn[m.from], b.sn);
        if (token && EAGER && rn[m.from] === token.ln[m.from] + 1) {
          lines.push({ type: "send", to: m.from, body: { type: "TOKEN", ln: token.ln.slice(1), queue: token.queue } });
          token = null;
        } else if (token && !asking) passOn(lines);
      } else if (b.type === "TOKEN") {
        token = { ln: [0, ...b.ln], queue: b.queue };
        asking = false;
        if (LATE) { setTimeout(() => { inside = true; write({ type: "enter", resource: "cs" }); }, 5); break; }
        enter(lines);
      }
      break;
    }
  }
  return lines;
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  const m = JSON.parse(line);
  if (m.type === "init") { init(m); write({ type: "done", reinit: true }); continue; }
  for (const o of await answer(m)) write(o);
  write({ type: "done" });
}
