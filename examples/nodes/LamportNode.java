// Lamport's mutual exclusion (1978) as a mutexlab node in Java: one file, the JDK alone.
//
//   java examples/nodes/LamportNode.java            (the source launcher: no build step)
//   mutexlab test mutex --node "java examples/nodes/LamportNode.java" --nodes 3
//   javac -d build examples/nodes/LamportNode.java && mutexlab test mutex --node "java -cp build LamportNode"
//
// A request is (timestamp, id); every node keeps every request in a queue, smallest first. A node
// enters when its own request heads its queue and it has heard something later than it from
// every peer (links are FIFO, so nothing earlier can still come). It answers each REQUEST with an
// ACK and, on leaving, tells everyone RELEASE.
//
// Reads lines with a BufferedReader, writes with a PrintWriter flushed after each input's done
// (without the flush the answer sits in the buffer and the node stalls at its first init). The
// JVM starts in a second or several on a busy machine, more with the source launcher: mutexlab
// gives a process's first answer --start-timeout (30 s), the others --timeout (5 s).
//
// `--broken`: the queue's comparator forgets the tie-break on ids, and a TreeSet takes two
// requests of the same time for one: the second is silently dropped, and both nodes enter.
import java.io.*;
import java.util.*;

public class LamportNode {
    // ---- a tiny JSON reader: objects, arrays, strings, numbers, true/false/null ----
    static final class Json {
        final String s; int i;
        Json(String s) { this.s = s; }
        static Object parse(String s) { Json j = new Json(s); Object v = j.value(); return v; }
        void ws() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }
        Object value() {
            ws();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>(); i++; ws();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) {
                    ws(); String k = (String) value(); ws(); i++; // ':'
                    m.put(k, value()); ws();
                    if (s.charAt(i++) == '}') return m;
                }
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>(); i++; ws();
                if (s.charAt(i) == ']') { i++; return l; }
                while (true) { l.add(value()); ws(); if (s.charAt(i++) == ']') return l; }
            }
            if (c == '"') {
                StringBuilder b = new StringBuilder(); i++;
                while (s.charAt(i) != '"') {
                    if (s.charAt(i) == '\\') { i++; }
                    b.append(s.charAt(i++));
                }
                i++; return b.toString();
            }
            int st = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0 || (i < s.length() && Character.isLetter(s.charAt(i)))) i++;
            String t = s.substring(st, i);
            if (t.equals("true")) return true;
            if (t.equals("false")) return false;
            if (t.equals("null")) return null;
            return Long.parseLong(t);
        }
    }

    int me; List<Integer> peers = new ArrayList<>();
    long clock = 0;
    boolean broken;
    // request queue: (ts, id), smallest first
    final TreeSet<long[]> queue;
    Map<Integer, Long> lastFrom = new HashMap<>();
    long[] mine = null;
    boolean holding = false;
    PrintWriter out;

    LamportNode(PrintWriter out, boolean broken) {
        this.out = out;
        this.broken = broken;
        Comparator<long[]> byTime = (a, b) -> Long.compare(a[0], b[0]);
        // BROKEN: without the tie-break on ids, a TreeSet takes two requests of the same time
        // for one and silently drops the second
        queue = new TreeSet<>(broken ? byTime : byTime.thenComparing(a -> a[1]));
    }

    void send(int to, String type) {
        out.println("{\"type\": \"send\", \"to\": " + to + ", \"body\": {\"type\": \"" + type + "\", \"ts\": " + clock + "}}");
    }

    @SuppressWarnings("unchecked")
    void handle(Map<String, Object> in) {
        String type = (String) in.get("type");
        switch (type) {
            case "init":
                me = ((Long) in.get("id")).intValue();
                peers.clear();
                for (Object p : (List<Object>) in.get("peers")) peers.add(((Long) p).intValue());
                clock = 0; queue.clear(); lastFrom.clear(); mine = null; holding = false;
                out.println("{\"type\": \"done\", \"reinit\": true}");
                return;
            case "request":
                clock++;
                mine = new long[]{clock, me};
                queue.add(mine);
                for (int p : peers) send(p, "REQUEST");
                break;
            case "release":
                holding = false;
                queue.remove(mine);
                mine = null;
                out.println("{\"type\": \"exit\", \"resource\": \"cs\"}");
                clock++;
                for (int p : peers) send(p, "RELEASE");
                break;
            case "recv": {
                int from = ((Long) in.get("from")).intValue();
                Map<String, Object> body = (Map<String, Object>) in.get("body");
                long ts = (Long) body.get("ts");
                clock = Math.max(clock, ts) + 1;
                lastFrom.put(from, ts);
                switch ((String) body.get("type")) {
                    case "REQUEST":
                        queue.add(new long[]{ts, from});
                        send(from, "ACK");
                        break;
                    case "RELEASE":
                        queue.removeIf(r -> r[1] == from);
                        break;
                    default: // ACK: lastFrom is enough
                }
                break;
            }
        }
        if (mine != null && !holding && queue.first() == mine && heardLaterFromAll()) {
            holding = true;
            out.println("{\"type\": \"enter\", \"resource\": \"cs\"}");
        }
        out.println("{\"type\": \"done\"}");
    }

    boolean heardLaterFromAll() {
        for (int p : peers) {
            Long t = lastFrom.get(p);
            if (t == null || t < mine[0] || (t == mine[0] && p < me)) return false;
        }
        return true;
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws IOException {
        boolean broken = args.length > 0 && args[0].equals("--broken");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out)));
        LamportNode node = new LamportNode(out, broken);
        String line;
        while ((line = in.readLine()) != null) {
            node.handle((Map<String, Object>) Json.parse(line));
            out.flush();
        }
    }
}
