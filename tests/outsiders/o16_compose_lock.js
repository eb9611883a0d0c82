// A lock service and its clients as separate Node processes, run the way `docker compose up` runs
// services: each process prints its events as JSON lines (clock-free, mutexlab's event shape) on
// its own stdout, and the runner prints every line behind the container's name, padded to one
// column and coloured, as `docker compose logs` shows them (`lockd-1   | {...}`). It never imports
// mutexlab. Messages go through the runner (process.send), as a network between containers would.
//
//   node o16_compose_lock.js CLIENTS ROUNDS [eager] > OUT
//
// eager: lockd grants every request as it arrives, holder or not.
"use strict";
const { fork } = require("child_process");
const readline = require("readline");

const [role, ...rest] = process.argv.slice(2);

if (role === "lockd" || role === "client") {
  const [me, count, rounds, eager] = rest;
  let sent = 0;
  const log = (event) => console.log(JSON.stringify({ ...event, pid: me }));
  const send = (to, type) => {
    const id = `${me}#${++sent}`;
    log({ event: "send", type, to, id });
    process.send({ to, type, id, from: me });
  };
  const received = (m) => log({ event: "recv", type: m.type, from: m.from, id: m.id });
  if (role === "lockd") {
    let holder = null;
    let handled = 0;
    const waiting = [];
    process.on("message", (m) => {
      received(m);
      if (m.type === "REQUEST" && (holder === null || eager === "eager")) {
        holder = m.from;
        send(m.from, "GRANT");
      } else if (m.type === "REQUEST") {
        waiting.push(m.from);
      } else {
        holder = waiting.length ? waiting.shift() : null;
        if (holder !== null) send(holder, "GRANT");
      }
      if (++handled === 2 * Number(count) * Number(rounds)) process.disconnect();
    });
  } else {
    let left = Number(rounds);
    const ask = () => {
      log({ event: "request", resource: "cs" });
      send("lockd", "REQUEST");
    };
    process.on("message", (m) => {
      received(m);
      log({ event: "enter", resource: "cs" });
      setTimeout(() => {
        log({ event: "exit", resource: "cs" });
        send("lockd", "RELEASE");
        if (--left > 0) ask();
        else process.disconnect();
      }, 2);
    });
    ask();
  }
} else {
  // the runner: docker compose's part
  const [count, rounds, eager] = [role, rest[0], rest[1] || ""];
  const names = ["lockd", ...Array.from({ length: Number(count) }, (_, i) => `client${i + 1}`)];
  const width = Math.max(...names.map((n) => `${n}-1`.length));
  const colours = [36, 33, 32, 35, 34, 31];
  const children = {};
  names.forEach((name, i) => {
    const child = fork(__filename, [i ? "client" : "lockd", name, count, rounds, eager], { silent: true });
    children[name] = child;
    const prefix = `\x1b[${colours[i % colours.length]}m${`${name}-1`.padEnd(width)}  |\x1b[0m `;
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      process.stdout.write(prefix + line + "\n");
    });
    child.on("message", (m) => children[m.to].send(m));
  });
}
