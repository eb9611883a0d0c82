// Lamport's mutual exclusion for `mutexlab test mutex`, from docs/test-any-program.md.
//
// A reader thread parses each stdin line by hand (no crates) and hands it to a worker thread over
// an mpsc channel; the worker keeps the queue and writes every output line with println! (Rust's
// stdout is line-buffered, even into a pipe: no flush by hand); a third thread, a "heartbeat
// logger", writes {"type":"log"} lines to the same stdout whenever the worker tells it to, so two
// threads write stdout concurrently — each println! holds stdout's lock for its line.
//
// Build: rustc -O -o lamport o12_lamport_mpsc.rs; `--cfg early` enters as soon as its own request
// heads its queue, without waiting to hear a later stamp from every peer.
use std::collections::BTreeSet;
use std::io::{self, BufRead};
use std::sync::mpsc;
use std::thread;

fn field(line: &str, key: &str) -> Option<i64> {
    // the last top-level-looking occurrence: an input's own keys come after its body's (sorted)
    let pat = format!("\"{}\":", key);
    let at = line.rfind(&pat)? + pat.len();
    let rest = &line[at..];
    let end = rest.find(|c: char| c != '-' && !c.is_ascii_digit()).unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn text(line: &str, key: &str) -> Option<String> {
    let pat = format!("\"{}\":\"", key);
    let at = line.rfind(&pat)? + pat.len();
    let rest = &line[at..];
    Some(rest[..rest.find('"')?].to_string())
}

enum Input {
    Init { me: i64, n: i64 },
    Request,
    Release,
    Recv { from: i64, kind: String, ts: i64 },
    Other,
}

fn parse(line: &str) -> Input {
    match text(line, "type").as_deref() {
        Some("init") => Input::Init { me: field(line, "id").unwrap(), n: field(line, "nodes").unwrap() },
        Some("request") => Input::Request,
        Some("release") => Input::Release,
        Some("recv") => {
            // body first (keys sorted): {"body":{"ts":3,"type":"REQ"},"from":2,"type":"recv"}
            let body_end = line.find('}').unwrap();
            let body = &line[..body_end];
            Input::Recv {
                from: field(line, "from").unwrap(),
                kind: text(body, "type").unwrap(),
                ts: field(body, "ts").unwrap(),
            }
        }
        _ => Input::Other,
    }
}

struct Node {
    me: i64,
    n: i64,
    clock: i64,
    queue: BTreeSet<(i64, i64)>,
    mine: Option<(i64, i64)>,
    heard: Vec<i64>, // latest stamp heard from each node
    inside: bool,
}

impl Node {
    fn new(me: i64, n: i64) -> Node {
        Node { me, n, clock: 0, queue: BTreeSet::new(), mine: None, heard: vec![0; (n + 1) as usize], inside: false }
    }
    fn send(&self, to: i64, kind: &str, ts: i64) {
        println!("{{\"type\":\"send\",\"to\":{},\"body\":{{\"type\":\"{}\",\"ts\":{}}}}}", to, kind, ts);
    }
    fn can_enter(&self) -> bool {
        let mine = match self.mine { Some(m) => m, None => return false };
        if self.inside || self.queue.iter().next() != Some(&mine) {
            return false;
        }
        if cfg!(early) {
            return true;
        }
        (1..=self.n).filter(|&j| j != self.me).all(|j| self.heard[j as usize] > mine.0)
    }
    fn try_enter(&mut self) {
        if self.can_enter() {
            self.inside = true;
            println!("{{\"type\":\"enter\",\"resource\":\"cs\"}}");
        }
    }
}

fn main() {
    let (tx, rx) = mpsc::channel::<String>();
    let (log_tx, log_rx) = mpsc::channel::<(String, mpsc::Sender<()>)>();
    thread::spawn(move || {
        let stdin = io::stdin();
        for line in stdin.lock().lines() {
            let line = line.expect("read");
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    thread::spawn(move || {
        for (what, ack) in log_rx {
            println!("{{\"type\":\"log\",\"heartbeat\":\"{}\"}}", what);
            let _ = ack.send(());
        }
    });
    let worker = thread::spawn(move || {
        let mut node = Node::new(0, 0);
        for line in rx {
            let input = parse(&line);
            let (ack_tx, ack_rx) = mpsc::channel();
            log_tx.send((line.len().to_string(), ack_tx)).unwrap();
            match input {
                Input::Init { me, n } => {
                    node = Node::new(me, n);
                    ack_rx.recv().unwrap();
                    println!("{{\"type\":\"done\",\"reinit\":true}}");
                    continue;
                }
                Input::Request => {
                    node.clock += 1;
                    let stamp = (node.clock, node.me);
                    node.mine = Some(stamp);
                    node.queue.insert(stamp);
                    for j in 1..=node.n {
                        if j != node.me {
                            node.send(j, "REQ", stamp.0);
                        }
                    }
                    node.try_enter();
                }
                Input::Release => {
                    node.inside = false;
                    println!("{{\"type\":\"exit\",\"resource\":\"cs\"}}");
                    if let Some(m) = node.mine.take() {
                        node.queue.remove(&m);
                    }
                    node.clock += 1;
                    for j in 1..=node.n {
                        if j != node.me {
                            node.send(j, "REL", node.clock);
                        }
                    }
                }
                Input::Recv { from, kind, ts } => {
                    node.clock = node.clock.max(ts) + 1;
                    node.heard[from as usize] = node.heard[from as usize].max(ts);
                    match kind.as_str() {
                        "REQ" => {
                            node.queue.insert((ts, from));
                            node.clock += 1;
                            node.send(from, "ACK", node.clock);
                        }
                        "REL" => {
                            let gone: Vec<_> = node.queue.iter().filter(|e| e.1 == from).cloned().collect();
                            for e in gone {
                                node.queue.remove(&e);
                            }
                        }
                        _ => {}
                    }
                    node.try_enter();
                }
                Input::Other => {}
            }
            ack_rx.recv().unwrap(); // the heartbeat is written before the done
            println!("{{\"type\":\"done\"}}");
        }
    });
    worker.join().unwrap();
}
