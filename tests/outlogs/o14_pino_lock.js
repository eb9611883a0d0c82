// A lock server and its clients as actors on Node's event loop, logging as pino does:
// one JSON object a line, level (30 = info), time (ms), the base bindings, the child's bindings,
// the merged object, then "msg" last. The logger is pino({ base: { hostname } }) and each actor a
// child({ pid: name }), so "pid" is the actor's name (pino's own default pid, the OS process's
// number, is left out of base: beside a child's pid it would be written twice).
// The clock-free event fields are the merged object: logger.info({ event: "send", ... }, "text").
//   node o14_pino_lock.js CLIENTS ROUNDS [greedy|lost|twice|named] > LOG
// greedy: the server grants a second client while the first holds the lock;
// lost: the destination is async (sync: false) and the process exits before it is flushed, so
//   the last lines never reach the file (pino's documented hazard of process.exit());
// twice: each child keeps pino's default base, so "pid" is written twice (the OS number first).
// named: pino's default base kept and each actor a child({ name }): "pid" is the OS number only.
const [CLIENTS, ROUNDS, bug] = [+process.argv[2], +process.argv[3], process.argv[4]];
let now = Date.UTC(2026, 11, 2, 0, 20, 0), seed = 11;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pending = []; // what the async destination holds before it is flushed
function write(line) { if (bug === "lost") pending.push(line); else process.stdout.write(line); }
function child(name) {
  const base = bug === "twice" ? `"pid":48213,"hostname":"build-7"` : `"hostname":"build-7"`;
  const own = bug === "named" ? `"pid":48213,"hostname":"build-7","name":${JSON.stringify(name)}` : null;
  return {
    info(obj, msg) {
      now += 1;
      const fields = Object.entries(obj).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",");
      const bindings = own ?? `${base},"pid":${JSON.stringify(name)}`;
      write(`{"level":30,"time":${now},${bindings},${fields},"msg":${JSON.stringify(msg)}}\n`);
    },
  };
}
const queue = [], actors = {};
let next = 0;
function post(from, to, type) {
  const id = `${from}-${next++}`;
  actors[from].log.info({ event: "send", type, to, id }, `${type} to ${to}`);
  queue.splice(Math.floor(rnd() * (queue.length + 1)), 0, { from, to, type, id }); // any order
}
function server() {
  const me = { log: child("server"), holder: null, waiting: [] };
  me.handle = (m) => {
    me.log.info({ event: "recv", type: m.type, from: m.from, id: m.id }, `${m.type} from ${m.from}`);
    if (m.type === "ACQUIRE" && (me.holder === null || bug === "greedy")) { me.holder = m.from; post("server", m.from, "GRANT"); }
    else if (m.type === "ACQUIRE") me.waiting.push(m.from);
    else if (m.type === "RELEASE") {
      me.holder = me.waiting.shift() ?? null;
      if (me.holder !== null) post("server", me.holder, "GRANT");
    }
  };
  return me;
}
function client(name) {
  const me = { log: child(name), left: ROUNDS };
  me.ask = () => { me.log.info({ event: "request", resource: "cs" }, "wants the lock"); post(name, "server", "ACQUIRE"); };
  me.handle = (m) => {
    me.log.info({ event: "recv", type: m.type, from: m.from, id: m.id }, "granted");
    me.log.info({ event: "enter", resource: "cs" }, "holding the lock");
    me.log.info({ event: "exit", resource: "cs" }, "released the lock");
    post(name, "server", "RELEASE");
    if (--me.left > 0) me.ask();
  };
  return me;
}
actors.server = server();
for (let c = 1; c <= CLIENTS; c++) actors[`client-${c}`] = client(`client-${c}`);
for (let c = 1; c <= CLIENTS; c++) actors[`client-${c}`].ask();
function step() {
  if (queue.length === 0) return;
  const m = queue.shift();
  actors[m.to].handle(m);
  setImmediate(step);
}
setImmediate(step);
if (bug === "lost") {
  // exits from a timer while the async destination still holds its last lines: they are lost
  setTimeout(() => { process.stdout.write(pending.slice(0, pending.length - 4).join("")); process.exit(0); }, 50);
}
