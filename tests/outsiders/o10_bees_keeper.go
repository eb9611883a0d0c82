// Mason bees for `mutexlab test bees --node` in Go: a goroutine reads stdin line by line into a
// channel, the main loop answers through a bufio.Writer flushed after every done. Reeds are dealt
// by rank (bee i: reed (i-1)%T+1, the (i-1)/T-th on it; a bee hands its reed to the next with a
// NEXT message); the flowers are kept by bee 1 (REQ, GRANT, BACK), which keeps serving once dead.
//
// Flags: -greedy   the keeper grants a flower while none is free (one too many)
//        -chatter  debugging on standard error after every input (allowed: not the protocol's)
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

type msg map[string]interface{}

var (
	out     = bufio.NewWriter(os.Stdout)
	greedy  = flag.Bool("greedy", false, "grant a flower when none is free")
	chatter = flag.Bool("chatter", false, "debugging on stderr")
)

func emit(m msg) {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	out.Write(b)
	out.WriteString("\n")
}

type bee struct {
	id, n, reeds, flowers, eggs, perReed int
	reed, slot, laid                     int
	onReed, dead, waiting                bool
	// the keeper's side (bee 1)
	free  int
	queue []int
}

func num(v interface{}) int { return int(v.(float64)) } // encoding/json: every number a float64

func (b *bee) start(m msg) {
	opts := m["options"].(map[string]interface{})
	*b = bee{id: num(m["id"]), n: num(m["nodes"]), reeds: num(opts["reeds"]), flowers: num(opts["flowers"]),
		eggs: num(opts["eggs"])}
	b.perReed = num(opts["cocoons"]) / b.eggs
	b.free = b.flowers
	b.reed = (b.id-1)%b.reeds + 1
	b.slot = (b.id - 1) / b.reeds
	if b.slot >= b.perReed {
		emit(msg{"type": "state", "state": "RETIRED"})
		b.dead = true
		return
	}
	if b.slot == 0 {
		b.takeReed()
	}
}

func (b *bee) takeReed() {
	b.onReed = true
	emit(msg{"type": "enter", "resource": fmt.Sprintf("reed:%d", b.reed)})
	emit(msg{"type": "state", "state": "ON_REED"})
	b.ask()
}

func (b *bee) ask() {
	b.waiting = true
	if b.id == 1 {
		b.request(1)
	} else {
		emit(msg{"type": "send", "to": 1, "body": msg{"type": "REQ"}})
	}
}

// the keeper: a bee asks for a flower
func (b *bee) request(who int) {
	if b.free > 0 || (*greedy && b.free == 0) {
		b.free--
		b.grant(who)
	} else {
		b.queue = append(b.queue, who)
	}
}

func (b *bee) grant(who int) {
	if who == 1 {
		b.visit()
	} else {
		emit(msg{"type": "send", "to": who, "body": msg{"type": "GRANT"}})
	}
}

// the keeper: a flower is back
func (b *bee) back() {
	b.free++
	if len(b.queue) > 0 && b.free > 0 {
		who := b.queue[0]
		b.queue = b.queue[1:]
		b.free--
		b.grant(who)
	}
}

func (b *bee) visit() {
	b.waiting = false
	emit(msg{"type": "enter", "resource": "flower"})
	emit(msg{"type": "exit", "resource": "flower"})
	b.laid++
	emit(msg{"type": "event", "event": "egg", "reed": b.reed, "count": b.laid, "in_reed": b.slot*b.eggs + b.laid})
	if b.id == 1 {
		b.back()
	} else {
		emit(msg{"type": "send", "to": 1, "body": msg{"type": "BACK"}})
	}
	if b.laid < b.eggs {
		b.ask()
		return
	}
	emit(msg{"type": "exit", "resource": fmt.Sprintf("reed:%d", b.reed)})
	b.onReed, b.dead = false, true
	emit(msg{"type": "state", "state": "DEAD"})
	if next := b.id + b.reeds; b.slot+1 < b.perReed && next <= b.n {
		emit(msg{"type": "send", "to": next, "body": msg{"type": "NEXT", "reed": b.reed}})
	}
}

func main() {
	flag.Parse()
	lines := make(chan string)
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			lines <- in.Text()
		}
		close(lines)
	}()
	var b bee
	for line := range lines {
		var m msg
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			fmt.Fprintln(os.Stderr, "bad input:", err)
			os.Exit(3)
		}
		switch m["type"] {
		case "init":
			b.start(m)
			emit(msg{"type": "done", "reinit": true})
		case "recv":
			body := m["body"].(map[string]interface{})
			switch body["type"] {
			case "REQ":
				b.request(num(m["from"]))
			case "BACK":
				b.back()
			case "GRANT":
				b.visit()
			case "NEXT":
				b.takeReed()
			}
			emit(msg{"type": "done"})
		default:
			emit(msg{"type": "done"})
		}
		if err := out.Flush(); err != nil {
			os.Exit(4)
		}
		if *chatter {
			fmt.Fprintf(os.Stderr, "bee %d: laid %d free %d queue %v\n", b.id, b.laid, b.free, b.queue)
		}
	}
}
