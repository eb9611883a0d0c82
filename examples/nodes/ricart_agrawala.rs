//! Ricart–Agrawala as a mutexlab node in Rust, the standard library alone (no crates, no serde):
//! the input lines are read with a few string searches, as a program without a JSON library
//! would (docs/test-any-program.md).
//!
//!     rustc -O -o ra-rs examples/nodes/ricart_agrawala.rs
//!     mutexlab test mutex --node ./ra-rs --nodes 3
//!     rustc -O --cfg broken -o ra-rs-broken examples/nodes/ricart_agrawala.rs
//!         (replies to a REQUEST while holding the critical section)
//!
//! Rust's stdout is line-buffered even into a pipe (a `LineWriter`): every line goes out at its
//! newline, so nothing waits in a buffer. An input's keys are sorted, so its own `"type"` is its
//! last one (a `recv`'s body, which has a `type` too, comes before it).
use std::io::{self, BufRead, Write};

/// The whole number after `"key":` (the first one in the line).
fn number(line: &str, key: &str) -> i64 {
    let pattern = format!("\"{}\":", key);
    let start = line.find(&pattern).map(|i| i + pattern.len()).expect("a field the protocol gives");
    let rest = &line[start..];
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(rest.len());
    rest[..end].parse().expect("a whole number")
}

/// The input's own type: the last `"type":"…"` of the line.
fn kind(line: &str) -> &str {
    let start = line.rfind("\"type\":\"").expect("every input has a type") + 8;
    line[start..].split('"').next().unwrap_or("")
}

struct Node {
    me: i64,
    nodes: i64,
    clock: i64,
    my_ts: i64,
    requesting: bool,
    holding: bool,
    replies: i64,
    deferred: Vec<i64>,
}

fn send(out: &mut impl Write, to: i64, body: &str) {
    writeln!(out, "{{\"type\":\"send\",\"to\":{},\"body\":{}}}", to, body).unwrap();
}

impl Node {
    fn handle(&mut self, line: &str, out: &mut impl Write) {
        match kind(line) {
            "request" => {
                self.clock += 1;
                self.my_ts = self.clock;
                self.requesting = true;
                self.replies = 0;
                for peer in (1..=self.nodes).filter(|&p| p != self.me) {
                    send(out, peer, &format!("{{\"type\":\"REQUEST\",\"ts\":{}}}", self.my_ts));
                }
            }
            "release" => {
                self.holding = false;
                writeln!(out, "{{\"type\":\"exit\",\"resource\":\"cs\"}}").unwrap();
                for peer in self.deferred.drain(..) {
                    send(out, peer, "{\"type\":\"REPLY\"}");
                }
            }
            "recv" => {
                let from = number(line, "from");
                if line.contains("\"type\":\"REQUEST\"") {
                    let ts = number(line, "ts");
                    self.clock = self.clock.max(ts) + 1;
                    let mine_first = self.requesting && (self.my_ts, self.me) < (ts, from);
                    let defer = if cfg!(broken) { mine_first } else { self.holding || mine_first };
                    if defer {
                        self.deferred.push(from);
                    } else {
                        send(out, from, "{\"type\":\"REPLY\"}");
                    }
                } else {
                    self.replies += 1;
                }
            }
            _ => {}
        }
        if self.requesting && self.replies == self.nodes - 1 {
            self.requesting = false;
            self.holding = true;
            writeln!(out, "{{\"type\":\"enter\",\"resource\":\"cs\"}}").unwrap();
        }
    }
}

fn main() {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut node: Option<Node> = None;
    for line in io::stdin().lock().lines() {
        let line = line.expect("UTF-8 input");
        if kind(&line) == "init" {
            // A fresh node for every run: reinit is a promise kept.
            node = Some(Node {
                me: number(&line, "id"),
                nodes: number(&line, "nodes"),
                clock: 0,
                my_ts: 0,
                requesting: false,
                holding: false,
                replies: 0,
                deferred: Vec::new(),
            });
            writeln!(out, "{{\"type\":\"done\",\"reinit\":true}}").unwrap();
            continue;
        }
        node.as_mut().expect("init comes first").handle(&line, &mut out);
        writeln!(out, "{{\"type\":\"done\"}}").unwrap();
    }
}
