// Dining philosophers for mutexlab (test-any-program.md): forks travel as messages between
// neighbours, and a hungry philosopher takes its lower-numbered fork first (the resource
// hierarchy), keeping only that one against a neighbour's request.
//
//	go build -o phil o18_phil_ticker.go && mutexlab test philosophers --node ./phil
//
// A goroutine scans stdin into a channel; the main loop selects on it and on a time.Ticker,
// whose tick writes a heartbeat log line (the protocol ignores log lines) so a human watching
// the pipe sees the philosopher is alive.
//
// -polite: an eating philosopher hands over a fork it is asked for (it should finish first).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"
)

type msg struct {
	Type  string          `json:"type"`
	ID    int             `json:"id"`
	Nodes int             `json:"nodes"`
	From  int             `json:"from"`
	Body  json.RawMessage `json:"body"`
}

type forkMsg struct {
	Type string `json:"type"` // ASK or FORK
	Fork int    `json:"fork"`
}

type phil struct {
	me, n         int
	left, right   int // fork numbers
	first, second int // the order it takes them in
	state         string
	has           map[int]bool
	asked         map[int]bool
	owed          map[int]bool // a neighbour asked while we kept it
	meals         int
}

var polite = flag.Bool("polite", false, "hand over a fork while eating (a bug)")

func newPhil(me, n int) *phil {
	p := &phil{me: me, n: n, left: me, right: me%n + 1, state: "THINKING",
		has: map[int]bool{}, asked: map[int]bool{}, owed: map[int]bool{}}
	p.first, p.second = p.left, p.right
	if p.right < p.left {
		p.first, p.second = p.right, p.left
	}
	// fork f starts with the lower id of the two who share it
	for _, f := range []int{p.left, p.right} {
		if p.other(f) > me {
			p.has[f] = true
		}
	}
	return p
}

// other is the neighbour sharing fork f
func (p *phil) other(f int) int {
	if f == p.left {
		return (p.me+p.n-2)%p.n + 1
	}
	return p.me%p.n + 1
}

type outbox []map[string]interface{}

func (o *outbox) add(m map[string]interface{}) { *o = append(*o, m) }

func (p *phil) send(out *outbox, f int, kind string) {
	out.add(map[string]interface{}{"type": "send", "to": p.other(f), "body": forkMsg{kind, f}})
}

func (p *phil) try(out *outbox) {
	if p.state != "HUNGRY" {
		return
	}
	if !p.has[p.first] {
		if !p.asked[p.first] {
			p.asked[p.first] = true
			p.send(out, p.first, "ASK")
		}
		return
	}
	if !p.has[p.second] {
		if !p.asked[p.second] {
			p.asked[p.second] = true
			p.send(out, p.second, "ASK")
		}
		return
	}
	p.state = "EATING"
	p.meals++
	out.add(map[string]interface{}{"type": "enter", "resource": fmt.Sprintf("fork:%d", p.left)})
	out.add(map[string]interface{}{"type": "enter", "resource": fmt.Sprintf("fork:%d", p.right)})
	out.add(map[string]interface{}{"type": "enter", "resource": "meal"})
	out.add(map[string]interface{}{"type": "state", "state": "EATING"})
}

func (p *phil) give(out *outbox, f int) {
	p.has[f] = false
	p.owed[f] = false
	p.send(out, f, "FORK")
}

func (p *phil) handle(m msg, out *outbox) {
	switch m.Type {
	case "request":
		p.state = "HUNGRY"
		out.add(map[string]interface{}{"type": "state", "state": "HUNGRY"})
		p.try(out)
	case "release":
		p.state = "THINKING"
		out.add(map[string]interface{}{"type": "exit", "resource": "meal"})
		out.add(map[string]interface{}{"type": "exit", "resource": fmt.Sprintf("fork:%d", p.left)})
		out.add(map[string]interface{}{"type": "exit", "resource": fmt.Sprintf("fork:%d", p.right)})
		out.add(map[string]interface{}{"type": "state", "state": "THINKING"})
		for _, f := range []int{p.first, p.second} {
			if p.owed[f] && p.has[f] {
				p.give(out, f)
			}
		}
	case "recv":
		var fm forkMsg
		if err := json.Unmarshal(m.Body, &fm); err != nil {
			fmt.Fprintln(os.Stderr, "bad body:", err)
			return
		}
		switch fm.Type {
		case "ASK":
			if !p.has[fm.Fork] {
				return // already on its way to them
			}
			keep := p.state == "EATING" || (p.state == "HUNGRY" && fm.Fork == p.first)
			if *polite && p.state == "EATING" {
				keep = false
			}
			if keep {
				p.owed[fm.Fork] = true
			} else {
				p.give(out, fm.Fork)
				if p.state == "HUNGRY" { // we gave up our second: ask again when it is our turn
					p.asked[fm.Fork] = false
				}
			}
		case "FORK":
			p.has[fm.Fork] = true
			p.asked[fm.Fork] = false
			p.try(out)
		}
	}
}

func main() {
	flag.Parse()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	ticker := time.NewTicker(25 * time.Millisecond)
	defer ticker.Stop()
	var p *phil
	beats := 0
	for {
		select {
		case <-ticker.C:
			beats++
			if beats%4 == 0 { // every 100 ms
				enc.Encode(map[string]interface{}{"type": "log", "heartbeat": beats / 4})
				w.Flush()
			}
		case line, ok := <-lines:
			if !ok {
				return
			}
			var m msg
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				fmt.Fprintln(os.Stderr, "cannot parse:", line)
				continue
			}
			if m.Type == "init" {
				p = newPhil(m.ID, m.Nodes)
				enc.Encode(map[string]interface{}{"type": "done", "reinit": true})
				w.Flush()
				continue
			}
			var out outbox
			p.handle(m, &out)
			for _, o := range out {
				enc.Encode(o)
			}
			enc.Encode(map[string]string{"type": "done"})
			w.Flush()
		}
	}
}
