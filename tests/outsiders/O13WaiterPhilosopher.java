// Dining philosophers with a waiter: philosopher 1 doubles as the waiter who hands out both forks
// at once. Written from docs/test-any-program.md only. Style: a BufferedReader thread feeding a
// LinkedBlockingQueue, the main thread answering with System.out.printf and %n, regexes instead of
// a JSON library (the line's own "type" is its last key: keys come sorted).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class O13WaiterPhilosopher {
    static final String EOF = "\u0000eof";
    static final Pattern NUM = Pattern.compile("\"(id|nodes|from)\":(\\d+)");
    static final Pattern TYPE = Pattern.compile("\"type\":\"(\\w+)\"");

    int me, n;
    boolean[] forkBusy;
    ArrayDeque<Integer> queue = new ArrayDeque<>();

    static String lastType(String line) {
        Matcher m = TYPE.matcher(line);
        String last = null;
        while (m.find()) last = m.group(1);
        return last;
    }

    static String bodyType(String line) {
        Matcher m = TYPE.matcher(line);
        return m.find() ? m.group(1) : null; // the body comes first (sorted keys)
    }

    static int num(String line, String key) {
        Matcher m = NUM.matcher(line);
        int found = -1;
        while (m.find()) if (m.group(1).equals(key)) found = Integer.parseInt(m.group(2));
        return found;
    }

    int right(int i) { return i % n + 1; }

    void eat(int who) {
        System.out.printf("{\"type\":\"enter\",\"resource\":\"fork:%d\"}%n", who);
        System.out.printf("{\"type\":\"enter\",\"resource\":\"fork:%d\"}%n", right(who));
        System.out.printf("{\"type\":\"enter\",\"resource\":\"meal\"}%n");
        System.out.printf("{\"type\":\"state\",\"state\":\"EATING\"}%n");
    }

    // waiter side (node 1): grant whoever can eat now, in order of asking
    void serve() {
        for (int round = 0; round < queue.size(); round++) {
            int who = queue.pollFirst();
            if (!forkBusy[who] && !forkBusy[right(who)]) {
                forkBusy[who] = forkBusy[right(who)] = true;
                if (who == 1) eat(1);
                else System.out.printf("{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"FORKS\"}}%n", who);
                round--;
            } else {
                queue.addLast(who);
            }
        }
    }

    void handle(String line) {
        String type = lastType(line);
        switch (type) {
            case "init":
                me = num(line, "id");
                n = num(line, "nodes");
                forkBusy = new boolean[n + 2];
                queue.clear();
                System.out.printf("{\"type\":\"state\",\"state\":\"THINKING\"}%n");
                System.out.printf("{\"type\":\"done\",\"reinit\":true}%n");
                return;
            case "request":
                System.out.printf("{\"type\":\"state\",\"state\":\"HUNGRY\"}%n");
                if (me == 1) { queue.addLast(1); serve(); }
                else System.out.printf("{\"type\":\"send\",\"to\":1,\"body\":{\"type\":\"HUNGRY\"}}%n");
                break;
            case "release":
                System.out.printf("{\"type\":\"exit\",\"resource\":\"meal\"}%n");
                System.out.printf("{\"type\":\"exit\",\"resource\":\"fork:%d\"}%n", me);
                System.out.printf("{\"type\":\"exit\",\"resource\":\"fork:%d\"}%n", right(me));
                System.out.printf("{\"type\":\"state\",\"state\":\"THINKING\"}%n");
                if (me == 1) { forkBusy[1] = forkBusy[right(1)] = false; serve(); }
                else System.out.printf("{\"type\":\"send\",\"to\":1,\"body\":{\"type\":\"FULL\"}}%n");
                break;
            case "recv":
                String what = bodyType(line);
                int from = num(line, "from");
                if ("HUNGRY".equals(what)) { queue.addLast(from); serve(); }
                else if ("FULL".equals(what)) { forkBusy[from] = forkBusy[right(from)] = false; serve(); }
                else if ("FORKS".equals(what)) eat(me);
                break;
            default:
                break;
        }
        System.out.printf("{\"type\":\"done\"}%n");
    }

    public static void main(String[] args) throws Exception {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String l;
                while ((l = in.readLine()) != null) lines.put(l);
            } catch (Exception e) {
                e.printStackTrace();
            }
            lines.add(EOF);
        }, "stdin-reader");
        reader.setDaemon(true);
        reader.start();
        O13WaiterPhilosopher p = new O13WaiterPhilosopher();
        for (;;) {
            String line = lines.take();
            if (line == EOF) break;
            if (!line.isBlank()) p.handle(line);
        }
    }
}
