// Dining philosophers for `mutexlab test philosophers --node`, in Node.js: readline's async
// iterator reads the lines, every answer goes out through process.stdout.write, awaited (its
// callback) so a full pipe holds us back instead of piling up in memory.
//
// Philosopher i keeps fork i (its left) and lends it: a neighbour asks (ASK), gets it (GRANT)
// when it is free, in the order asked, and gives it back (BACK). A hungry philosopher takes its
// lower-numbered fork first (the resource hierarchy), so philosopher N starts with fork 1.
//
//   --own-first  every philosopher takes its own fork first (no hierarchy: all can wait forever)
//   --leave      exits once it has eaten its meals (the program thinks its work is over)
import { createInterface } from 'node:readline';

const ownFirst = process.argv.includes('--own-first');
const leave = process.argv.includes('--leave');

let me, n, meals, eaten, fork, queue, holding, want, hungry;

const out = [];
const put = (obj) => out.push(JSON.stringify(obj));
const send = (to, type) => put({ type: 'send', to, body: { type, fork: to === me ? me : undefined } });

function keeperOf(f) { return f; }
function order() {
  const left = me, right = (me % n) + 1;
  if (ownFirst) return [left, right];
  return left < right ? [left, right] : [right, left];
}

// ask for fork f (ours or a neighbour's)
function take(f) {
  if (keeperOf(f) === me) {
    if (fork.holder === null) { fork.holder = me; got(f); } else queue.push(me);
  } else {
    send(keeperOf(f), 'ASK');
  }
}

function got(f) {
  holding.add(f);
  const next = want.find((g) => !holding.has(g));
  if (next !== undefined) { take(next); return; }
  // both forks: eat
  const left = me, right = (me % n) + 1;
  put({ type: 'enter', resource: `fork:${left}` });
  put({ type: 'enter', resource: `fork:${right}` });
  put({ type: 'enter', resource: 'meal' });
  put({ type: 'state', state: 'EATING' });
}

// our fork is free again: to the first who asked
function freeOwn() {
  fork.holder = queue.shift() ?? null;
  if (fork.holder === me) got(me);
  else if (fork.holder !== null) send(fork.holder, 'GRANT');
}

function handle(m) {
  switch (m.type) {
    case 'init':
      me = m.id; n = m.nodes; meals = m.options.meals; eaten = 0;
      fork = { holder: null }; queue = []; holding = new Set(); want = []; hungry = false;
      put({ type: 'done', reinit: true });
      return;
    case 'request':
      hungry = true; want = order();
      put({ type: 'state', state: 'HUNGRY' });
      take(want[0]);
      break;
    case 'release': {
      const left = me, right = (me % n) + 1;
      put({ type: 'exit', resource: 'meal' });
      put({ type: 'exit', resource: `fork:${left}` });
      put({ type: 'exit', resource: `fork:${right}` });
      put({ type: 'state', state: 'THINKING' });
      hungry = false; eaten += 1; holding = new Set();
      send(right, 'BACK');
      freeOwn();
      break;
    }
    case 'recv': {
      const kind = m.body.type;
      if (kind === 'ASK') {
        if (fork.holder === null) { fork.holder = m.from; send(m.from, 'GRANT'); } else queue.push(m.from);
      } else if (kind === 'BACK') {
        freeOwn();
      } else if (kind === 'GRANT') {
        got(m.from);
      }
      break;
    }
  }
  put({ type: 'done' });
}

const write = (text) => new Promise((resolve) => process.stdout.write(text, resolve));

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  handle(JSON.parse(line));
  const text = out.splice(0).join('\n') + '\n';
  await write(text);
  if (leave && eaten === meals && !hungry) process.exit(0);
}
