// k-mutual exclusion with a coordinator, for mutexlab's node protocol (docs/test-any-program.md).
// Node.js 18+, no packages. The main thread owns stdin/stdout; the protocol logic runs in a
// worker thread (worker_threads), so the I/O loop never blocks on it: each input line is posted
// to the worker, and its answer (an array of output objects) comes back as one message, written
// out with the done line in one write.
//
// Node 1 is the coordinator: it hands out K permits (options.k) in order of asking, itself
// included. The others send REQ, wait for GRANT, send REL when they leave.
//
//   BROKEN_PERMITS=1   the coordinator grants while inUse <= k (one permit too many)
//   WORKER_LOGS=1      the worker console.log()s its lines itself; the main thread only writes done
'use strict';

const { Worker, isMainThread, parentPort } = require('node:worker_threads');

if (isMainThread) {
  const readline = require('node:readline');
  const worker = new Worker(__filename);
  const rl = readline.createInterface({ input: process.stdin, terminal: false });

  const ask = (msg) =>
    new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.postMessage(msg);
    });

  (async () => {
    for await (const line of rl) {
      if (!line.trim()) continue;
      const lines = await ask(JSON.parse(line));
      process.stdout.write(lines.map((l) => JSON.stringify(l) + '\n').join(''));
    }
    await worker.terminate();
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  const brokenPermits = process.env.BROKEN_PERMITS === '1';
  const workerLogs = process.env.WORKER_LOGS === '1';
  const COORD = 1;
  let me, k, inUse, queue, waiting;

  const handlers = {
    init(msg, out) {
      me = msg.id;
      k = (msg.options && msg.options.k) || 2;
      inUse = 0;
      queue = [];
      waiting = false;
      return { reinit: true };
    },
    request(msg, out) {
      waiting = true;
      out.push({ type: 'state', state: 'WANTED' });
      if (me === COORD) coordinate(me, out);
      else out.push({ type: 'send', to: COORD, body: { type: 'REQ', from: me } });
    },
    release(msg, out) {
      out.push({ type: 'exit', resource: 'cs' });
      out.push({ type: 'state', state: 'RELEASED' });
      if (me === COORD) giveBack(out);
      else out.push({ type: 'send', to: COORD, body: { type: 'REL', from: me } });
    },
    recv(msg, out) {
      const { body, from } = msg;
      switch (body.type) {
        case 'REQ':
          coordinate(from, out);
          break;
        case 'REL':
          giveBack(out);
          break;
        case 'GRANT':
          enter(out);
          break;
      }
    },
  };

  function enter(out) {
    waiting = false;
    out.push({ type: 'enter', resource: 'cs' });
    out.push({ type: 'state', state: 'HELD' });
  }

  function grant(who, out) {
    inUse += 1;
    if (who === me) enter(out);
    else out.push({ type: 'send', to: who, body: { type: 'GRANT' } });
  }

  function coordinate(who, out) {
    const free = brokenPermits ? inUse <= k : inUse < k;
    if (free && queue.length === 0) grant(who, out);
    else queue.push(who);
  }

  function giveBack(out) {
    inUse -= 1;
    while (queue.length && (brokenPermits ? inUse <= k : inUse < k)) grant(queue.shift(), out);
  }

  parentPort.on('message', (msg) => {
    const out = [];
    const extra = (handlers[msg.type] || (() => {}))(msg, out) || {};
    out.push({ type: 'done', ...extra });
    if (workerLogs) {
      for (const line of out.slice(0, -1)) console.log(JSON.stringify(line));
      parentPort.postMessage(out.slice(-1));
    } else {
      parentPort.postMessage(out);
    }
  });
}
