package tidemark.bridge;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.Semaphore;

/**
 * Entry point of the Tidemark JDBC bridge.
 *
 * <pre>
 * java -Duser.timezone=UTC -cp CLASSES:h2.jar:hsqldb.jar tidemark.bridge.Server \
 *     [--port 0] [--bind 127.0.0.1] [--token T] [--allow-url-prefix P]... [--exit-on-stdin-eof]
 *     [--max-request-bytes N] [--memory-budget-bytes N] [--admin-sessions]
 *     [--tls-cert CHAIN.pem --tls-key KEY.pem]
 * </pre>
 *
 * <p>Prints exactly one line {@code LISTENING <port>} on stdout once it accepts connections. The
 * token may also come from the environment variable {@code TIDEMARK_JDBCBRIDGE_TOKEN}; it and
 * TLS are mandatory when binding a non-loopback address. The token is never logged.
 */
public final class Server {
    /**
     * Default allow-listed JDBC URL prefixes: in-memory databases only. File and network URLs
     * must be allowed explicitly with --allow-url-prefix, a file URL by its directory (for
     * example jdbc:h2:file:/srv/tidemark/).
     */
    static final String[] DEFAULT_PREFIXES = {"jdbc:h2:mem:", "jdbc:hsqldb:mem:"};

    /**
     * Classes whose static methods HSQLDB may call as SQL routines (hsqldb.method_class_names).
     * Unset, HSQLDB lets CREATE FUNCTION ... EXTERNAL NAME 'CLASSPATH:java.lang.System...' run
     * any public static method on the class path; this names no class, so only HSQLDB's
     * built-in functions remain. A -D on the command line wins.
     */
    static final String HSQLDB_METHOD_CLASSES = "tidemark.bridge.NoJavaRoutines.*";

    /** Immutable server configuration shared by all sessions. */
    static final class Config {
        final String token;
        final List<String> prefixes;
        /** Largest request or response frame, in bytes (54000 beyond). */
        final int maxRequest;
        /** Bytes of request frames all sessions may hold at once. */
        final Budget budget;
        /** Whether sessions on in-memory databases run without admin rights (see Restrict). */
        final boolean restrictSessions;

        Config(String token, List<String> prefixes, int maxRequest, Budget budget, boolean restrictSessions) {
            this.token = token;
            this.prefixes = prefixes;
            this.maxRequest = maxRequest;
            this.budget = budget;
            this.restrictSessions = restrictSessions;
        }

        /** Returns null when the URL may be opened, else the reason it is refused. */
        String checkUrl(String url, Properties props) {
            if (url == null) {
                return "missing JDBC URL";
            }
            boolean ok = false;
            for (String p : prefixes) {
                if (url.regionMatches(true, 0, p, 0, p.length())) {
                    ok = true;
                    break;
                }
            }
            if (!ok) {
                return "JDBC URL not allowed by the bridge allow-list " + prefixes;
            }
            // A path prefix must not be escaped with "..": jdbc:h2:file:/srv/db/../../etc/x.
            String path = url;
            int semi = path.indexOf(';');
            if (semi >= 0) {
                path = path.substring(0, semi);
            }
            for (String seg : path.split("[/\\\\:]")) {
                if (seg.equals("..")) {
                    return "JDBC URL with a '..' path segment is refused by the bridge";
                }
            }
            if (url.regionMatches(true, 0, "jdbc:h2:", 0, 8)) {
                // INIT=... runs arbitrary SQL (RUNSCRIPT, CREATE ALIAS) while connecting.
                String squashed = url.replaceAll("\\s+", "").toUpperCase(Locale.ROOT);
                if (squashed.contains("INIT=")) {
                    return "H2 URLs with INIT= are refused by the bridge";
                }
                for (String k : props.stringPropertyNames()) {
                    if (k.trim().equalsIgnoreCase("INIT")) {
                        return "H2 INIT property is refused by the bridge";
                    }
                }
            }
            return null;
        }
    }

    /**
     * The bytes of request frames held by all sessions at once, counted in KiB. A reader waits
     * for room before it allocates a frame, so many large requests arriving together queue
     * instead of exhausting the heap; the default is a quarter of the maximum heap.
     */
    static final class Budget {
        private final Semaphore kib;

        Budget(long bytes) {
            kib = new Semaphore((int) Math.min(Integer.MAX_VALUE, Math.max(1, (bytes + 1023) >> 10)));
        }

        private static int units(int bytes) {
            return (int) ((bytes + 1023L) >> 10);
        }

