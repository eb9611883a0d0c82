// Suzuki–Kasami broadcast token mutex for mutexlab (docs/test-any-program.md), run with
// `go run o15_sk_select.go` like our other lab tools.
//
// A goroutine scans stdin (bufio.Scanner) into a channel; main sits in a select loop over the
// lines and the reader's end. Output goes through one bufio.Writer, flushed after each done.
// Node 1 starts with the token. RN[j] is the highest request number heard from j, LN[j] the
// number of j's last request served; the token carries LN and a queue.
//
// BROKEN_SK=1 hands the token over whenever a request is outstanding, even from inside the
// critical section. -lazy-flush flushes only every other answer (a bug of ours, once).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

type msg struct {
	Type     string          `json:"type"`
	ID       int             `json:"id"`
	Nodes    int             `json:"nodes"`
	From     int             `json:"from"`
	Body     json.RawMessage `json:"body"`
	Resource string          `json:"resource"`
}

type body struct {
	Type  string `json:"type"`
	N     int    `json:"n,omitempty"`
	LN    []int  `json:"ln,omitempty"`
	Queue []int  `json:"queue"`
}

type node struct {
	id, n     int
	rn, ln    []int
	queue     []int
	token, in bool
	wanting   bool
	broken    bool
	out       []interface{}
}

func (s *node) emit(v interface{}) { s.out = append(s.out, v) }

func (s *node) send(to int, b body) {
	s.emit(map[string]interface{}{"type": "send", "to": to, "body": b})
}

// passToken gives the token to the first waiting node, if any, when we do not need it.
func (s *node) passToken() {
	if !s.token || (s.in && !s.broken) || s.wanting { // broken: given from inside too
		return
	}
	for j := 1; j <= s.n; j++ {
		if j == s.id {
			continue
		}
		found := false
		for _, q := range s.queue {
			if q == j {
				found = true
			}
		}
		if !found && s.rn[j] == s.ln[j]+1 {
			s.queue = append(s.queue, j)
		}
	}
	if len(s.queue) == 0 {
		return
	}
	next := s.queue[0]
	s.queue = s.queue[1:]
	s.token = false
	s.send(next, body{Type: "TOKEN", LN: append([]int(nil), s.ln...), Queue: append([]int{}, s.queue...)})
	s.queue = nil
}

func (s *node) handle(m msg) {
	switch m.Type {
	case "request":
		s.rn[s.id]++
		if s.token {
			s.in = true
			s.emit(map[string]string{"type": "enter", "resource": "cs"})
			return
		}
		s.wanting = true
		for j := 1; j <= s.n; j++ {
			if j != s.id {
				s.send(j, body{Type: "REQUEST", N: s.rn[s.id]})
			}
		}
	case "release":
		s.in = false
		s.emit(map[string]string{"type": "exit", "resource": "cs"})
		s.ln[s.id] = s.rn[s.id]
		s.passToken()
	case "recv":
		var b body
		if err := json.Unmarshal(m.Body, &b); err != nil {
			fmt.Fprintln(os.Stderr, "bad body:", err)
			os.Exit(3)
		}
		switch b.Type {
		case "REQUEST":
			if b.N > s.rn[m.From] {
				s.rn[m.From] = b.N
			}
			s.passToken()
		case "TOKEN":
			s.token, s.wanting, s.in = true, false, true
			s.ln, s.queue = b.LN, b.Queue
			s.emit(map[string]string{"type": "enter", "resource": "cs"})
		}
	}
}

func main() {
	lazy := flag.Bool("lazy-flush", false, "flush every other answer")
	flag.Parse()
	lines := make(chan string)
	eof := make(chan error)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		eof <- sc.Err()
	}()
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	var s *node
	answers := 0
	for {
		select {
		case err := <-eof:
			w.Flush()
			if err != nil {
				fmt.Fprintln(os.Stderr, "read:", err)
				os.Exit(1)
			}
			return
		case line := <-lines:
			if line == "" {
				continue
			}
			var m msg
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				fmt.Fprintln(os.Stderr, "bad line:", line)
				os.Exit(2)
			}
			if m.Type == "init" {
				s = &node{id: m.ID, n: m.Nodes, rn: make([]int, m.Nodes+1), ln: make([]int, m.Nodes+1),
					token: m.ID == 1, broken: os.Getenv("BROKEN_SK") == "1"}
				enc.Encode(map[string]interface{}{"type": "done", "reinit": true})
			} else {
				s.out = nil
				s.handle(m)
				for _, o := range s.out {
					enc.Encode(o)
				}
				enc.Encode(map[string]string{"type": "done"})
			}
			answers++
			if !*lazy || answers%2 == 1 {
				w.Flush()
			}
		}
	}
}
