// A token ring of goroutines that logs as Go's log/slog JSON handler does
// (slog.New(slog.NewJSONHandler(os.Stdout, nil))): time, level, msg, then the attributes —
// here mutexlab's clock-free event fields (event, pid, resource, type, to, from, id).
// Go 1.19 has no log/slog, so the handler's line is written by hand, field for field.
//
//	go run o14_slog_ring.go NODES ROUNDS [early] > LOG
//
// early: node 2 enters once before its first token arrives (a real overlap).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

var (
	out   sync.Mutex
	start = time.Date(2026, 12, 2, 0, 10, 0, 0, time.UTC)
	seq   int
)

type attr struct {
	k string
	v string
}

// logInfo writes one line as slog's JSONHandler orders it: time, level, msg, attributes.
func logInfo(msg string, attrs ...attr) {
	out.Lock()
	defer out.Unlock()
	seq++
	ts := start.Add(time.Duration(seq) * 137 * time.Microsecond).Format(time.RFC3339Nano)
	line := fmt.Sprintf(`{"time":%q,"level":"INFO","msg":%s`, ts, quote(msg))
	for _, a := range attrs {
		line += fmt.Sprintf(",%s:%s", quote(a.k), quote(a.v))
	}
	fmt.Fprintln(os.Stdout, line+"}")
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

type token struct{ from, id string }

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	rounds, _ := strconv.Atoi(os.Args[2])
	early := len(os.Args) > 3 && os.Args[3] == "early"
	inbox := make([]chan token, n)
	for i := range inbox {
		inbox[i] = make(chan token, 1)
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			me := fmt.Sprintf("n%d", i+1)
			cs := func() {
				logInfo("want the lock", attr{"event", "request"}, attr{"pid", me}, attr{"resource", "cs"})
				logInfo("in critical section", attr{"event", "enter"}, attr{"pid", me}, attr{"resource", "cs"})
				time.Sleep(time.Millisecond)
				logInfo("left critical section", attr{"event", "exit"}, attr{"pid", me}, attr{"resource", "cs"})
			}
			for r := 0; r < rounds; r++ {
				if early && i == 1 && r == 0 {
					cs()
				}
				if r > 0 || i > 0 {
					t := <-inbox[i]
					logInfo("token from "+t.from, attr{"event", "recv"}, attr{"pid", me}, attr{"type", "TOKEN"},
						attr{"from", t.from}, attr{"id", t.id})
				}
				if !(early && i == 1 && r == 0) {
					cs()
				}
				to := fmt.Sprintf("n%d", (i+1)%n+1)
				id := fmt.Sprintf("%s/%d", me, r)
				if i == n-1 && r == rounds-1 {
					break // the last hop: nobody waits for it
				}
				logInfo("token to "+to, attr{"event", "send"}, attr{"pid", me}, attr{"type", "TOKEN"},
					attr{"to", to}, attr{"id", id})
				inbox[(i+1)%n] <- token{me, id}
			}
		}(i)
	}
	wg.Wait()
}
