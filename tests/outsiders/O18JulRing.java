// A token ring of threads that logs through java.util.logging, as a Java program does: one Logger,
// two FileHandlers on it, one with the XMLFormatter (OUT.xml) and one with the SimpleFormatter
// (OUT.txt, its default two-line layout). Each node keeps a vector clock over node names, ticks its
// own entry at each event it logs, and writes the record GoVector's way on one line, the clock
// between host and event: `n1 {"n0":4,"n1":1} token from n0`. It never imports mutexlab.
//
// javac O18JulRing.java && java -Duser.language=en -Duser.country=US O18JulRing OUT NODES ROUNDS [early]
// early: n1 enters once before its first token arrives (the bug: it overlaps n0's holding).
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.logging.FileHandler;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import java.util.logging.XMLFormatter;

public class O18JulRing {
    static final Logger LOG = Logger.getLogger("ring");

    static final class Token {
        final Map<String, Integer> clock;
        final String from;

        Token(Map<String, Integer> clock, String from) {
            this.clock = clock;
            this.from = from;
        }
    }

    static final class Node implements Runnable {
        final String me;
        final int index, nodes, rounds;
        final boolean early;
        final BlockingQueue<Token>[] inbox;
        final Map<String, Integer> vc = new TreeMap<>();

        Node(int index, int nodes, int rounds, boolean early, BlockingQueue<Token>[] inbox) {
            this.me = "n" + index;
            this.index = index;
            this.nodes = nodes;
            this.rounds = rounds;
            this.early = early;
            this.inbox = inbox;
        }

        void log(String text) {
            vc.merge(me, 1, Integer::sum);
            StringBuilder clock = new StringBuilder("{");
            for (Map.Entry<String, Integer> e : vc.entrySet()) {
                if (clock.length() > 1) clock.append(',');
                clock.append('"').append(e.getKey()).append("\":").append(e.getValue());
            }
            LOG.info(me + " " + clock.append('}') + " " + text);
        }

        void criticalSection() {
            log("request cs");
            log("enter cs");
            log("exit cs");
        }

        @Override
        public void run() {
            try {
                for (int r = 0; r < rounds; r++) {
                    if (early && index == 1 && r == 0) criticalSection(); // before the token: the bug
                    if (r > 0 || index > 0) {
                        Token token = inbox[index].take();
                        token.clock.forEach((p, c) -> vc.merge(p, c, Math::max));
                        log("token from " + token.from);
                    }
                    if (!(early && index == 1 && r == 0)) criticalSection();
                    if (r == rounds - 1 && index == nodes - 1) break; // the last holder keeps it
                    String to = "n" + (index + 1) % nodes;
                    log("token to " + to);
                    inbox[(index + 1) % nodes].put(new Token(new TreeMap<>(vc), me));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void main(String[] args) throws Exception {
        Locale.setDefault(Locale.US);
        String out = args[0];
        int nodes = Integer.parseInt(args[1]), rounds = Integer.parseInt(args[2]);
        boolean early = args.length > 3 && args[3].equals("early");
        LOG.setUseParentHandlers(false);
        Handler xml = new FileHandler(out + ".xml"), text = new FileHandler(out + ".txt");
        xml.setFormatter(new XMLFormatter());
        text.setFormatter(new SimpleFormatter());
        LOG.addHandler(xml);
        LOG.addHandler(text);
        LOG.setLevel(Level.INFO);
        BlockingQueue<Token>[] inbox = new BlockingQueue[nodes];
        for (int i = 0; i < nodes; i++) inbox[i] = new LinkedBlockingQueue<>();
        Thread[] threads = new Thread[nodes];
        for (int i = 0; i < nodes; i++) {
            threads[i] = new Thread(new Node(i, nodes, rounds, early, inbox));
            threads[i].start();
        }
        for (Thread t : threads) t.join();
        xml.close();
        text.close();
    }
}
