import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * k-mutual exclusion (Raymond's extension of Ricart-Agrawala) as a mutexlab node.
 *
 * <pre>
 *   javac -d out KMutexPool.java
 *   mutexlab test kmutex --node "java -cp out KMutexPool" -o k=2
 * </pre>
 *
 * A node asks every peer and enters once N-K of them have answered its current request (each
 * REPLY names the request it answers, so a late one for an older request is not counted). A
 * node defers a request while it is inside or while its own pending request is older.
 *
 * Every input line is handled by a task on a small thread pool (the reader never blocks on the
 * logic); the main thread waits for the task's outputs and writes them, then done.
 *
 * Argument --eager: a node inside answers a request at once instead of deferring it (a bug).
 */
public class KMutexPool {

    // ---------------------------------------------------------------- a small JSON reader/writer
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) { this.s = s; }

        static Object parse(String text) {
            Json j = new Json(text);
            Object v = j.value();
            j.ws();
            if (j.i != text.length()) throw new IllegalArgumentException("trailing text at " + j.i);
            return v;
        }

        private void ws() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }

        private Object value() {
            ws();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++; ws();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) {
                    ws();
                    String k = (String) value();
                    ws(); i++; // ':'
                    m.put(k, value());
                    ws();
                    if (s.charAt(i++) == '}') return m;
                }
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++; ws();
                if (s.charAt(i) == ']') { i++; return l; }
                while (true) {
                    l.add(value());
                    ws();
                    if (s.charAt(i++) == ']') return l;
                }
            }
            if (c == '"') {
                StringBuilder b = new StringBuilder();
                i++;
                while (s.charAt(i) != '"') {
                    char ch = s.charAt(i++);
                    if (ch == '\\') {
                        char e = s.charAt(i++);
                        switch (e) {
                            case 'n': b.append('\n'); break;
                            case 't': b.append('\t'); break;
                            case 'r': b.append('\r'); break;
                            case 'b': b.append('\b'); break;
                            case 'f': b.append('\f'); break;
                            case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                            default: b.append(e);
                        }
                    } else b.append(ch);
                }
                i++;
                return b.toString();
            }
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String num = s.substring(start, i);
            if (num.contains(".") || num.contains("e") || num.contains("E")) return Double.parseDouble(num);
            return Long.parseLong(num);
        }

        static String write(Object v) {
            if (v == null) return "null";
            if (v instanceof String) {
                StringBuilder b = new StringBuilder("\"");
                for (char c : ((String) v).toCharArray()) {
                    if (c == '"' || c == '\\') b.append('\\').append(c);
                    else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
                return b.append('"').toString();
            }
            if (v instanceof Map) {
                StringBuilder b = new StringBuilder("{");
                boolean first = true;
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    if (!first) b.append(',');
                    first = false;
                    b.append(write(e.getKey().toString())).append(':').append(write(e.getValue()));
                }
                return b.append('}').toString();
            }
            if (v instanceof List) {
                StringBuilder b = new StringBuilder("[");
                boolean first = true;
                for (Object o : (List<?>) v) {
                    if (!first) b.append(',');
                    first = false;
                    b.append(write(o));
                }
                return b.append(']').toString();
            }
            return v.toString(); // numbers, booleans
        }
    }

    static Map<String, Object> obj(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int k = 0; k < kv.length; k += 2) m.put((String) kv[k], kv[k + 1]);
        return m;
    }

    static int num(Object o) { return ((Number) o).intValue(); }

    // ---------------------------------------------------------------- the algorithm
    static final class Node {
        final int me, n, k;
        final List<Integer> peers = new ArrayList<>();
        final boolean eager;
        long clock = 0, myTs = 0;
        boolean requesting = false, inside = false;
        int replies = 0;
        final TreeSet<Integer> deferred = new TreeSet<>();
        final Map<Integer, Long> deferredTs = new LinkedHashMap<>();

        Node(Map<String, Object> init, boolean eager) {
            me = num(init.get("id"));
            n = num(init.get("nodes"));
            @SuppressWarnings("unchecked")
            Map<String, Object> options = (Map<String, Object>) init.get("options");
            k = options.containsKey("k") ? num(options.get("k")) : 2;
            for (Object p : (List<?>) init.get("peers")) peers.add(num(p));
            this.eager = eager;
        }

        List<Map<String, Object>> handle(Map<String, Object> in) {
            List<Map<String, Object>> out = new ArrayList<>();
            String type = (String) in.get("type");
            switch (type) {
                case "request":
                    clock++;
                    myTs = clock;
                    requesting = true;
                    replies = 0;
                    for (int p : peers) out.add(obj("type", "send", "to", p, "body", obj("type", "REQUEST", "ts", myTs)));
                    maybeEnter(out);
                    break;
                case "release":
                    inside = false;
                    out.add(obj("type", "exit", "resource", "cs"));
                    for (int p : deferred) {
                        clock++;
                        out.add(obj("type", "send", "to", p, "body", obj("type", "REPLY", "ts", clock, "for", deferredTs.get(p))));
                    }
                    deferred.clear();
                    deferredTs.clear();
                    break;
                case "recv":
                    int from = num(in.get("from"));
                    @SuppressWarnings("unchecked")
                    Map<String, Object> body = (Map<String, Object>) in.get("body");
                    long ts = ((Number) body.get("ts")).longValue();
                    clock = Math.max(clock, ts) + 1;
                    if ("REQUEST".equals(body.get("type"))) {
                        boolean mineFirst = requesting && (myTs < ts || (myTs == ts && me < from));
                        if ((inside && !eager) || mineFirst) {
                            deferred.add(from);
                            deferredTs.put(from, ts);
                        } else {
                            clock++;
                            out.add(obj("type", "send", "to", from, "body", obj("type", "REPLY", "ts", clock, "for", ts)));
                        }
                    } else if ("REPLY".equals(body.get("type"))) {
                        long forTs = ((Number) body.get("for")).longValue();
                        if (requesting && forTs == myTs) {
                            replies++;
                            maybeEnter(out);
                        }
                    }
                    break;
                default:
                    System.err.println("node " + me + ": ignoring " + type);
            }
            return out;
        }

        void maybeEnter(List<Map<String, Object>> out) {
            if (requesting && replies >= n - k) {
                requesting = false;
                inside = true;
                out.add(obj("type", "enter", "resource", "cs"));
            }
        }
    }

    public static void main(String[] args) throws Exception {
        boolean eager = args.length > 0 && args[0].equals("--eager");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        ExecutorService pool = Executors.newFixedThreadPool(2);
        Node[] node = new Node[1];
        try {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) continue;
                @SuppressWarnings("unchecked")
                Map<String, Object> msg = (Map<String, Object>) Json.parse(line);
                if ("init".equals(msg.get("type"))) {
                    node[0] = new Node(msg, eager);
                    out.println(Json.write(obj("type", "done", "reinit", true)));
                    out.flush();
                    continue;
                }
                Future<List<Map<String, Object>>> task = pool.submit(() -> node[0].handle(msg));
                for (Map<String, Object> o : task.get()) out.println(Json.write(o));
                out.println(Json.write(obj("type", "done")));
                out.flush();
            }
        } catch (IOException e) {
            System.err.println("read failed: " + e);
        } finally {
            pool.shutdownNow();
        }
    }
}
