// Dining philosophers with a waiter, as threads and mpsc channels, logging as Rust's `tracing`
// does through tracing_subscriber::fmt().json(): one JSON object a line, the event's fields in
// "fields" (the text as "message"), its target, and the current span ("span", and "spans" the
// whole stack). Each philosopher's events happen inside its span philosopher{pid="phil-N"}.
// With `flat`, the layout .flatten_event(true) writes: the fields at the top level, and the
// philosopher's name recorded on each event as a field `pid` too (a span's fields stay in "span").
// No crates: the subscriber's line is written by hand, field for field.
//   rustc -O o14_tracing_waiter.rs && ./o14_tracing_waiter PHILOSOPHERS MEALS [flat] [greedy] > LOG
// greedy: the waiter checks only the left fork before granting both.
use std::sync::mpsc::{channel, Sender};
use std::sync::Mutex;
use std::thread;

static OUT: Mutex<u64> = Mutex::new(0);

fn q(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            _ => o.push(c),
        }
    }
    o + "\""
}

/// One tracing event: `fields` as written (message first), in span philosopher{pid} or none.
fn event(flat: bool, span: Option<&str>, fields: &[(&str, String)]) {
    let mut n = OUT.lock().unwrap();
    *n += 1;
    let ts = format!("2026-12-02T00:30:{:02}.{:06}Z", *n / 1000, (*n % 1000) * 911);
    let mut f: Vec<String> = fields.iter().map(|(k, v)| format!("{}:{}", q(k), q(v))).collect();
    let (span_json, target) = match span {
        Some(p) => (format!("{{\"pid\":{},\"name\":\"philosopher\"}}", q(p)), "waiter_philo::philosopher"),
        None => (String::new(), "waiter_philo::waiter"),
    };
    let spans = if span.is_some() { format!(",\"span\":{},\"spans\":[{}]", span_json, span_json) } else { String::new() };
    let line = if flat {
        if let Some(p) = span {
            f.push(format!("\"pid\":{}", q(p)));
        }
        format!("{{\"timestamp\":{},\"level\":\"INFO\",{},\"target\":{}{}}}", q(&ts), f.join(","), q(target), spans)
    } else {
        format!("{{\"timestamp\":{},\"level\":\"INFO\",\"fields\":{{{}}},\"target\":{}{}}}", q(&ts), f.join(","), q(target), spans)
    };
    println!("{}", line);
}

enum Ask {
    Want(usize, String),
    Done(usize, String),
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args[1].parse().unwrap();
    let meals: usize = args[2].parse().unwrap();
    let flat = args.iter().any(|a| a == "flat");
    let greedy = args.iter().any(|a| a == "greedy");
    let (to_waiter, inbox) = channel::<Ask>();
    let mut grants: Vec<Sender<String>> = Vec::new();
    let mut handles = Vec::new();
    for i in 0..n {
        let (tx, rx) = channel::<String>();
        grants.push(tx);
        let to_waiter = to_waiter.clone();
        handles.push(thread::spawn(move || {
            let me = format!("phil-{}", i + 1);
            let sp = Some(me.as_str());
            let forks = [format!("fork:{}", i + 1), format!("fork:{}", (i + 1) % n + 1)];
            for m in 0..meals {
                for f in &forks {
                    event(flat, sp, &[("message", "hungry".into()), ("event", "request".into()), ("resource", f.clone())]);
                }
                let id = format!("{}.want.{}", me, m);
                event(flat, sp, &[("message", "asks the waiter".into()), ("event", "send".into()), ("type", "WANT".into()), ("to", "waiter".into()), ("id", id.clone())]);
                to_waiter.send(Ask::Want(i, id)).unwrap();
                let grant = rx.recv().unwrap();
                event(flat, sp, &[("message", "may eat".into()), ("event", "recv".into()), ("type", "FORKS".into()), ("from", "waiter".into()), ("id", grant)]);
                for f in &forks {
                    event(flat, sp, &[("message", "picked up fork".into()), ("event", "enter".into()), ("resource", f.clone())]);
                }
                thread::yield_now();
                for f in &forks {
                    event(flat, sp, &[("message", "put down fork".into()), ("event", "exit".into()), ("resource", f.clone())]);
                }
                let id = format!("{}.done.{}", me, m);
                event(flat, sp, &[("message", "thanks the waiter".into()), ("event", "send".into()), ("type", "DONE".into()), ("to", "waiter".into()), ("id", id.clone())]);
                to_waiter.send(Ask::Done(i, id)).unwrap();
            }
        }));
    }
    drop(to_waiter);
    let waiter = thread::spawn(move || {
        let mut busy = vec![false; n];
        let mut queue: Vec<usize> = Vec::new();
        let mut sent = 0;
        let w = |e: &str, t: &str, who: &str, id: &str| {
            let mut f = vec![("message", format!("{} {}", t, who)), ("event", e.to_string()), ("type", t.to_string())];
            f.push((if e == "send" { "to" } else { "from" }, who.to_string()));
            f.push(("id", id.to_string()));
            f.push(("pid", "waiter".to_string()));
            event(flat, None, &f);
        };
        for ask in inbox {
            match ask {
                Ask::Want(i, id) => { w("recv", "WANT", &format!("phil-{}", i + 1), &id); queue.push(i); }
                Ask::Done(i, id) => {
                    w("recv", "DONE", &format!("phil-{}", i + 1), &id);
                    busy[i] = false;
                    busy[(i + 1) % n] = false;
                }
            }
            let mut k = 0;
            while k < queue.len() {
                let i = queue[k];
                if !busy[i] && (greedy || !busy[(i + 1) % n]) {
                    queue.remove(k);
                    busy[i] = true;
                    busy[(i + 1) % n] = true;
                    sent += 1;
                    let id = format!("waiter.{}", sent);
                    w("send", "FORKS", &format!("phil-{}", i + 1), &id);
                    grants[i].send(id).unwrap();
                } else {
                    k += 1;
                }
            }
        }
    });
    for h in handles {
        h.join().unwrap();
    }
    waiter.join().unwrap();
}
