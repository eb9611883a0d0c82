// k-mutual exclusion: node 1 keeps a desk of K permits, the others borrow them by message.
// Written from docs/test-any-program.md alone. Style: readline's async iterator, each line handled
// by an async function chained on a Promise queue (so a slow handler never overlaps the next),
// answers collected in an array and written with one process.stdout.write per input.
// --greedy: the desk counts a permit handed back by its own holder twice (as if two came back).
'use strict';
const readline = require('node:readline');

const greedy = process.argv.includes('--greedy');
let me = 0, k = 2, free = 0, waiting = [], holding = false, asked = false;

const sleepTick = () => new Promise((resolve) => setImmediate(resolve));

async function handle(msg, out) {
  switch (msg.type) {
    case 'init':
      me = msg.id;
      k = msg.options.k ?? 2;
      free = k;
      waiting = [];
      holding = asked = false;
      return { reinit: true };
    case 'request':
      if (me === 1) {
        await sleepTick(); // "look the desk up"
        if (free > 0) { free--; holding = true; out.push({ type: 'enter', resource: 'cs' }); }
        else waiting.push(1);
      } else {
        asked = true;
        out.push({ type: 'send', to: 1, body: { type: 'ASK' } });
      }
      return {};
    case 'release':
      holding = false;
      out.push({ type: 'exit', resource: 'cs' });
      if (me === 1) giveBack(out, 1);
      else out.push({ type: 'send', to: 1, body: { type: 'BACK' } });
      return {};
    case 'recv': {
      const body = msg.body;
      if (body.type === 'ASK') {
        if (free > 0) { free--; out.push({ type: 'send', to: msg.from, body: { type: 'PERMIT' } }); }
        else waiting.push(msg.from);
      } else if (body.type === 'BACK') {
        giveBack(out, msg.from);
      } else if (body.type === 'PERMIT' && asked) {
        asked = false;
        holding = true;
        out.push({ type: 'enter', resource: 'cs' });
      }
      return {};
    }
    default:
      return {};
  }
}

function giveBack(out, from) {
  free++;
  if (greedy && from === 1) free++;
  while (free > 0 && waiting.length) {
    const next = waiting.shift();
    free--;
    if (next === 1) { holding = true; out.push({ type: 'enter', resource: 'cs' }); }
    else out.push({ type: 'send', to: next, body: { type: 'PERMIT' } });
  }
}

async function main() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let queue = Promise.resolve();
  for await (const line of rl) {
    if (!line.trim()) continue;
    queue = queue.then(async () => {
      const out = [];
      const extra = await handle(JSON.parse(line), out);
      out.push({ type: 'done', ...extra });
      process.stdout.write(out.map((o) => JSON.stringify(o)).join('\n') + '\n');
    });
    await queue;
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
