#!/usr/bin/env node
// The hamster killers as one program for mutexlab's node protocol: the mayor
// (id 0) deals each round's contracts round-robin to the elves and keeps the
// town's pins and poison; an elf takes its contracts one after another and asks
// the mayor for its pins and poison together.
// Reads stdin with readline's async iterator; writes collected per input.
//   --greedy  the mayor hands out poison without looking at what is left
//   --late    the elf's DONE report to the mayor goes out in a setImmediate
//   --pretty  pretty-prints its lines (JSON over several lines)
//   --quit    the mayor exits (code 0) once the first round is stopped
//   --chatty  extra fields on every line and an event kind of its own
'use strict';
const readline = require('node:readline');

const flags = new Set(process.argv.slice(2));
let lines = [];
function out(o) {
  if (flags.has('--chatty')) { o.by = 'elves_town_async'; o.seq = lines.length; }
  lines.push(flags.has('--pretty') ? JSON.stringify(o, null, 2) : JSON.stringify(o));
}
function flush() { process.stdout.write(lines.join('\n') + '\n'); lines = []; }

let me, opts, peers;
// mayor
let round, free, queue, left;
// elf
let mine, current, elfRound;

function startRound(r) {
  round = r;
  const plan = opts.plan[r - 1];
  out({ type: 'event', event: 'round', round: r });
  out({ type: 'state', state: 'MAYOR_WAITING' });
  left = plan.length;
  const deal = {};
  for (const e of peers) deal[e] = [];
  plan.forEach((h, i) => deal[peers[i % peers.length]].push([i + 1, h]));
  for (const e of peers) out({ type: 'send', to: e, body: { type: 'CONTRACTS', round: r, list: deal[e] } });
}

function tryGrant() {
  while (queue.length) {
    const [elf, poison] = queue[0];
    const ok = free.pins >= opts.pins_per_elf && (flags.has('--greedy') || free.poison >= poison);
    if (!ok) return;
    queue.shift();
    free.pins -= opts.pins_per_elf; free.poison -= poison;
    out({ type: 'send', to: elf, body: { type: 'TOOLS', round } });
  }
}

function mayorRecv(from, body) {
  if (body.type === 'ASK') { queue.push([from, body.poison]); tryGrant(); }
  else if (body.type === 'DONE') {
    free.pins += opts.pins_per_elf; free.poison += body.poison;
    tryGrant();
    if (--left === 0) {
      const last = round === opts.rounds;
      for (const e of peers) out({ type: 'send', to: e, body: { type: 'STOP', sender: 0, ts: round, round, final: last } });
      if (last) out({ type: 'state', state: 'MAYOR_DONE' });
      else startRound(round + 1);
      if (flags.has('--quit') && round >= 1) { flush(); process.exit(0); }
    }
  }
}

function nextContract() {
  current = mine.shift();
  if (!current) { out({ type: 'state', state: 'ELF_IDLE' }); return; }
  const [c, h] = current;
  out({ type: 'enter', resource: `contract:${elfRound}.${c}` });
  out({ type: 'state', state: 'ELF_WAIT_FOR_RELEASE' });
  out({ type: 'send', to: 0, body: { type: 'ASK', round: elfRound, poison: h * opts.poison_per_hamster } });
}

function elfRecv(from, body) {
  if (body.type === 'CONTRACTS') { elfRound = body.round; mine = body.list.slice(); nextContract(); }
  else if (body.type === 'TOOLS') {
    const [c, h] = current;
    const poison = h * opts.poison_per_hamster;
    out({ type: 'enter', resource: 'pins', units: opts.pins_per_elf });
    out({ type: 'enter', resource: 'poison', units: poison });
    out({ type: 'state', state: 'ELF_CRITICAL' });
    out({ type: 'event', event: 'contract_done', round: elfRound, contract: c, hamsters: h });
    if (flags.has('--chatty')) out({ type: 'event', event: 'hamster_count', hamsters: h });
    out({ type: 'exit', resource: 'poison', units: poison });
    out({ type: 'exit', resource: 'pins', units: opts.pins_per_elf });
    out({ type: 'exit', resource: `contract:${elfRound}.${c}` });
    const done = { type: 'send', to: 0, body: { type: 'DONE', round: elfRound, contract: c, poison } };
    if (flags.has('--late')) setImmediate(() => { out(done); flush(); });
    else out(done);
    nextContract();
  } else if (body.type === 'STOP') {
    out({ type: 'state', state: body.final ? 'ELF_DONE' : 'INITIAL' });
  }
}

async function main() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.type === 'init') {
      me = m.id; opts = m.options; peers = m.peers;
      if (me === 0) {
        free = { pins: opts.pins, poison: opts.poison }; queue = [];
        startRound(1);
      } else { mine = []; current = null; out({ type: 'state', state: 'INITIAL' }); }
      out({ type: 'done', reinit: true });
    } else if (m.type === 'recv') {
      if (me === 0) mayorRecv(m.from, m.body); else elfRecv(m.from, m.body);
      out({ type: 'done' });
    } else {
      out({ type: 'log', text: `unexpected ${m.type}` });
      out({ type: 'done' });
    }
    flush();
  }
}
main();
