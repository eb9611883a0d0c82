// k-mutual exclusion, Raymond's k-Ricart-Agrawala, for mutexlab's node protocol.
// Rust standard library only: no serde, the lines are read by hand.
// A node enters once N-K peers replied to its current request; a peer defers its
// reply while it is inside, or waiting with an earlier (ts, id).
// Each REPLY names the request (its ts) it answers; replies to an older request
// are stale and not counted.  Built with --cfg stale it counts every REPLY.
use std::io::{self, BufRead, Write};

fn num_after(s: &str, key: &str) -> Option<i64> {
    let pat = format!("\"{}\":", key);
    let at = s.find(&pat)? + pat.len();
    let rest = s[at..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn str_after<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("\"{}\":\"", key);
    let at = s.find(&pat)? + pat.len();
    let end = s[at..].find('"')?;
    Some(&s[at..at + end])
}

// The body of a recv line: the object after "body": (flat, our own).
fn body_of(s: &str) -> &str {
    let at = s.find("\"body\":{").map(|i| i + 7).unwrap_or(0);
    let end = s[at..].find('}').map(|i| at + i + 1).unwrap_or(s.len());
    &s[at..end]
}

// Its own "type" is the last key of a sorted input line.
fn input_type(s: &str) -> &str {
    let at = s.rfind("\"type\":\"").map(|i| i + 8).unwrap_or(0);
    let end = s[at..].find('"').map(|i| at + i).unwrap_or(s.len());
    &s[at..end]
}

struct Node {
    id: i64,
    peers: Vec<i64>,
    k: i64,
    clock: i64,
    waiting: bool,
    inside: bool,
    my_ts: i64,
    replies: i64,
    deferred: Vec<(i64, i64)>, // (peer, the ts of its request)
}

impl Node {
    fn need(&self) -> i64 {
        self.peers.len() as i64 + 1 - self.k
    }
    fn reply(&mut self, out: &mut String, to: i64, for_ts: i64) {
        self.clock += 1;
        out.push_str(&format!(
            "{{\"type\":\"send\",\"to\":{},\"body\":{{\"type\":\"REPLY\",\"ts\":{},\"for\":{}}}}}\n",
            to, self.clock, for_ts
        ));
    }
    fn try_enter(&mut self, out: &mut String) {
        if self.waiting && self.replies >= self.need() {
            self.waiting = false;
            self.inside = true;
            out.push_str("{\"type\":\"enter\",\"resource\":\"cs\"}\n");
        }
    }
}

fn main() {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut w = stdout.lock();
    let mut n = Node { id: 0, peers: vec![], k: 2, clock: 0, waiting: false, inside: false,
                       my_ts: 0, replies: 0, deferred: vec![] };
    for line in stdin.lock().lines() {
        let line = match line { Ok(l) => l, Err(_) => break };
        if line.trim().is_empty() { continue; }
        let mut out = String::new();
        match input_type(&line) {
            "init" => {
                let peers_at = line.find("\"peers\":[").unwrap() + 9;
                let peers_end = peers_at + line[peers_at..].find(']').unwrap();
                let peers: Vec<i64> = line[peers_at..peers_end]
                    .split(',').filter(|p| !p.is_empty()).map(|p| p.trim().parse().unwrap()).collect();
                n = Node { id: num_after(&line, "id").unwrap(), peers, k: num_after(&line, "k").unwrap_or(2),
                           clock: 0, waiting: false, inside: false, my_ts: 0, replies: 0, deferred: vec![] };
                out.push_str("{\"type\":\"done\",\"reinit\":true}\n");
                w.write_all(out.as_bytes()).unwrap();
                w.flush().unwrap();
                continue;
            }
            "request" => {
                n.clock += 1;
                n.my_ts = n.clock;
                n.waiting = true;
                n.replies = 0;
                for p in n.peers.clone() {
                    out.push_str(&format!(
                        "{{\"type\":\"send\",\"to\":{},\"body\":{{\"type\":\"REQUEST\",\"ts\":{}}}}}\n", p, n.my_ts));
                }
                n.try_enter(&mut out);
            }
            "release" => {
                n.inside = false;
                out.push_str("{\"type\":\"exit\",\"resource\":\"cs\"}\n");
                for (p, ts) in std::mem::take(&mut n.deferred) {
                    n.reply(&mut out, p, ts);
                }
            }
            "recv" => {
                let from = num_after(&line[line.rfind("\"from\":").unwrap()..], "from").unwrap();
                let body = body_of(&line);
                let ts = num_after(body, "ts").unwrap();
                n.clock = n.clock.max(ts) + 1;
                match str_after(body, "type").unwrap_or("") {
                    "REQUEST" => {
                        let mine_first = n.waiting && (n.my_ts, n.id) < (ts, from);
                        if n.inside || mine_first {
                            n.deferred.push((from, ts));
                        } else {
                            n.reply(&mut out, from, ts);
                        }
                    }
                    "REPLY" => {
                        let for_ts = num_after(body, "for").unwrap();
                        #[cfg(stale)]
                        let _ = for_ts;
                        #[cfg(stale)]
                        let current = true;
                        #[cfg(not(stale))]
                        let current = n.waiting && for_ts == n.my_ts;
                        if current { n.replies += 1; }
                        n.try_enter(&mut out);
                    }
                    other => eprintln!("kmutex_ra: unknown message {}", other),
                }
            }
            other => eprintln!("kmutex_ra: unknown input {}", other),
        }
        out.push_str("{\"type\":\"done\"}\n");
        w.write_all(out.as_bytes()).unwrap();
        w.flush().unwrap();
    }
}