        void acquire(int bytes) throws InterruptedException {
            kib.acquire(units(bytes));
        }

        void release(int bytes) {
            kib.release(units(bytes));
        }
    }

    private Server() {}

    /** Starts the server; see the class comment for the arguments. */
    public static void main(String[] args) throws IOException {
        int port = 0;
        String bind = "127.0.0.1";
        String token = System.getenv("TIDEMARK_JDBCBRIDGE_TOKEN");
        List<String> prefixes = new ArrayList<>();
        boolean exitOnStdinEof = false;
        long maxRequest = Protocol.DEFAULT_MAX_REQUEST;
        long budgetBytes = Runtime.getRuntime().maxMemory() / 4;
        boolean restrict = true;
        String tlsCert = null;
        String tlsKey = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--port":
                    port = Integer.parseInt(need(args, ++i, a));
                    break;
                case "--bind":
                    bind = need(args, ++i, a);
                    break;
                case "--token":
                    token = need(args, ++i, a);
                    break;
                case "--allow-url-prefix":
                    prefixes.add(need(args, ++i, a));
                    break;
                case "--max-request-bytes":
                    maxRequest = Long.parseLong(need(args, ++i, a));
                    break;
                case "--memory-budget-bytes":
                    budgetBytes = Long.parseLong(need(args, ++i, a));
                    break;
                case "--tls-cert":
                    tlsCert = need(args, ++i, a);
                    break;
                case "--tls-key":
                    tlsKey = need(args, ++i, a);
                    break;
                case "--admin-sessions":
                    restrict = false;
                    break;
                case "--exit-on-stdin-eof":
                    exitOnStdinEof = true;
                    break;
                default:
                    fail("unknown argument " + a);
            }
        }
        if (prefixes.isEmpty()) {
            prefixes.addAll(List.of(DEFAULT_PREFIXES));
        }
        if (System.getProperty("hsqldb.method_class_names") == null) {
            System.setProperty("hsqldb.method_class_names", HSQLDB_METHOD_CLASSES);
        }
        InetAddress addr = InetAddress.getByName(bind);
        if (!addr.isLoopbackAddress() && (token == null || token.isEmpty())) {
            fail("refusing to bind non-loopback address " + bind + " without --token");
        }
        if (!addr.isLoopbackAddress() && tlsCert == null) {
            // The token would cross the network in clear text.
            fail("refusing to bind non-loopback address " + bind + " without TLS (--tls-cert and --tls-key)");
        }
        if ((tlsCert == null) != (tlsKey == null)) {
            fail("--tls-cert and --tls-key go together");
        }
        if (maxRequest < 1024 || budgetBytes < 1024) {
            fail("--max-request-bytes and --memory-budget-bytes must be at least 1024");
        }
        // A request never needs more than the whole budget, and a frame length is an int.
        int max = (int) Math.min(Math.min(maxRequest, budgetBytes), Integer.MAX_VALUE - 64);
        Config cfg = new Config(token, List.copyOf(prefixes), max, new Budget(budgetBytes), restrict);
        ServerSocket ss;
        if (tlsCert != null) {
            try {
                ss = Tls.serverSocket(java.nio.file.Path.of(tlsCert), java.nio.file.Path.of(tlsKey));
            } catch (java.security.GeneralSecurityException | IOException e) {
                fail("TLS: " + e.getMessage());
                return;
            }
        } else {
            ss = new ServerSocket();
        }
        ss.setReuseAddress(true);
        ss.bind(new InetSocketAddress(addr, port), 128);
        if (exitOnStdinEof) {
            Thread t = new Thread(() -> {
                try {
                    InputStream in = System.in;
                    byte[] buf = new byte[256];
                    while (in.read(buf) >= 0) {
                        // discard
                    }
                } catch (IOException ignored) {
                    // treat as EOF
                }
                System.exit(0);
            }, "jdbcbridge-stdin");
            t.setDaemon(true);
            t.start();
        }
        System.out.println("LISTENING " + ss.getLocalPort());
        System.out.flush();
        while (true) {
            Socket s = ss.accept();
            Thread t = new Thread(new Session(cfg, s), "jdbcbridge-reader-" + s.getPort());
            t.setDaemon(true);
            t.start();
        }
    }

    private static String need(String[] args, int i, String flag) {
        if (i >= args.length) {
            fail(flag + " needs a value");
        }
        return args[i];
    }

    private static void fail(String msg) {
        System.err.println("jdbcbridge: " + msg);
        System.exit(2);
    }
}
