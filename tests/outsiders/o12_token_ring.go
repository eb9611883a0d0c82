// Token ring mutual exclusion for `mutexlab test mutex`, written from docs/test-any-program.md.
//
// The token starts at node 1 and moves along the ring (i -> i%n+1). A node that wants the
// critical section tells everybody (WANT, with its request number); a node holding the idle
// token passes it on to its successor as soon as it knows of a request the token has not served
// yet, and keeps it otherwise (nothing arrives unasked, so a token nobody wants rests).
//
// Style: a goroutine reads stdin into a channel, another writes every output line handed to it
// on a channel; encoding/json with struct tags; debugging on stderr.
//
// Flags: -eager hands the token on when asked even while inside (two nodes inside);
// -circulate passes the token on whoever wants it, forever (Le Lann's ring: never at rest);
// -panic indexes past its table on a second request (index out of range: a crash mid-run).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

type Input struct {
	Type     string          `json:"type"`
	ID       int             `json:"id"`
	Nodes    int             `json:"nodes"`
	From     int             `json:"from"`
	Body     json.RawMessage `json:"body"`
	Resource string          `json:"resource"`
}

type Msg struct {
	Type   string `json:"type"`
	Seq    int    `json:"seq,omitempty"`
	Served []int  `json:"served,omitempty"`
}

type Out struct {
	Type     string `json:"type"`
	To       int    `json:"to,omitempty"`
	Body     *Msg   `json:"body,omitempty"`
	Resource string `json:"resource,omitempty"`
	Reinit   bool   `json:"reinit,omitempty"`
}

var (
	eager     = flag.Bool("eager", false, "hand the token on while inside")
	circulate = flag.Bool("circulate", false, "pass the token on for ever")
	crash     = flag.Bool("panic", false, "index out of range on a second request")
)

type node struct {
	me, n          int
	asked, served  []int // per node, 1-based: requests known, requests the token served
	token, wanting bool
	inside         bool
	mine           int
	out            chan<- Out
}

func (s *node) reset(me, n int) {
	s.me, s.n = me, n
	s.asked, s.served = make([]int, n+1), make([]int, n+1)
	s.token, s.wanting, s.inside, s.mine = me == 1, false, false, 0
}

func (s *node) outstanding() bool {
	for j := 1; j <= s.n; j++ {
		if s.asked[j] > s.served[j] {
			return true
		}
	}
	return false
}

func (s *node) pass() {
	s.token = false
	next := s.me%s.n + 1
	s.out <- Out{Type: "send", To: next, Body: &Msg{Type: "TOKEN", Served: s.served}}
}

// maybePass: the token moves on when it is idle here and somebody asked
func (s *node) maybePass() {
	if s.token && !s.wanting && (*eager || !s.inside) && s.n > 1 && (*circulate || s.outstanding()) {
		s.pass()
	}
}

func (s *node) enter() {
	s.inside = true
	s.served[s.me] = s.mine
	s.out <- Out{Type: "enter", Resource: "cs"}
}

func main() {
	flag.Parse()
	lines := make(chan []byte)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	out := make(chan Out, 64)
	flushed := make(chan struct{})
	go func() {
		w := bufio.NewWriter(os.Stdout)
		for o := range out {
			b, _ := json.Marshal(o)
			w.Write(b)
			w.WriteByte('\n')
			if o.Type == "done" {
				w.Flush()
			}
		}
		w.Flush()
		close(flushed)
	}()
	s := &node{out: out}
	for line := range lines {
		var in Input
		if err := json.Unmarshal(line, &in); err != nil {
			fmt.Fprintln(os.Stderr, "bad input:", err)
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "node %d <- %s\n", s.me, in.Type)
		switch in.Type {
		case "init":
			s.reset(in.ID, in.Nodes)
			if *circulate {
				s.maybePass()
			}
			out <- Out{Type: "done", Reinit: true}
			continue
		case "request":
			s.mine++
			s.asked[s.me] = s.mine
			if *crash && s.mine > 1 {
				s.asked[s.n+s.mine-1]++ // meant: a table of requests per node
			}
			for j := 1; j <= s.n; j++ {
				if j != s.me {
					s.out <- Out{Type: "send", To: j, Body: &Msg{Type: "WANT", Seq: s.mine}}
				}
			}
			if s.token {
				s.enter()
			} else {
				s.wanting = true
			}
		case "release":
			s.inside = false
			out <- Out{Type: "exit", Resource: "cs"}
			s.maybePass()
		case "recv":
			var m Msg
			json.Unmarshal(in.Body, &m)
			switch m.Type {
			case "WANT":
				if m.Seq > s.asked[in.From] {
					s.asked[in.From] = m.Seq
				}
				s.maybePass()
			case "TOKEN":
				s.token = true
				for j := 1; j <= s.n; j++ {
					if m.Served[j] > s.served[j] {
						s.served[j] = m.Served[j]
					}
				}
				if s.wanting {
					s.wanting = false
					s.enter()
				} else {
					s.maybePass()
				}
			}
		}
		out <- Out{Type: "done"}
	}
	close(out)
	<-flushed
}
