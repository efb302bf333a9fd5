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
 * java ... tidemark.bridge.Server --create-database jdbc:h2:file:DIR/NAME --user USER
 * </pre>
 *
 * <p>Prints exactly one line {@code LISTENING <port>} on stdout once it accepts connections. The
 * token may also come from the environment variable {@code TIDEMARK_JDBCBRIDGE_TOKEN}; it and
 * TLS are mandatory when binding a non-loopback address. The token is never logged.
 *
 * <p>{@code --create-database} is the admin path for file databases (see FileDatabases): it
 * creates the database and its user and exits; the passwords come from the environment
 * ({@code TIDEMARK_JDBCBRIDGE_ADMIN_PASSWORD}, {@code TIDEMARK_JDBCBRIDGE_USER_PASSWORD}).
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
                if (Policy.admits(p, url)) {
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
            return restrictSessions ? Policy.checkSettings(url, props) : null;
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

    /** The command line. */
    private static final class Args {
        int port;
        String bind = "127.0.0.1";
        String token = System.getenv("TIDEMARK_JDBCBRIDGE_TOKEN");
        final List<String> prefixes = new ArrayList<>();
        boolean exitOnStdinEof;
        long maxRequest = Protocol.DEFAULT_MAX_REQUEST;
        long budgetBytes = Runtime.getRuntime().maxMemory() / 4;
        boolean restrict = true;
        String tlsCert;
        String tlsKey;
        String createUrl;
        String createUser;

        static Args parse(String[] args) {
            Args r = new Args();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--port" -> r.port = Integer.parseInt(need(args, ++i, a));
                    case "--bind" -> r.bind = need(args, ++i, a);
                    case "--token" -> r.token = need(args, ++i, a);
                    case "--allow-url-prefix" -> r.prefixes.add(need(args, ++i, a));
                    case "--max-request-bytes" -> r.maxRequest = Long.parseLong(need(args, ++i, a));
                    case "--memory-budget-bytes" -> r.budgetBytes = Long.parseLong(need(args, ++i, a));
                    case "--tls-cert" -> r.tlsCert = need(args, ++i, a);
                    case "--tls-key" -> r.tlsKey = need(args, ++i, a);
                    case "--admin-sessions" -> r.restrict = false;
                    case "--create-database" -> r.createUrl = need(args, ++i, a);
                    case "--user" -> r.createUser = need(args, ++i, a);
                    case "--exit-on-stdin-eof" -> r.exitOnStdinEof = true;
                    default -> fail("unknown argument " + a);
                }
            }
            if (r.prefixes.isEmpty()) {
                r.prefixes.addAll(List.of(DEFAULT_PREFIXES));
            }
            return r;
        }

        /** Refuses (exits) a configuration that would expose more than it should. */
        void check(InetAddress addr) {
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
        }

        Config config() {
            // A request never needs more than the whole budget, and a frame length is an int.
            int max = (int) Math.min(Math.min(maxRequest, budgetBytes), Integer.MAX_VALUE - 64);
            return new Config(token, List.copyOf(prefixes), max, new Budget(budgetBytes), restrict);
        }

        ServerSocket socket() throws IOException {
            if (tlsCert == null) {
                return new ServerSocket();
            }
            try {
                return Tls.serverSocket(java.nio.file.Path.of(tlsCert), java.nio.file.Path.of(tlsKey));
            } catch (java.security.GeneralSecurityException | IOException e) {
                fail("TLS: " + e.getMessage());
                throw new IllegalStateException(e); // not reached
            }
        }
    }

    /** Starts the server; see the class comment for the arguments. */
    public static void main(String[] args) throws IOException {
        Args a = Args.parse(args);
        if (System.getProperty("hsqldb.method_class_names") == null) {
            System.setProperty("hsqldb.method_class_names", HSQLDB_METHOD_CLASSES);
        }
        // HSQLDB 2.6 lets an in-memory database's text tables read any absolute path unless
        // this is false (a file database's stay in its directory, which Policy refuses too).
        if (System.getProperty("textdb.allow_full_path") == null) {
            System.setProperty("textdb.allow_full_path", "false");
        }
        if (a.createUrl != null) {
            System.exit(FileDatabases.create(a.createUrl, a.createUser));
        }
        InetAddress addr = InetAddress.getByName(a.bind);
        a.check(addr);
        Config cfg = a.config();
        ServerSocket ss = a.socket();
        ss.setReuseAddress(true);
        ss.bind(new InetSocketAddress(addr, a.port), 128);
        if (a.exitOnStdinEof) {
            exitOnStdinEof();
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

    /** Exits when stdin closes: the parent process (StartServer) has gone. */
    private static void exitOnStdinEof() {
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
