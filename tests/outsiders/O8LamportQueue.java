// Lamport's mutual exclusion in Java, written from docs/test-any-program.md: a reader thread
// puts each input line on a BlockingQueue, a worker thread takes it, answers, then writes done.
// No JSON library: the few fields are cut out with regular expressions (top-level ones by
// taking the "body" object out first). Arguments: --racy (the reader writes "done" for a
// message as soon as it has queued it, the worker's answer racing behind it).
import java.io.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.regex.*;

public class O8LamportQueue {
    static final boolean RACY = Arrays.asList(System.getProperty("args", "").split(",")).contains("racy");
    static final PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out)), false);
    static int me, n, clock;
    static PriorityQueue<long[]> queue;   // {ts, id}
    static Set<Integer> acked;
    static long[] mine;
    static boolean inside;

    static Integer num(String s, String key) {
        Matcher m = Pattern.compile("\"" + key + "\":(-?\\d+)").matcher(s);
        return m.find() ? Integer.valueOf(m.group(1)) : null;
    }
    static String str(String s, String key) {
        Matcher m = Pattern.compile("\"" + key + "\":\"([^\"]*)\"").matcher(s);
        return m.find() ? m.group(1) : null;
    }
    static synchronized void emit(String line) { out.println(line); }

    static void send(int to, String type, int ts) {
        emit("{\"type\":\"send\",\"to\":" + to + ",\"body\":{\"type\":\"" + type + "\",\"ts\":" + ts + "}}");
    }
    static void tryEnter() {
        if (mine == null || inside || acked.size() < n - 1) return;
        long[] head = queue.peek();
        if (head != null && head[1] == me) { inside = true; emit("{\"type\":\"enter\",\"resource\":\"cs\"}"); }
    }
    static void handle(String line) {
        String body = null, top = line;
        int b = line.indexOf("\"body\":{");
        if (b >= 0) { int e = line.indexOf('}', b); body = line.substring(b + 7, e + 1); top = line.substring(0, b) + line.substring(e + 1); }
        String type = str(top, "type");
        switch (type) {
            case "init":
                me = num(top, "id"); n = num(top, "nodes"); clock = 0; inside = false; mine = null;
                queue = new PriorityQueue<>((x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[1], y[1]));
                acked = new HashSet<>();
                emit("{\"type\":\"done\",\"reinit\":true}");
                out.flush();
                return;
            case "request":
                clock++; mine = new long[]{clock, me}; queue.add(mine); acked.clear();
                for (int p = 1; p <= n; p++) if (p != me) send(p, "REQUEST", clock);
                tryEnter();
                break;
            case "release":
                inside = false; queue.remove(mine); mine = null; clock++;
                emit("{\"type\":\"exit\",\"resource\":\"cs\"}");
                for (int p = 1; p <= n; p++) if (p != me) send(p, "RELEASE", clock);
                break;
            case "recv": {
                int from = num(top, "from"), ts = num(body, "ts");
                String kind = str(body, "type");
                clock = Math.max(clock, ts) + 1;
                if (kind.equals("REQUEST")) { queue.add(new long[]{ts, from}); send(from, "ACK", clock); }
                else if (kind.equals("ACK")) acked.add(from);
                else if (kind.equals("RELEASE")) queue.removeIf(r -> r[1] == from);
                tryEnter();
                break;
            }
        }
        if (!RACY || !type.equals("recv")) emit("{\"type\":\"done\"}");
        out.flush();
    }

    public static void main(String[] args) throws Exception {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread worker = new Thread(() -> {
            try {
                while (true) { String l = lines.take(); if (l.isEmpty()) return; handle(l); }
            } catch (InterruptedException e) { }
        });
        worker.start();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in), 1 << 20);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            lines.put(line);
            if (RACY && line.contains("\"type\":\"recv\"")) { emit("{\"type\":\"done\"}"); out.flush(); }
        }
        lines.put("");
        worker.join();
    }
}
