// Ricart-Agrawala over simulated async channels, Node.js, hand-rolled vector clock.
// Processes are integers 0..N-1; the clock is an object keyed by integer ids, printed
// newest-key-first. usage: node ra.js OUT N ROUNDS [broken] [seed]
const fs = require('fs');
const [out, N, ROUNDS, mode, seedArg] = [process.argv[2], +process.argv[3], +process.argv[4], process.argv[5] || 'ok', +(process.argv[6] || 1)];
let seed = seedArg;
const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const fd = fs.openSync(out, 'w');
fs.writeSync(fd, '(?<host>\\d+) (?<clock>\\{.*\\})\\n(?<event>.*)\n\n');
const procs = [];
for (let i = 0; i < N; i++) procs.push({ id: i, vc: new Map(), lamport: 0, state: 'RELEASED', req: null, replies: 0, deferred: [], rounds: 0 });
function log(p, text) {
  p.vc.set(p.id, (p.vc.get(p.id) || 0) + 1);
  const keys = [...p.vc.keys()].sort((a, b) => b - a);
  const clock = '{' + keys.map(k => `"${k}": ${p.vc.get(k)}`).join(', ') + '}';
  fs.writeSync(fd, `${p.id} ${clock}\n${text}\n`);
}
let pending = 0;
function send(p, to, msg) {
  log(p, `send ${msg.type} to ${to}`);
  const vc = new Map(p.vc);
  pending++;
  setTimeout(() => { pending--; deliver(procs[to], p.id, msg, vc); }, Math.floor(rnd() * 20));
}
function deliver(p, from, msg, vc) {
  for (const [k, v] of vc) p.vc.set(k, Math.max(p.vc.get(k) || 0, v));
  p.lamport = Math.max(p.lamport, msg.ts) + 1;
  log(p, `recv ${msg.type} from ${from}`);
  if (msg.type === 'REQ') {
    const mine = p.req;
    const defer = mode !== 'broken' && (p.state === 'HELD' || (p.state === 'WANTED' && (mine.ts < msg.ts || (mine.ts === msg.ts && p.id < from))));
    if (defer) p.deferred.push(from); else send(p, from, { type: 'REPLY', ts: ++p.lamport });
  } else if (msg.type === 'REPLY') {
    if (++p.replies === N - 1) enter(p);
  }
}
function ask(p) {
  p.state = 'WANTED'; p.replies = 0; p.req = { ts: ++p.lamport };
  log(p, 'request cs');
  for (let j = 0; j < N; j++) if (j !== p.id) send(p, j, { type: 'REQ', ts: p.req.ts });
  if (N === 1) enter(p);
}
function enter(p) {
  p.state = 'HELD'; log(p, 'enter cs');
  setTimeout(() => {
    log(p, 'exit cs'); p.state = 'RELEASED';
    for (const j of p.deferred) send(p, j, { type: 'REPLY', ts: ++p.lamport });
    p.deferred = [];
    if (++p.rounds < ROUNDS) setTimeout(() => ask(p), Math.floor(rnd() * 10));
  }, Math.floor(rnd() * 10));
}
for (const p of procs) setTimeout(() => ask(p), Math.floor(rnd() * 5));
process.on('exit', () => fs.closeSync(fd));
