#!/usr/bin/env node
// Mason bees for mutexlab's node protocol, in Node.js: bee 1 is also the queen, who keeps
// the reeds (their eggs, promised and laid, and who sits on each) and the flowers; every bee
// asks her. Written from docs/test-any-program.md alone: readline's 'line' event, each input
// handled by an async function (a promise per step), its lines collected and written at once.
//   --leaky    the queen forgets to count a flower she hands to a bee that waited for one
//   --late     a bee reports its egg from a setImmediate callback (after its done line)
'use strict';
const readline = require('readline');
const LEAKY = process.argv.includes('--leaky');
const LATE = process.argv.includes('--late');

let me, opt, out, q, bee;

function fresh(init) {
  me = init.id; opt = init.options;
  bee = { reed: 0, eggs: 0, inReed: 0 };
  q = { reedEggs: Array(opt.reeds + 1).fill(0), owner: Array(opt.reeds + 1).fill(0),
        reedWait: [], free: opt.flowers, flowerWait: [] };
}
const emit = (o) => out.push(JSON.stringify(o) + '\n');
const send = (to, body) => emit({ type: 'send', to, body });
const later = () => new Promise((r) => setImmediate(r));   // "storage" round trip

async function toQueen(body) {
  if (me === 1) await queen(1, body); else send(1, body);
}
async function toBee(to, body) {
  if (to === 1 && me === 1) await asBee(body); else send(to, body);
}

// The queen: a reed whose promised eggs leave room for a whole bee's eggs is given to a bee.
async function queen(from, m) {
  await later();
  if (m.type === 'REED') q.reedWait.push(from);
  else if (m.type === 'FLOWER') q.flowerWait.push(from);
  else if (m.type === 'FREE') q.free += 1;
  else if (m.type === 'LEFT') q.owner[m.reed] = 0;
  while (q.free > 0 && q.flowerWait.length) {
    const b = q.flowerWait.shift();
    if (!(LEAKY && b !== from)) q.free -= 1;
    await toBee(b, { type: 'FLOWER' });
  }
  while (q.reedWait.length) {
    const b = q.reedWait[0];
    let r = 0, room = false;
    for (let i = 1; i <= opt.reeds; i++) {
      if (q.reedEggs[i] + opt.eggs > opt.cocoons) continue;
      room = true;
      if (!q.owner[i]) { r = i; break; }
    }
    if (!room) { q.reedWait.shift(); await toBee(b, { type: 'RETIRE' }); continue; }
    if (!r) break;
    q.reedWait.shift(); q.owner[r] = b;
    const inReed = q.reedEggs[r]; q.reedEggs[r] += opt.eggs;
    await toBee(b, { type: 'REED', reed: r, in_reed: inReed });
  }
}

async function asBee(m) {
  if (m.type === 'RETIRE') { emit({ type: 'state', state: 'RETIRED' }); return; }
  if (m.type === 'REED') {
    bee.reed = m.reed; bee.inReed = m.in_reed;
    emit({ type: 'enter', resource: `reed:${bee.reed}` });
    await toQueen({ type: 'FLOWER' });
    return;
  }
  if (m.type === 'FLOWER') {
    emit({ type: 'enter', resource: 'flower' });
    emit({ type: 'exit', resource: 'flower' });
    bee.eggs += 1; bee.inReed += 1;
    const egg = { type: 'event', event: 'egg', reed: bee.reed, count: bee.eggs, in_reed: bee.inReed };
    if (LATE && bee.eggs === 1) setImmediate(() => process.stdout.write(JSON.stringify(egg) + '\n'));
    else emit(egg);
    await toQueen({ type: 'FREE' });
    if (bee.eggs < opt.eggs) { await toQueen({ type: 'FLOWER' }); return; }
    emit({ type: 'exit', resource: `reed:${bee.reed}` });
    emit({ type: 'event', event: 'death', eggs: bee.eggs });
    emit({ type: 'state', state: 'DEAD' });
    await toQueen({ type: 'LEFT', reed: bee.reed });
  }
}

async function handle(msg) {
  out = [];
  if (msg.type === 'init') {
    fresh(msg);
    await toQueen({ type: 'REED' });
    emit({ type: 'done', reinit: true });
  } else if (msg.type === 'recv') {
    if (me === 1 && ['REED', 'FLOWER', 'FREE', 'LEFT'].includes(msg.body.type)) await queen(msg.from, msg.body);
    else await asBee(msg.body);
    emit({ type: 'done' });
  } else {
    process.stderr.write(`bee ${me}: unexpected ${msg.type}\n`);
    emit({ type: 'done' });
  }
  process.stdout.write(out.join(''));
}

// One input at a time: chain the handlers so a slow one never lets the next overtake it.
let chain = Promise.resolve();
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  chain = chain.then(() => handle(msg));
});
