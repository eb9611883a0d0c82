// The hamster-killer elves in Node.js: a mayor process and ELVES child processes (IPC messages),
// each writing its own JSON Lines file as a structured logger does (time stamp in ISO-8601 with
// the process's own time zone, level, host, msg), with the clock-free fields of
// docs/verify-any-log.md: event, pid, resource, units, and send/recv with type, to/from, id.
// node o9_elves_node.js DIR ELVES JOBS PINS POISON [loose]   then   sort -m DIR/*.log > LOG
// An elf takes 1-3 pins and 1-2 poison portions per job; loose: the mayor believes it has three
// pins and two poison portions more than it has.
const { fork } = require('child_process');
const fs = require('fs');
const path = require('path');
const [dir, elves, jobs, pins, poison, mode] = process.argv.slice(2);

function stamp(offsetMinutes) { // 2026-11-30T16:12:03.004+01:00
  const d = new Date(Date.now() + offsetMinutes * 60000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const a = Math.abs(offsetMinutes);
  const off = `${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
  return d.toISOString().replace('Z', off);
}

function logger(name, offset) {
  const file = path.join(dir, `${name}.log`);
  fs.writeFileSync(file, '');
  let n = 0;
  return (event, fields = {}) => {
    const line = { ts: stamp(offset), level: 'info', host: 'ws-17', message: `${name} ${event}`, event, pid: name, ...fields };
    fs.appendFileSync(file, JSON.stringify(line) + '\n');
    return `${name}:${n++}`;
  };
}

if (process.argv[8] === '--elf') { // a child: elf-i
  const me = process.argv[9];
  const log = logger(me, [60, -300, 330, 0][Number(me.split('-')[1]) % 4]);
  let job = 0, need;
  const ask = () => {
    if (job === Number(jobs)) { process.disconnect(); return; }
    need = { pins: 1 + ((job + me.length) % 3), poison: 1 + (job % 2) };
    log('request', { resource: 'pins', units: need.pins });
    log('request', { resource: 'poison', units: need.poison });
    const id = log('send', { type: 'ASK', to: 'mayor', id: `${me}#${job}a` });
    process.send({ type: 'ASK', id: `${me}#${job}a`, from: me, need });
  };
  process.on('message', (m) => { // GRANT
    log('recv', { type: m.type, from: 'mayor', id: m.id });
    log('enter', { resource: 'pins', units: need.pins });
    log('enter', { resource: 'poison', units: need.poison });
    log('hunting', { hamsters: 1 + job });
    log('exit', { resource: 'poison', units: need.poison });
    log('exit', { resource: 'pins', units: need.pins });
    log('send', { type: 'RETURN', to: 'mayor', id: `${me}#${job}r` });
    process.send({ type: 'RETURN', id: `${me}#${job}r`, from: me, need });
    job += 1;
    setTimeout(ask, 1 + (job % 3));
  });
  ask();
} else { // the mayor
  fs.mkdirSync(dir, { recursive: true });
  const log = logger('mayor', 0);
  const free = { pins: Number(pins) + (mode === 'loose' ? 3 : 0), poison: Number(poison) + (mode === 'loose' ? 2 : 0) };
  const children = {}, queue = [];
  let grants = 0;
  const serve = () => {
    while (queue.length && queue[0].need.pins <= free.pins && queue[0].need.poison <= free.poison) {
      const m = queue.shift();
      free.pins -= m.need.pins; free.poison -= m.need.poison;
      const id = `mayor#${grants++}`;
      log('send', { type: 'GRANT', to: m.from, id });
      children[m.from].send({ type: 'GRANT', id });
    }
  };
  for (let i = 1; i <= Number(elves); i++) {
    const name = `elf-${i}`;
    const child = fork(__filename, [...process.argv.slice(2, 8).concat(Array(6 - process.argv.slice(2, 8).length).fill('')), '--elf', name]);
    children[name] = child;
    child.on('message', (m) => {
      log('recv', { type: m.type, from: m.from, id: m.id });
      if (m.type === 'ASK') queue.push(m);
      else { free.pins += m.need.pins; free.poison += m.need.poison; }
      serve();
    });
  }
}
