// k-mutual exclusion, written against the mutexlab node protocol from its docs.
// Design: node 1 keeps the K permits (a semaphore server); every node, node 1
// included, asks it for a permit and gives it back on release.
// Threads: a reader thread puts stdin lines on a BlockingQueue, a worker thread
// takes them and answers through a PrintWriter.
//   --broken        the server lets one node too many in (inside <= K)
//   --no-autoflush  the PrintWriter never flushes (a classic)
//   --slow-start    sleep 2 s before reading anything
//   --string-ids    writes "to" as a JSON string
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;

public class KSemNode {
    // ---- a minimal JSON reader/writer ----
    static final class P {
        final String s; int i = 0;
        P(String s) { this.s = s; }
        void ws() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }
        Object val() {
            ws();
            char c = s.charAt(i);
            if (c == '{') {
                i++; Map<String, Object> m = new LinkedHashMap<>(); ws();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) {
                    ws(); String k = (String) val(); ws(); i++; // ':'
                    m.put(k, val()); ws();
                    if (s.charAt(i++) == '}') return m;
                }
            }
            if (c == '[') {
                i++; List<Object> l = new ArrayList<>(); ws();
                if (s.charAt(i) == ']') { i++; return l; }
                while (true) { l.add(val()); ws(); if (s.charAt(i++) == ']') return l; }
            }
            if (c == '"') {
                StringBuilder b = new StringBuilder(); i++;
                while (s.charAt(i) != '"') {
                    char d = s.charAt(i++);
                    if (d == '\\') {
                        char e = s.charAt(i++);
                        switch (e) {
                            case 'n': b.append('\n'); break;
                            case 't': b.append('\t'); break;
                            case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                            default: b.append(e);
                        }
                    } else b.append(d);
                }
                i++; return b.toString();
            }
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int st = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String num = s.substring(st, i);
            if (num.contains(".") || num.contains("e") || num.contains("E")) return Double.parseDouble(num);
            return Long.parseLong(num);
        }
    }

    static String q(String s) { return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\""; }

    // ---- the node ----
    static boolean broken, stringIds;
    static PrintWriter out;
    static long me, k;
    static final int SERVER = 1;
    // server state (node 1 only)
    static long inside = 0;
    static final ArrayDeque<Long> waiting = new ArrayDeque<>();

    static void send(long to, String body) {
        String t = stringIds ? q(Long.toString(to)) : Long.toString(to);
        out.print("{\"type\":\"send\",\"to\":" + t + ",\"body\":" + body + "}\n");
    }
    static void enter() { out.print("{\"type\":\"enter\",\"resource\":\"cs\"}\n"); }

    // a permit goes to `who`: to ourselves means we enter now
    static void grant(long who) {
        inside++;
        if (who == me) enter(); else send(who, "{\"type\":\"GRANT\"}");
    }
    static void serverAcquire(long who) {
        boolean room = broken ? inside <= k : inside < k;
        if (room && waiting.isEmpty()) grant(who); else waiting.add(who);
    }
    static void serverRelease() {
        inside--;
        while (!waiting.isEmpty() && inside < k) grant(waiting.poll());
    }

    @SuppressWarnings("unchecked")
    static void handle(Map<String, Object> m) {
        String type = (String) m.get("type");
        switch (type) {
            case "init": {
                me = ((Number) m.get("id")).longValue();
                Map<String, Object> o = (Map<String, Object>) m.get("options");
                k = ((Number) o.getOrDefault("k", 2L)).longValue();
                inside = 0; waiting.clear();
                out.print("{\"type\":\"done\",\"reinit\":true}\n");
                return;
            }
            case "request":
                if (me == SERVER) serverAcquire(me); else send(SERVER, "{\"type\":\"ACQUIRE\"}");
                break;
            case "release":
                out.print("{\"type\":\"exit\",\"resource\":\"cs\"}\n");
                if (me == SERVER) serverRelease(); else send(SERVER, "{\"type\":\"RELEASE\"}");
                break;
            case "recv": {
                long from = ((Number) m.get("from")).longValue();
                String bt = (String) ((Map<String, Object>) m.get("body")).get("type");
                if (bt.equals("ACQUIRE")) serverAcquire(from);
                else if (bt.equals("RELEASE")) serverRelease();
                else if (bt.equals("GRANT")) enter();
                break;
            }
            default:
                System.err.println("unknown input " + type);
        }
        out.print("{\"type\":\"done\"}\n");
    }

    public static void main(String[] args) throws Exception {
        boolean autoflush = true, slow = false;
        for (String a : args) {
            if (a.equals("--broken")) broken = true;
            else if (a.equals("--no-autoflush")) autoflush = false;
            else if (a.equals("--slow-start")) slow = true;
            else if (a.equals("--string-ids")) stringIds = true;
        }
        // autoflush on PrintWriter only flushes on println/printf/format: print("...\n") does not.
        // So we flush by hand after done unless told not to.
        out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)), false);
        final boolean flush = autoflush;
        if (slow) Thread.sleep(2000);
        BlockingQueue<String> inbox = new LinkedBlockingQueue<>();
        final String EOF = new String("<eof>");
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) inbox.put(line);
            } catch (Exception e) {
                e.printStackTrace();
            }
            try { inbox.put(EOF); } catch (InterruptedException e) { }
        }, "reader");
        Thread worker = new Thread(() -> {
            try {
                while (true) {
                    String line = inbox.take();
                    if (line == EOF) break;
                    if (line.isBlank()) continue;
                    @SuppressWarnings("unchecked")
                    Map<String, Object> m = (Map<String, Object>) new P(line).val();
                    handle(m);
                    if (flush) out.flush();
                }
            } catch (InterruptedException e) { }
            out.flush();
        }, "worker");
        reader.setDaemon(true);
        reader.start();
        worker.start();
        worker.join();
    }
}
