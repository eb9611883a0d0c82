// A central lock server and N clients as threads; each thread stamps its log lines with its own
// (skewed) wall clock, and the aggregator sorts the lines by stamp, as a log collector would.
// Clock-free JSON Lines: sends and receives carry message ids. usage: java O5CentralLock OUT N ROUNDS [broken]
import java.io.*;
import java.util.*;
import java.util.concurrent.*;

public class O5CentralLock {
    static final List<String[]> lines = Collections.synchronizedList(new ArrayList<>());
    static final long BASE = 1796000000000L;
    static BlockingQueue<String[]>[] inbox;
    static int n; static boolean broken;

    static class Proc {
        final String name; final long skewMs; int seq;
        Proc(String name, long skewMs) { this.name = name; this.skewMs = skewMs; }
        void log(String json) {
            long now = System.nanoTime() / 1000 + skewMs * 1000; // microseconds, skewed
            String ts = String.format("%d.%06d", BASE / 1000 + now / 1000000, now % 1000000);
            lines.add(new String[]{ts, "{\"time\": " + ts + ", \"level\": \"INFO\", \"pid\": \"" + name + "\", " + json + "}"});
        }
        void send(int to, String type) {
            String id = name + "/" + (++seq);
            String toName = to == 0 ? "server" : "client" + to;
            log("\"event\": \"send\", \"type\": \"" + type + "\", \"to\": \"" + toName + "\", \"id\": \"" + id + "\"");
            inbox[to].add(new String[]{type, name, id});
        }
        String[] recv(int me) throws InterruptedException {
            String[] m = inbox[me].take();
            log("\"event\": \"recv\", \"type\": \"" + m[0] + "\", \"from\": \"" + m[1] + "\", \"id\": \"" + m[2] + "\"");
            return m;
        }
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] a) throws Exception {
        n = Integer.parseInt(a[1]); int rounds = Integer.parseInt(a[2]); broken = a.length > 3;
        inbox = new BlockingQueue[n + 1];
        for (int i = 0; i <= n; i++) inbox[i] = new LinkedBlockingQueue<>();
        Thread server = new Thread(() -> {
            Proc p = new Proc("server", -40);
            Deque<Integer> waiting = new ArrayDeque<>(); int holders = 0, done = 0;
            try {
                while (done < n * rounds) {
                    String[] m = p.recv(0); int who = Integer.parseInt(m[1].substring(6));
                    if (m[0].equals("REQUEST")) waiting.add(who); else { holders--; done++; }
                    int limit = broken ? 2 : 1;
                    while (holders < limit && !waiting.isEmpty()) { holders++; p.send(waiting.poll(), "GRANT"); }
                }
            } catch (InterruptedException e) { }
        });
        List<Thread> ts = new ArrayList<>(); ts.add(server);
        for (int i = 1; i <= n; i++) {
            final int me = i;
            ts.add(new Thread(() -> {
                Proc p = new Proc("client" + me, me * 7 % 5 * 10 - 20);
                try {
                    for (int r = 0; r < rounds; r++) {
                        p.log("\"event\": \"request\", \"resource\": \"cs\"");
                        p.send(0, "REQUEST");
                        p.recv(me);
                        p.log("\"event\": \"enter\", \"resource\": \"cs\"");
                        Thread.sleep(2);
                        p.log("\"event\": \"exit\", \"resource\": \"cs\"");
                        p.send(0, "RELEASE");
                    }
                } catch (InterruptedException e) { }
            }));
        }
        server.start(); for (int i = 1; i < ts.size(); i++) ts.get(i).start();
        for (Thread t : ts) t.join();
        List<String[]> all = new ArrayList<>(lines);
        all.sort(Comparator.comparing(x -> x[0]));
        try (PrintWriter w = new PrintWriter(new FileWriter(a[0]))) { for (String[] l : all) w.println(l[1]); }
    }
}
