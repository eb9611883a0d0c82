// k-mutual exclusion with a coordinator: the lowest id keeps a counting semaphore of k permits,
// the others ASK it and tell it FREE when they leave. Written outside mutexlab from
// docs/test-any-program.md, in plain Node.js: an async readline loop, one write per answer
// (every line of it, the done too, joined), a nickname with a bee in every message.
//   --leaky          the coordinator counts a permit back even when it hands it on (k+1 inside)
//   --cut-nickname   the nickname cut to 5 UTF-16 units, half a bee: JSON.stringify writes \ud83d
//   --typo           reads msg.body.Type (no such field) of the first message: a TypeError
//   --states         writes its states in its own words: waiting, inside, idle
//   --flip FILE      node i counts its starts in FILE.i; its state when asking depends on them
'use strict';
const fs = require('fs');
const readline = require('readline');

const args = process.argv.slice(2);
const LEAKY = args.includes('--leaky');
const CUT = args.includes('--cut-nickname');
const TYPO = args.includes('--typo');
const STATES = args.includes('--states');
const flipAt = args.indexOf('--flip');
let starts = 0;

function countStart(id) {
  const file = `${args[flipAt + 1]}.${id}`;
  starts = fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8') || 0) : 0;
  fs.writeFileSync(file, String(starts + 1));
}

let st = null;

function nickname(id) {
  const full = `🐝🐝🐝 worker ${id}`;
  return CUT ? full.slice(0, 5) : full;
}

function grant(to, out) {
  if (to === st.me) {
    out.push({ type: 'enter', resource: 'cs' });
  } else {
    out.push({ type: 'send', to, body: { type: 'GRANT', nick: nickname(st.me) } });
  }
}

function freed(out) {
  if (LEAKY) st.free += 1;
  if (st.queue.length > 0) grant(st.queue.shift(), out);
  else if (!LEAKY) st.free += 1;
}

async function handle(msg) {
  const out = [];
  if (msg.type === 'init') {
    const everyone = [msg.id, ...msg.peers];
    st = { me: msg.id, coord: Math.min(...everyone), queue: [] };
    st.free = (msg.options && msg.options.k) || 2;
    if (flipAt >= 0) countStart(msg.id);
    out.push({ type: 'log', text: `node ${st.me}, coordinator ${st.coord}, k ${st.free}` });
  } else if (msg.type === 'request') {
    if (STATES) out.push({ type: 'state', state: 'waiting' });
    if (flipAt >= 0) out.push({ type: 'state', state: starts % 2 ? 'ASKING' : 'WANTED' });
    if (st.me !== st.coord) {
      out.push({ type: 'send', to: st.coord, body: { type: 'ASK', nick: nickname(st.me) } });
    } else if (st.free > 0) {
      st.free -= 1;
      grant(st.me, out);
    } else st.queue.push(st.me);
  } else if (msg.type === 'release') {
    out.push({ type: 'exit', resource: 'cs' });
    if (STATES) out.push({ type: 'state', state: 'idle' });
    if (flipAt >= 0) out.push({ type: 'state', state: 'RELEASED' });
    if (st.me === st.coord) freed(out);
    else out.push({ type: 'send', to: st.coord, body: { type: 'FREE', nick: nickname(st.me) } });
  } else if (msg.type === 'recv') {
    const kind = TYPO ? msg.body.Type.toUpperCase() : msg.body.type;
    if (kind === 'ASK') {
      if (st.free > 0) {
        st.free -= 1;
        grant(msg.from, out);
      } else st.queue.push(msg.from);
    } else if (kind === 'FREE') freed(out);
    else if (kind === 'GRANT') out.push({ type: 'enter', resource: 'cs' });
  }
  return out;
}

(async () => {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.trim() === '') continue;
    const out = await handle(JSON.parse(line));
    out.push(flipAt >= 0 ? { type: 'done' } : { type: 'done', reinit: true });
    process.stdout.write(out.map((o) => JSON.stringify(o)).join('\n') + '\n');
  }
})();
