// Dining philosophers with a waiter, threads and channels (Rust std only), logging a GoVector
// file for `mutexlab verify`: hosts are the philosophers' numbers ("0".."4") and "waiter".
// rustc -O o9_philosophers.rs && ./o9_philosophers LOG PHILOSOPHERS MEALS [timer]
// timer: the waiter hands a fork on after a pause instead of waiting for it to be put down.
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

type Clock = HashMap<String, u64>;
enum Msg { Ask(usize, Clock), Done(usize, Clock), Grant(Clock) }

struct Logger { me: String, vc: Clock, out: Arc<Mutex<File>> }
impl Logger {
    fn log(&mut self, text: &str) {
        *self.vc.entry(self.me.clone()).or_insert(0) += 1;
        let mut keys: Vec<&String> = self.vc.keys().collect();
        keys.sort();
        let body: Vec<String> = keys.iter().map(|k| format!("\"{}\":{}", k, self.vc[*k])).collect();
        let mut out = self.out.lock().unwrap();
        write!(out, "{} {{{}}}\n{}\n", self.me, body.join(", "), text).unwrap();
    }
    fn merge(&mut self, other: &Clock) {
        for (k, v) in other { let e = self.vc.entry(k.clone()).or_insert(0); if *e < *v { *e = *v; } }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (n, meals): (usize, usize) = (args[2].parse().unwrap(), args[3].parse().unwrap());
    let timer = args.len() > 4;
    let out = Arc::new(Mutex::new(File::create(&args[1]).unwrap()));
    let (to_waiter, inbox): (Sender<Msg>, Receiver<Msg>) = channel();
    let mut to_phil = Vec::new();
    let mut handles = Vec::new();
    for i in 0..n {
        let (tx, rx) = channel();
        to_phil.push(tx);
        let (w, out) = (to_waiter.clone(), out.clone());
        handles.push(thread::spawn(move || {
            let mut lg = Logger { me: i.to_string(), vc: Clock::new(), out };
            let (left, right) = (i, (i + 1) % n);
            for _ in 0..meals {
                lg.log("thinking");
                lg.log(&format!("request fork:{}", left));
                lg.log(&format!("request fork:{}", right));
                lg.log("ask waiter");
                w.send(Msg::Ask(i, lg.vc.clone())).unwrap();
                if let Msg::Grant(c) = rx.recv().unwrap() { lg.merge(&c); }
                lg.log("granted");
                lg.log(&format!("enter fork:{}", left));
                lg.log(&format!("enter fork:{}", right));
                thread::sleep(Duration::from_millis(2));
                lg.log(&format!("exit fork:{}", right));
                lg.log(&format!("exit fork:{}", left));
                lg.log("done eating");
                w.send(Msg::Done(i, lg.vc.clone())).unwrap();
            }
        }));
    }
    drop(to_waiter);
    let mut lg = Logger { me: "waiter".into(), vc: Clock::new(), out: out.clone() };
    let mut busy = vec![false; n];
    let mut queue: Vec<usize> = Vec::new();
    let eaten = n * meals;
    let mut finished = 0;
    while finished < eaten {
        match inbox.recv().unwrap() {
            Msg::Ask(i, c) => { lg.merge(&c); lg.log(&format!("ask from {}", i)); queue.push(i); }
            Msg::Done(i, c) => {
                lg.merge(&c); lg.log(&format!("done from {}", i));
                busy[i] = false; busy[(i + 1) % n] = false; finished += 1;
            }
            Msg::Grant(_) => unreachable!(),
        }
        let mut k = 0;
        while k < queue.len() {
            let i = queue[k];
            if !busy[i] && !busy[(i + 1) % n] {
                busy[i] = true; busy[(i + 1) % n] = true;
                lg.log(&format!("grant to {}", i));
                to_phil[i].send(Msg::Grant(lg.vc.clone())).unwrap();
                queue.remove(k);
                if timer { // the bug: forks are "surely" free again after 15 ms
                    thread::sleep(Duration::from_millis(15));
                    busy[i] = false; busy[(i + 1) % n] = false;
                }
            } else { k += 1; }
        }
    }
    for h in handles { h.join().unwrap(); }
}
