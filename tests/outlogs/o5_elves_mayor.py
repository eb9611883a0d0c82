"""Hamster killers with a central mayor that hands out contracts with their pins and poison;
discrete-event simulation with explicit vector clocks, writing mutexlab's trace format with a
header naming the problem. usage: elves_sim.py OUT [short]  (short: one hamster short of poison)"""

import heapq
import json
import random
import sys

out, short = sys.argv[1], sys.argv[2:] == ["short"]
ELVES, PINS, POISON, PPE, PPH = 3, 2, 6, 1, 1
plan = [[2, 3, 1, 2], [3, 3]]
rng = random.Random(7)
names = ["mayor"] + [f"elf-{i}" for i in range(1, ELVES + 1)]
vc = {n: {} for n in names}
w = open(out, "w")  # noqa: SIM115 - open for the whole simulation
w.write(
    json.dumps(
        {
            "event": "run",
            "pid": "run",
            "problem": "elves",
            "processes": {str(i): n for i, n in enumerate(names)},
            "capacities": {"contract:*": 1, "pins": PINS, "poison": POISON},
            "params": {
                "elves": ELVES,
                "pins": PINS,
                "poison": POISON,
                "contracts": 4,
                "hamsters": [1, 3],
                "rounds": len(plan),
                "pins_per_elf": PPE,
                "poison_per_hamster": PPH,
                "plan": plan,
            },
        }
    )
    + "\n"
)


def log(p, kind, **f):
    vc[p][p] = vc[p].get(p, 0) + 1
    w.write(json.dumps({"event": kind, "pid": p, "vc": dict(vc[p]), **f}) + "\n")


q, now, seq = [], 0.0, [0]


def send(p, to, body):
    seq[0] += 1
    mid = f"{p}#{seq[0]}"
    log(p, "send", type=body["type"], to=to, id=mid, msg=body)
    heapq.heappush(q, (now + rng.random(), seq[0], to, p, mid, dict(vc[p]), body))


free = {"pins": PINS, "poison": POISON}
rnd, todo, done, idle = 0, [], 0, []


def start_round():
    global rnd, todo, done
    rnd += 1
    todo = [(i + 1, h) for i, h in enumerate(plan[rnd - 1])]
    done = 0
    log("mayor", "round", round=rnd, contracts=plan[rnd - 1])
    for e in names[1:]:
        send("mayor", e, {"type": "INIT", "sender": 0, "round": rnd})


def hand_out():
    while todo and idle:
        c, h = todo[0]
        need = h * PPH
        if free["pins"] < PPE or free["poison"] < need:
            return
        todo.pop(0)
        e = idle.pop(0)
        free["pins"] -= PPE
        free["poison"] -= need
        send(
            "mayor",
            e,
            {
                "type": "ASSIGN",
                "sender": 0,
                "round": rnd,
                "contract": c,
                "hamsters": h,
                "pins": PPE,
                "poison": need - (1 if short and h > 1 else 0),
            },
        )


start_round()
stopped = set()
while q:
    now, _, to, frm, mid, clock, body = heapq.heappop(q)
    for k, v in clock.items():
        vc[to][k] = max(vc[to].get(k, 0), v)
    log(to, "recv", type=body["type"], **{"from": frm}, id=mid)
    t = body["type"]
    if to == "mayor":
        if t == "READY":
            idle.append(frm)
        if t == "DONE":
            free["pins"] += body["pins"]
            free["poison"] += body["poison"] + (1 if short and body["hamsters"] > 1 else 0)
            done += 1
            idle.append(frm)
            if done == len(plan[rnd - 1]):
                for e in names[1:]:
                    send("mayor", e, {"type": "STOP", "sender": 0, "ts": 0, "round": rnd})
                idle.clear()
                if rnd < len(plan):
                    start_round()
                else:
                    log("mayor", "state", state="MAYOR_DONE")
                continue
        hand_out()
    else:
        if t == "INIT":
            send(to, "mayor", {"type": "READY", "sender": 0})
        if t == "ASSIGN":
            r, c = body["round"], body["contract"]
            log(to, "enter", resource=f"contract:{r}.{c}")
            log(to, "enter", resource="pins", units=body["pins"]) if body["pins"] != 1 else log(
                to, "enter", resource="pins"
            )
            log(to, "enter", resource="poison", units=body["poison"]) if body["poison"] != 1 else log(
                to, "enter", resource="poison"
            )
            log(to, "contract_done", round=r, contract=c, hamsters=body["hamsters"])
            for res, u in (("poison", body["poison"]), ("pins", body["pins"])):
                log(to, "exit", resource=res, **({"units": u} if u != 1 else {}))
            log(to, "exit", resource=f"contract:{r}.{c}")
            send(
                to,
                "mayor",
                {
                    "type": "DONE",
                    "sender": 0,
                    "round": r,
                    "pins": body["pins"],
                    "poison": body["poison"],
                    "hamsters": body["hamsters"],
                },
            )
        if t == "STOP" and body["round"] == len(plan):
            log(to, "state", state="ELF_DONE")
