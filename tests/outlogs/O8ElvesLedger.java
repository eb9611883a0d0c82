// Hamster killers: a mayor thread hands out contracts; elf threads take a contract, then pins, then
// poison (units) from a ledger thread that grants by message. Clock-free JSON Lines, one file per
// thread (DIR/<name>.jsonl) written by a Windows-style writer: UTF-8 with a BOM, CRLF line ends.
// java O8ElvesLedger.java DIR ELVES CONTRACTS PINS POISON [greedy|crash]
//   greedy: the ledger forgets to count poison taken back; crash: elf-2 dies holding its pins
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;

public class O8ElvesLedger {
    record Msg(String from, String type, int units, String id) {}
    static final Map<String, BlockingQueue<Msg>> boxes = new ConcurrentHashMap<>();
    static String dir, bug;

    static class Proc {
        final String name; final Writer out; int seq = 0;
        Proc(String name) throws IOException {
            this.name = name; boxes.put(name, new LinkedBlockingQueue<>());
            out = new OutputStreamWriter(new FileOutputStream(dir + "/" + name + ".jsonl"), StandardCharsets.UTF_8);
            out.write('\uFEFF');
        }
        void log(String json) {
            try { out.write("{" + json + ", \"pid\": \"" + name + "\"}\r\n"); out.flush(); } catch (IOException e) { throw new UncheckedIOException(e); }
        }
        void send(String to, String type, int units) {
            String id = name + "/" + (seq++);
            log("\"event\": \"send\", \"type\": \"" + type + "\", \"to\": \"" + to + "\", \"id\": \"" + id + "\"");
            boxes.get(to).add(new Msg(name, type, units, id));
        }
        Msg recv() throws InterruptedException {
            Msg m = boxes.get(name).take();
            log("\"event\": \"recv\", \"type\": \"" + m.type + "\", \"from\": \"" + m.from + "\", \"id\": \"" + m.id + "\"");
            return m;
        }
        void res(String kind, String resource, int units) {
            log("\"event\": \"" + kind + "\", \"resource\": \"" + resource + "\"" + (units != 1 ? ", \"units\": " + units : ""));
        }
    }

    public static void main(String[] a) throws Exception {
        dir = a[0]; int elves = Integer.parseInt(a[1]), contracts = Integer.parseInt(a[2]);
        int pins = Integer.parseInt(a[3]), poison = Integer.parseInt(a[4]); bug = a.length > 5 ? a[5] : "";
        new File(dir).mkdirs();
        Proc mayor = new Proc("mayor"), ledger = new Proc("ledger");
        List<Proc> elf = new ArrayList<>();
        for (int i = 1; i <= elves; i++) elf.add(new Proc("elf-" + i));
        List<Thread> ts = new ArrayList<>();
        ts.add(new Thread(() -> { // the ledger: pins and poison, granted in order of asking
            try {
                int freePins = pins, freePoison = poison, stops = 0;
                Deque<Msg> wait = new ArrayDeque<>();
                while (stops < elves) {
                    Msg m = ledger.recv();
                    switch (m.type) {
                        case "WANT_PINS", "WANT_POISON" -> wait.add(m);
                        case "BACK_PINS" -> freePins += m.units;
                        case "BACK_POISON" -> freePoison += bug.equals("greedy") ? 2 * m.units : m.units;
                        case "BYE" -> stops++;
                    }
                    for (Iterator<Msg> it = wait.iterator(); it.hasNext(); ) {
                        Msg w = it.next();
                        boolean isPins = w.type.equals("WANT_PINS");
                        int free = isPins ? freePins : freePoison;
                        if (w.units <= free) {
                            if (isPins) freePins -= w.units; else freePoison -= w.units;
                            ledger.send(w.from, isPins ? "PINS" : "POISON", w.units); it.remove();
                        }
                    }
                }
            } catch (InterruptedException e) { }
        }));
        ts.add(new Thread(() -> { // the mayor: one contract per request, then NONE
            try {
                int next = 1, nones = 0;
                while (nones < elves) {
                    Msg m = mayor.recv();
                    if (m.type.equals("DONE")) continue;
                    if (next <= contracts) mayor.send(m.from, "CONTRACT", next++); else { mayor.send(m.from, "NONE", 1); nones++; }
                }
            } catch (InterruptedException e) { }
        }));
        for (Proc e : elf) ts.add(new Thread(() -> {
            try {
                while (true) {
                    e.send("mayor", "WANT_CONTRACT", 1);
                    Msg c = e.recv();
                    if (c.type.equals("NONE")) { e.send("ledger", "BYE", 1); return; }
                    String contract = "contract:" + c.units; int hamsters = 1 + c.units % 3;
                    e.res("enter", contract, 1);
                    e.res("request", "pins", 2); e.send("ledger", "WANT_PINS", 2); e.recv(); e.res("enter", "pins", 2);
                    if (bug.equals("crash") && e.name.equals("elf-2")) { e.out.write("{\"event\": \"exit\", \"reso"); e.out.flush(); return; }
                    e.res("request", "poison", hamsters); e.send("ledger", "WANT_POISON", hamsters); e.recv(); e.res("enter", "poison", hamsters);
                    Thread.sleep(3);
                    e.res("exit", "poison", hamsters); e.send("ledger", "BACK_POISON", hamsters);
                    e.res("exit", "pins", 2); e.send("ledger", "BACK_PINS", 2);
                    e.res("exit", contract, 1); e.send("mayor", "DONE", 1);
                }
            } catch (Exception x) { throw new RuntimeException(x); }
        }));
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join(bug.equals("crash") ? 3000 : 0);
        System.exit(0);
    }
}
