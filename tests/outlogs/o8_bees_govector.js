// Mason bees with a queen handing out reeds (capacity 1 each) and K flowers; bees and queen are
// actors exchanging messages on an event loop. Each actor writes its own GoVector log file,
// DIR/<name>-Log.txt, as GoVector does: "name {clock}\nmessage", beginning with
// "Initialization Complete". Host names are "bee-1.hive.local" etc.
// node o8_bees_govector.js DIR BEES REEDS FLOWERS EGGS [overflow|dies|tick]
//   overflow: the queen hands out one flower more than there are; dies: bee-1 dies on its reed;
//   tick: bee-3 adds one to the sender's entry of every message it receives
const fs = require("fs");
const [dir, P, T, K, EGGS, bug] = [process.argv[2], +process.argv[3], +process.argv[4], +process.argv[5], +process.argv[6], process.argv[7]];
fs.mkdirSync(dir, { recursive: true });
const actors = {};
let seed = 7;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
class Actor {
  constructor(name) {
    this.name = name; this.vc = {}; this.inbox = [];
    this.fd = fs.openSync(`${dir}/${name.split(".")[0]}-Log.txt`, "w");
    actors[name] = this; this.log("Initialization Complete");
  }
  log(msg) {
    this.vc[this.name] = (this.vc[this.name] || 0) + 1;
    fs.writeSync(this.fd, `${this.name} ${JSON.stringify(this.vc)}\n${msg}\n`);
  }
  send(to, body) { this.log(`Sending ${body.type} to ${to}`); const c = { ...this.vc }; setTimeout(() => actors[to].deliver(this.name, body, c), rnd() * 5); }
  deliver(from, body, clock) {
    if (this.dead) return;
    for (const [p, c] of Object.entries(clock)) this.vc[p] = Math.max(this.vc[p] || 0, c);
    if (bug === "tick" && this.name.startsWith("bee-3")) this.vc[from] += 1; // ticks the sender's entry too
    this.log(`Received ${body.type} from ${from}`); this.handle(from, body);
  }
}
class Queen extends Actor {
  constructor() { super("queen.hive.local"); this.reeds = Array(T).fill(null); this.cocoons = Array(T).fill(0); this.free = K + (bug === "overflow" ? 1 : 0); this.wr = []; this.wf = []; }
  handle(from, b) {
    if (b.type === "WANT_REED") this.wr.push(from);
    if (b.type === "LEAVE_REED") this.reeds[b.reed - 1] = null;
    if (b.type === "WANT_FLOWER") this.wf.push(from);
    if (b.type === "LEAVE_FLOWER") this.free++;
    this.wr = this.wr.filter((bee) => {
      const r = this.reeds.findIndex((x, i) => x === null && this.cocoons[i] + EGGS <= 15);
      if (r < 0) { if (this.cocoons.every((c) => c + EGGS > 15)) { this.send(bee, { type: "NO_REED" }); return false; } return true; }
      this.reeds[r] = bee; this.cocoons[r] += EGGS; this.send(bee, { type: "REED", reed: r + 1 }); return false;
    });
    while (this.free > 0 && this.wf.length) { this.free--; this.send(this.wf.shift(), { type: "FLOWER" }); }
  }
}
class Bee extends Actor {
  constructor(i) { super(`bee-${i}.hive.local`); this.i = i; this.eggs = 0; }
  start() { this.log("waiting for a reed"); this.send("queen.hive.local", { type: "WANT_REED" }); }
  handle(from, b) {
    if (b.type === "NO_REED") { this.log("no reed left, retiring"); return; }
    if (b.type === "REED") { this.reed = b.reed; this.log(`enter reed:${b.reed}`); this.askFlower(); }
    if (b.type === "FLOWER") {
      this.log("enter flower"); this.log("exit flower"); this.send("queen.hive.local", { type: "LEAVE_FLOWER" });
      this.eggs++; this.log(`laid egg ${this.eggs} in reed:${this.reed}`);
      if (bug === "dies" && this.i === 1 && this.eggs === 2) { this.log("ERROR hornet attack, bee dead"); this.dead = true; return; }
      if (this.eggs < EGGS) this.askFlower();
      else { this.log(`exit reed:${this.reed}`); this.send("queen.hive.local", { type: "LEAVE_REED", reed: this.reed }); }
    }
  }
  askFlower() { this.log("request flower"); this.send("queen.hive.local", { type: "WANT_FLOWER" }); }
}
new Queen();
const bees = [...Array(P).keys()].map((i) => new Bee(i + 1));
bees.forEach((b) => setTimeout(() => b.start(), rnd() * 3));
