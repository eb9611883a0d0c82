// Dining philosophers with a waiter: philosopher 1 is also the waiter, who keeps every
// fork and seats a hungry philosopher once both its forks are free (a FIFO queue of the
// hungry). Written from docs/test-any-program.md alone: a reader thread puts each line on a
// BlockingQueue, the main thread takes them one at a time; no JSON library (a small parser).
//   --broken  the waiter computes the right fork as (i + 1) % n: wrong for the last but one
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;

public class WaiterPhil {
    static final String EOF = "\u0000eof";
    static boolean broken;
    static int id, n;
    static boolean[] forkBusy;           // waiter only, 1..n
    static final ArrayDeque<Integer> hungry = new ArrayDeque<>();
    static final StringBuilder out = new StringBuilder();

    // A tiny JSON reader: objects, arrays, strings, numbers, literals.
    static final class P {
        final String s; int i;
        P(String s) { this.s = s; }
        void ws() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }
        Object val() {
            ws(); char c = s.charAt(i);
            if (c == '{') { i++; Map<String, Object> m = new HashMap<>(); ws();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) { ws(); String k = (String) val(); ws(); i++; m.put(k, val()); ws();
                    if (s.charAt(i++) == '}') return m; } }
            if (c == '[') { i++; List<Object> l = new ArrayList<>(); ws();
                if (s.charAt(i) == ']') { i++; return l; }
                while (true) { l.add(val()); ws(); if (s.charAt(i++) == ']') return l; } }
            if (c == '"') { i++; StringBuilder b = new StringBuilder();
                while (s.charAt(i) != '"') { char d = s.charAt(i++);
                    if (d == '\\') { char e = s.charAt(i++);
                        if (e == 'u') { b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; }
                        else b.append(e == 'n' ? '\n' : e == 't' ? '\t' : e); }
                    else b.append(d); }
                i++; return b.toString(); }
            int st = i; while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            if (st == i) { String w = s.startsWith("true", i) ? "true" : s.startsWith("false", i) ? "false" : "null";
                i += w.length(); return w.equals("null") ? null : Boolean.valueOf(w); }
            return Double.parseDouble(s.substring(st, i));
        }
    }

    static int num(Object o) { return ((Double) o).intValue(); }
    static int left(int p) { return p; }
    static int right(int p) { return broken ? (p + 1) % n : p % n + 1; }
    static int trueRight() { return id % n + 1; }

    static void emit(String line) { out.append(line).append('\n'); }
    static void send(int to, String type) {
        emit("{\"type\":\"send\",\"to\":" + to + ",\"body\":{\"type\":\"" + type + "\"}}");
    }

    // Messages to the waiter: handled at once when I am the waiter.
    static void toWaiter(int from, String type) {
        if (id == 1) waiter(from, type); else send(1, type);
    }
    static void seated(int p) {
        if (p == id) { emit("{\"type\":\"enter\",\"resource\":\"fork:" + id + "\"}");
            emit("{\"type\":\"enter\",\"resource\":\"fork:" + trueRight() + "\"}");
            emit("{\"type\":\"enter\",\"resource\":\"meal\"}");
            emit("{\"type\":\"state\",\"state\":\"EATING\"}"); }
        else send(p, "SEATED");
    }
    static void waiter(int from, String type) {
        if (type.equals("HUNGRY")) hungry.add(from);
        else { forkBusy[left(from)] = false; forkBusy[right(from)] = false; }
        // Seat everyone at the head of the queue whose forks are free (FIFO: no overtaking).
        while (!hungry.isEmpty()) {
            int p = hungry.peek();
            if (forkBusy[left(p)] || forkBusy[right(p)]) break;
            hungry.poll(); forkBusy[left(p)] = true; forkBusy[right(p)] = true; seated(p);
        }
    }

    public static void main(String[] args) throws Exception {
        broken = Arrays.asList(args).contains("--broken");
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) lines.put(l);
            } catch (Exception e) { e.printStackTrace(); }
            try { lines.put(EOF); } catch (InterruptedException e) { }
        }, "reader");
        reader.setDaemon(true);
        reader.start();
        PrintStream w = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        while (true) {
            String l = lines.take();
            if (l == EOF) break;
            if (l.isBlank()) continue;
            @SuppressWarnings("unchecked") Map<String, Object> in = (Map<String, Object>) new P(l).val();
            out.setLength(0);
            String type = (String) in.get("type");
            boolean reinit = false;
            switch (type) {
                case "init":
                    id = num(in.get("id")); n = num(in.get("nodes"));
                    forkBusy = new boolean[n + 1]; hungry.clear(); reinit = true; break;
                case "request":
                    emit("{\"type\":\"state\",\"state\":\"HUNGRY\"}"); toWaiter(id, "HUNGRY"); break;
                case "release":
                    emit("{\"type\":\"exit\",\"resource\":\"meal\"}");
                    emit("{\"type\":\"exit\",\"resource\":\"fork:" + id + "\"}");
                    emit("{\"type\":\"exit\",\"resource\":\"fork:" + trueRight() + "\"}");
                    emit("{\"type\":\"state\",\"state\":\"THINKING\"}");
                    toWaiter(id, "DONE"); break;
                case "recv": {
                    @SuppressWarnings("unchecked") Map<String, Object> body = (Map<String, Object>) in.get("body");
                    String bt = (String) body.get("type"); int from = num(in.get("from"));
                    if (bt.equals("SEATED")) seated(id); else waiter(from, bt);
                    break; }
                default: System.err.println("unknown input " + l);
            }
            emit(reinit ? "{\"type\":\"done\",\"reinit\":true}" : "{\"type\":\"done\"}");
            w.print(out); w.flush();
        }
    }
}
