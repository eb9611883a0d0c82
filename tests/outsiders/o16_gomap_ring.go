// A token ring of goroutines that logs as GoVector does, one file per process (DIR/NAME-Log.txt,
// "Initialization Complete" first), without GoVector itself: each record is the process's name
// and its vector clock printed with fmt's %v — Go's map syntax, map[nœud-0:3 nœud-1:1], not
// JSON — then the event on the next line. The names are not ASCII.
//
//	go run o16_gomap_ring.go DIR NODES ROUNDS [early]
//
// early: nœud-1 enters before the token reaches it. It never imports mutexlab.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

type token struct {
	from  string
	clock map[string]int
}

type node struct {
	name string
	vc   map[string]int
	out  *os.File
}

func (n *node) log(event string) {
	n.vc[n.name]++
	fmt.Fprintf(n.out, "%s %v\n%s\n", n.name, n.vc, event)
}

func (n *node) merge(t token) {
	for p, c := range t.clock {
		if c > n.vc[p] {
			n.vc[p] = c
		}
	}
}

func (n *node) critical() {
	n.log("request cs")
	n.log("enter cs")
	n.log("exit cs")
}

func main() {
	dir := os.Args[1]
	count, _ := strconv.Atoi(os.Args[2])
	rounds, _ := strconv.Atoi(os.Args[3])
	early := len(os.Args) > 4 && os.Args[4] == "early"
	inbox := make([]chan token, count)
	for i := range inbox {
		inbox[i] = make(chan token, 1)
	}
	var wg sync.WaitGroup
	for i := 0; i < count; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := fmt.Sprintf("nœud-%d", i)
			out, err := os.Create(filepath.Join(dir, name+"-Log.txt"))
			if err != nil {
				panic(err)
			}
			defer out.Close()
			n := &node{name: name, vc: map[string]int{}, out: out}
			n.log("Initialization Complete")
			next := fmt.Sprintf("nœud-%d", (i+1)%count)
			for r := 0; r < rounds; r++ {
				if early && i == 1 && r == 0 {
					n.critical()
				}
				if r > 0 || i > 0 {
					t := <-inbox[i]
					n.merge(t)
					n.log("token from " + t.from)
				}
				if !(early && i == 1 && r == 0) {
					n.critical()
				}
				n.log("token to " + next)
				clock := map[string]int{}
				for p, c := range n.vc {
					clock[p] = c
				}
				inbox[(i+1)%count] <- token{from: name, clock: clock}
			}
			if i == 0 {
				t := <-inbox[0]
				n.merge(t)
				n.log("token from " + t.from + ", ring done")
			}
		}(i)
	}
	wg.Wait()
}
