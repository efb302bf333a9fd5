package tidemark.bridge;

import static tidemark.bridge.Protocol.*;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * One client connection: a reader thread (this) that decodes frames and handles CANCEL at once,
 * and a worker thread that runs every other request in order against one JDBC connection.
 */
final class Session implements Runnable {
    private static final byte[] POISON = new byte[0];

    private final Server.Config cfg;
    private final Socket sock;
    private final LinkedBlockingQueue<byte[]> queue = new LinkedBlockingQueue<>();
    private OutputStream out;
    private final Wire.Out o = new Wire.Out();

    private volatile boolean authenticated;
    private volatile int runningReq = -1;
    private volatile Statement runningStmt;
    private volatile int cancelReq = -1;

    /**
     * Orders cancels with the end of requests: a cancel is delivered to the driver only while
     * the request it names is still running, and the worker does not move on to the next
     * request while a cancel is being delivered. Without it a cancel that lost the race with
     * its statement's end aborted the connection's next statement (HSQLDB cancels the session's
     * current statement, whichever it is: 40502 on an unrelated read).
     */
    private final Object cancelLock = new Object();
    private boolean cancelDelivered; // guarded by cancelLock
    /** The request whose statement StaleWaits cancelled (its 40502 is reported as such), or -1. */
    private volatile int staleAbortedReq = -1;
    // The stale wait seen on the previous check (StaleWaits' thread only): request and statement.
    private int staleSeenReq = -1;
    private long staleSeenScn = StaleWaits.NONE;

    private volatile Connection conn;
    /** Whether SQL is checked for HSQLDB text tables (a restricted HSQLDB session). */
    private boolean guardText;
    private int defaultIsolation;
    private int nextId = 1;
    private final Map<Integer, Prepared> stmts = new HashMap<>();
    private final Map<Integer, Cursor> cursors = new HashMap<>();
    private final Map<Integer, Values.Lob> lobs = new HashMap<>();

    /** A client-visible prepared statement. */
    private static final class Prepared {
        final PreparedStatement ps;
        final Values.ParamTypes types;
        final boolean keys;

        Prepared(PreparedStatement ps, boolean keys) {
            this.ps = ps;
            this.types = new Values.ParamTypes(ps);
            this.keys = keys;
        }
    }

    /** An open result set being fetched in batches. */
    private static final class Cursor {
        final ResultSet rs;
        final Statement owned; // closed with the cursor when the statement was one-shot
        final int[] kinds;
        final java.util.List<Integer> lobIds = new java.util.ArrayList<>();

        Cursor(ResultSet rs, Statement owned, int[] kinds) {
            this.rs = rs;
            this.owned = owned;
            this.kinds = kinds;
        }
    }

    Session(Server.Config cfg, Socket sock) {
        this.cfg = cfg;
        this.sock = sock;
    }

    @Override
    public void run() {
        Thread worker = new Thread(this::work, "jdbcbridge-worker-" + sock.getPort());
        worker.setDaemon(true);
        try {
            sock.setTcpNoDelay(true);
            out = new BufferedOutputStream(sock.getOutputStream(), 64 * 1024);
            DataInputStream in = new DataInputStream(new BufferedInputStream(sock.getInputStream(), 64 * 1024));
            worker.start();
            while (true) {
                byte[] f = Memory.readFrame(in, cfg, authenticated);
                if (f == null) {
                    break;
                }
                if ((f[4] & 0xff) == OP_CANCEL) {
                    cfg.budget.release(f.length);
                    handleCancel(new Wire.In(f, 5).i32());
                    continue;
                }
                queue.put(f);
                if ((f[4] & 0xff) == OP_HELLO) {
                    // The worker decides whether the handshake succeeded; wait so the frame
                    // limit applies correctly to the next frame.
                    synchronized (this) {
                        while (!authenticated && !sock.isClosed()) {
                            wait(100);
                        }
                    }
                }
            }
        } catch (IOException | InterruptedException e) {
            // connection lost; fall through to cleanup
        } finally {
            int r = runningReq;
            if (r >= 0) {
                handleCancel(r);
            }
            queue.offer(POISON);
        }
    }

    private void handleCancel(int target) {
        cancelReq = target;
        if (runningReq != target || runningStmt == null) {
            return;
        }
        Canceler.run(() -> {
            synchronized (cancelLock) {
                Statement s = runningStmt;
                if (runningReq != target || s == null) {
                    return; // the request ended meanwhile: never touch the next one
                }
                cancelDelivered = true;
                Canceler.cancelNow(conn, s);
            }
        });
    }

    /** Marks the running statement as finished; see cancelLock. */
    private void statementDone() {
        synchronized (cancelLock) {
            runningStmt = null;
            if (cancelDelivered) {
                cancelDelivered = false;
                Canceler.clearPendingAbort(conn);
            }
        }
    }

    private void startStatement(Statement st) {
        synchronized (cancelLock) {
            runningStmt = st;
        }
    }

    private void work() {
        try {
            while (true) {
                byte[] f = queue.take();
                if (f == POISON) {
                    return;
                }
                final int flen = f.length;
                Wire.In in = new Wire.In(f, 0);
                f = null; // the decoder holds the frame; an OutOfMemoryError handler drops both
                int req = in.i32();
                int op = in.u8();
                o.reset();
                o.limit = cfg.maxRequest;
                o.i32(req).u8(STATUS_OK);
                boolean close = false;
                try {
                    runningReq = req;
                    close = handle(op, in);
                } catch (SQLException e) {
                    if (Memory.isOutOfMemory(e)) {
                        outOfMemory(req, e.getMessage());
                    } else if (staleAbortedReq == req && "40502".equals(e.getSQLState())) {
                        // Not the client's cancel: the watchdog ended a wait nothing else would.
                        error(req, e.getSQLState(), e.getErrorCode(), StaleWaits.MESSAGE_PREFIX
                                + " (the transaction it waited for had already ended; retry): " + e.getMessage());
                    } else {
                        error(req, e.getSQLState(), e.getErrorCode(), e.getMessage());
                    }
                } catch (BridgeException e) {
                    error(req, e.state, 0, e.getMessage());
                } catch (OutOfMemoryError e) {
                    in = null;
                    outOfMemory(req, String.valueOf(e));
                } catch (RuntimeException | IOException e) {
                    error(req, STATE_GENERAL, 0, String.valueOf(e));
                } finally {
                    statementDone();
                    staleAbortedReq = -1;
                    runningReq = -1;
                    cfg.budget.release(flen);
                }
                o.writeTo(out);
                if (close || !authenticated) {
                    return;
                }
            }
        } catch (IOException | InterruptedException e) {
            // client gone
        } finally {
            cleanup();
        }
    }

    /**
     * Answers a request that ran the JVM out of memory: the session's cursors, large objects
     * and transaction are released (what the transaction did is not trustworthy after an
     * allocation failed halfway), and the client gets HY001; the server and its other
     * sessions keep running.
     */
    private void outOfMemory(int req, String cause) {
        o.reset();
        for (Values.Lob l : lobs.values()) {
            l.free();
        }
        lobs.clear();
        closeCursors();
        String rolled = "";
        try {
            if (conn != null && !conn.getAutoCommit()) {
                conn.rollback();
                rolled = "; its transaction was rolled back";
            }
        } catch (SQLException | RuntimeException | OutOfMemoryError ignored) {
            // best effort
        }
        Runtime rt = Runtime.getRuntime();
        error(req, BridgeException.OUT_OF_MEMORY, 0, "the bridge ran out of memory (max heap " + (rt.maxMemory() >> 20)
                + " MiB) while running this request" + rolled + ": " + cause);
    }

    private void error(int req, String state, int code, String msg) {
        o.reset();
        o.i32(req).u8(STATUS_ERROR).str(state == null ? STATE_GENERAL : state).i32(code).str(msg == null ? "" : msg);
    }

    /**
     * Called by StaleWaits' thread: cancels the running statement when its HSQLDB session has
     * been seen in a stale lock wait (see StaleWaits) on this check and the previous one.
     */
    void checkStaleWait() throws ReflectiveOperationException {
        int req = runningReq;
        Connection c = conn;
        if (req < 0 || runningStmt == null || c == null) {
            staleSeenReq = -1;
            return;
        }
        long scn = StaleWaits.staleStatement(c);
        if (scn == StaleWaits.NONE) {
            staleSeenReq = -1;
            return;
        }
        if (staleSeenReq != req || staleSeenScn != scn) {
            staleSeenReq = req;
            staleSeenScn = scn;
            return; // first sighting: look again next time
        }
        staleSeenReq = -1;
        synchronized (cancelLock) {
            if (runningReq != req || runningStmt == null || conn != c) {
                return; // the request ended meanwhile: never touch the next one
            }
            staleAbortedReq = req; // before the statement can fail (it then waits for cancelLock anyway)
            if (!StaleWaits.cancelIfStale(c, scn)) {
                staleAbortedReq = -1;
                return;
            }
            cancelDelivered = true;
        }
        System.err.println("jdbcbridge: HSQLDB statement of connection from port " + sock.getPort()
                + " waited for a transaction that had already ended (a lost wake-up); aborted it so the client retries");
    }

    private void cleanup() {
        StaleWaits.unregister(this);
        for (byte[] f; (f = queue.poll()) != null; ) {
            cfg.budget.release(f.length);
        }
        for (Values.Lob l : lobs.values()) {
            l.free();
        }
        lobs.clear();
        for (Cursor c : cursors.values()) {
            closeQuietly(c);
        }
        cursors.clear();
        for (Prepared p : stmts.values()) {
            try {
                p.ps.close();
            } catch (SQLException | RuntimeException ignored) {
                // best effort
            }
        }
        stmts.clear();
        if (conn != null) {
            try {
                if (!conn.getAutoCommit()) {
                    conn.rollback();
                }
            } catch (SQLException | RuntimeException ignored) {
                // best effort
            }
            try {
                conn.close();
            } catch (SQLException | RuntimeException ignored) {
                // best effort
            }
            conn = null;
        }
        try {
            sock.close();
        } catch (IOException ignored) {
            // best effort
        }
        synchronized (this) {
            notifyAll();
        }
    }

    private void closeQuietly(Cursor c) {
        for (Integer id : c.lobIds) {
            Values.Lob l = lobs.remove(id);
            if (l != null) {
                l.free();
            }
        }
        try {
            c.rs.close();
        } catch (SQLException | RuntimeException ignored) {
            // best effort
        }
        if (c.owned != null) {
            try {
                c.owned.close();
            } catch (SQLException | RuntimeException ignored) {
                // best effort
            }
        }
    }

    /** Handles one request; returns true when the session must end. */
    private boolean handle(int op, Wire.In in) throws SQLException, IOException {
        if (op == OP_TOO_LARGE) {
            return handleLarge(in);
        }
        if (!authenticated && op != OP_HELLO) {
            throw new SQLException("handshake required", STATE_PROTOCOL);
        }
        if (op > OP_OPEN && op != OP_CLOSE && conn == null) {
            throw new SQLException("connection not open", STATE_PROTOCOL);
        }
        switch (op) {
            case OP_HELLO:
                hello(in);
                return false;
            case OP_OPEN:
                open(in);
                return false;
            case OP_PREPARE: {
                String sql = in.str();
                if (guardText) {
                    Policy.checkHsqldbSql(sql);
                }
                boolean keys = wantsKeys(sql);
                PreparedStatement ps = keys ? conn.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS) : conn.prepareStatement(sql);
                int id = nextId++;
                stmts.put(id, new Prepared(ps, keys));
                int pc = -1;
                try {
                    pc = ps.getParameterMetaData().getParameterCount();
                } catch (SQLException | RuntimeException ignored) {
                    // unknown
                }
                o.i32(id).i32(pc);
                return false;
            }
            case OP_EXECUTE:
                execute(in);
                return false;
            case OP_FETCH: {
                int id = in.i32();
                int max = in.i32();
                Cursor c = cursors.get(id);
                if (c == null) {
                    throw new SQLException("unknown cursor " + id, STATE_PROTOCOL);
                }
                batch(id, c, max);
                return false;
            }
            case OP_CLOSE_CURSOR: {
                Cursor c = cursors.remove(in.i32());
                if (c != null) {
                    closeQuietly(c);
                }
                return false;
            }
            case OP_CLOSE_STMT: {
                Prepared p = stmts.remove(in.i32());
                if (p != null) {
                    p.ps.close();
                }
                return false;
            }
            case OP_BEGIN: {
                int iso = in.i32();
                boolean ro = in.u8() != 0;
                if (!conn.getAutoCommit()) {
                    throw new SQLException("transaction already active", "25001");
                }
                if (iso >= 0 && iso != conn.getTransactionIsolation()) {
                    conn.setTransactionIsolation(iso);
                }
                if (ro) {
                    conn.setReadOnly(true);
                }
                conn.setAutoCommit(false);
                return false;
            }
            case OP_COMMIT:
            case OP_ROLLBACK:
                endTx(op == OP_COMMIT);
                return false;
            case OP_PING:
                if (!conn.isValid(5)) {
                    throw new SQLException("connection is not valid", "08003");
                }
                return false;
            case OP_RESET:
                closeCursors();
                if (!conn.getAutoCommit()) {
                    conn.rollback();
                }
                restoreDefaults();
                return false;
            case OP_LOB_READ:
                lobRead(in.i32(), in.i32());
                return false;
            case OP_LOB_FREE: {
                Values.Lob l = lobs.remove(in.i32());
                if (l != null) {
                    l.free();
                }
                return false;
            }
            case OP_CLOSE:
                return true;
            case OP_TEST_HOOK:
                if (!StaleWaits.testHooks()) {
                    throw new SQLException("unknown op " + op, STATE_PROTOCOL);
                }
                testHook(in.str());
                return false;
            default:
                throw new SQLException("unknown op " + op, STATE_PROTOCOL);
        }
    }

    /** Test-only requests (see Protocol.OP_TEST_HOOK); answers an i32. */
    private void testHook(String what) throws SQLException {
        try {
            switch (what) {
                case "waiters" -> o.i32(StaleWaits.testWaiters(conn));
                case "rollback-losing-wakeups" -> o.i32(StaleWaits.testRollbackLosingWakeups(conn, () -> {
                    try {
                        endTx(false);
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                }));
                default -> throw new SQLException("unknown test hook " + what, STATE_PROTOCOL);
            }
        } catch (ReflectiveOperationException e) {
            throw new SQLException("test hook " + what + ": " + e, STATE_GENERAL);
        }
    }

    private boolean handleLarge(Wire.In in) throws IOException {
        throw new BridgeException(BridgeException.TOO_LARGE, "request of " + in.i64()
                + " bytes is larger than the bridge's per-request limit of " + cfg.maxRequest + " bytes (--max-request-bytes)");
    }

    private void closeCursors() {
        for (Cursor c : cursors.values()) {
            closeQuietly(c);
        }
        cursors.clear();
    }

    private void endTx(boolean commit) throws SQLException {
        if (conn.getAutoCommit()) {
            restoreDefaults();
            return; // nothing to end; database/sql may roll back after a failed commit
        }
        try {
            if (commit) {
                conn.commit();
            } else {
                conn.rollback();
            }
        } catch (SQLException e) {
            try {
                conn.rollback();
            } catch (SQLException ignored) {
                // keep the original error
            }
            restoreDefaults();
            throw e;
        }
        restoreDefaults();
    }

    private void restoreDefaults() throws SQLException {
        if (!conn.getAutoCommit()) {
            conn.setAutoCommit(true);
        }
        if (conn.isReadOnly()) {
            conn.setReadOnly(false);
        }
        if (conn.getTransactionIsolation() != defaultIsolation) {
            conn.setTransactionIsolation(defaultIsolation);
        }
    }

    private void execute(Wire.In in) throws SQLException, IOException {
        int sid = in.i32();
        int req = runningReq;
        String sql = sid == 0 ? in.str() : null;
        if (sql != null && guardText) {
            Policy.checkHsqldbSql(sql);
        }
        int flags = in.u8();
        int fetch = in.i32();
        int n = in.i32();
        Statement st;
        PreparedStatement ps = null;
        Values.ParamTypes types = null;
        boolean keys;
        boolean owned = sid == 0;
        if (owned) {
            keys = wantsKeys(sql);
            if (n == 0) {
                st = conn.createStatement(); // cheaper than a one-shot prepare (HSQLDB)
            } else {
                ps = keys ? conn.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS) : conn.prepareStatement(sql);
                types = new Values.ParamTypes(ps);
                st = ps;
            }
        } else {
            Prepared p = stmts.get(sid);
            if (p == null) {
                throw new SQLException("unknown statement " + sid, STATE_PROTOCOL);
            }
            ps = p.ps;
            types = p.types;
            keys = p.keys;
            st = ps;
            ps.clearParameters();
        }
        boolean keep = false;
        try {
            for (int i = 1; i <= n; i++) {
                Values.bind(in, ps, i, types);
            }
            keys = keys && (flags & FLAG_GENERATED_KEYS) != 0;
            startStatement(st);
            if (cancelReq == req) {
                throw new SQLException("statement canceled", STATE_CANCELED);
            }
            boolean isRs;
            if (ps != null) {
                isRs = ps.execute();
            } else {
                isRs = keys ? st.execute(sql, Statement.RETURN_GENERATED_KEYS) : st.execute(sql);
            }
            statementDone();
            if (!isRs) {
                long count = st.getLargeUpdateCount();
                o.u8(RESULT_UPDATE).i64(count);
                if (keys) {
                    writeKeys(st);
                } else {
                    o.u8(0);
                }
                return;
            }
            ResultSet rs = st.getResultSet();
            int[] kinds = Values.kinds(rs.getMetaData());
            Cursor c = new Cursor(rs, owned ? st : null, kinds);
            int id = nextId++;
            o.u8(RESULT_ROWS).i32(id);
            Values.writeColumns(o, rs.getMetaData(), kinds);
            try {
                keep = batch(id, c, fetch);
            } catch (SQLException | RuntimeException e) {
                closeQuietly(c); // a cancel or a failed row: the cursor goes with the request
                owned = false;
                throw e;
            }
            if (!keep) {
                closeQuietly(c);
                owned = false; // closed with the cursor
            } else {
                cursors.put(id, c);
            }
        } finally {
            statementDone();
            if (owned && !keep) {
                try {
                    st.close();
                } catch (SQLException | RuntimeException ignored) {
                    // best effort
                }
            }
        }
    }

    private void writeKeys(Statement st) throws SQLException {
        try (ResultSet rs = st.getGeneratedKeys()) {
            if (rs == null) {
                o.u8(0);
                return;
            }
            int[] kinds = Values.kinds(rs.getMetaData());
            o.u8(1).i32(kinds.length);
            int mark = o.len;
            o.i32(0);
            int rows = 0;
            while (rs.next() && rows < 100000) {
                for (int i = 0; i < kinds.length; i++) {
                    int kind = kinds[i] == T_CLOB || kinds[i] == T_BLOB ? T_STRING : kinds[i];
                    Values.writeValue(o, rs, i + 1, kind, null);
                }
                rows++;
            }
            int save = o.len;
            o.len = mark;
            o.i32(rows);
            o.len = save;
        }
    }

    /**
     * Writes a row batch ({@code i32 rows, values..., u8 done}); returns true while more rows may
     * follow (the cursor must stay open).
     */
    private boolean batch(int id, Cursor c, int max) throws SQLException {
        if (max <= 0) {
            max = 256;
        }
        int mark = o.len;
        o.i32(0);
        int rows = 0;
        boolean done = false;
        int start = o.size();
        int req = runningReq;
        while (rows < max && o.size() - start < BATCH_BYTES) {
            if (cancelReq == req) {
                // Rows nobody wants: answer the cancel now instead of after the whole batch.
                throw new SQLException("statement canceled", STATE_CANCELED);
            }
            if (!c.rs.next()) {
                done = true;
                break;
            }
            boolean lob = false;
            for (int i = 0; i < c.kinds.length; i++) {
                final Cursor cur = c;
                lob |= Values.writeValue(o, c.rs, i + 1, c.kinds[i], l -> {
                    int lid = nextId++;
                    lobs.put(lid, l);
                    cur.lobIds.add(lid);
                    return lid;
                });
            }
            rows++;
            if (lob) {
                break; // keep the result set on this row until its LOBs are read
            }
        }
        int save = o.len;
        o.len = mark;
        o.i32(rows);
        o.len = save;
        o.u8(done ? 1 : 0);
        if (done && cursors.remove(id) != null) {
            closeQuietly(c);
        }
        return !done;
    }

    private void lobRead(int id, int max) throws SQLException {
        Values.Lob l = lobs.get(id);
        if (l == null) {
            throw new SQLException("unknown large object " + id, STATE_PROTOCOL);
        }
        if (max <= 0 || max > 4 * 1024 * 1024) {
            max = 1024 * 1024;
        }
        long remaining = l.length - (l.pos - 1);
        int n = (int) Math.min(remaining, max);
        boolean eof;
        if (l.clob != null) {
            String s = n == 0 ? "" : l.clob.getSubString(l.pos, n);
            if (s.length() > 1 && s.length() == n && n < remaining && Character.isHighSurrogate(s.charAt(n - 1))) {
                s = s.substring(0, n - 1); // never split a surrogate pair across chunks
            }
            l.pos += s.length();
            eof = l.pos - 1 >= l.length || s.isEmpty();
            o.str(s).u8(eof ? 1 : 0);
        } else {
            byte[] b = n == 0 ? new byte[0] : l.blob.getBytes(l.pos, n);
            l.pos += b.length;
            eof = l.pos - 1 >= l.length || b.length == 0;
            o.bytes(b).u8(eof ? 1 : 0);
        }
        if (eof) {
            lobs.remove(id);
            l.free();
        }
    }

    private static boolean wantsKeys(String sql) {
        String s = sql.stripLeading();
        return s.regionMatches(true, 0, "INSERT", 0, 6) || s.regionMatches(true, 0, "MERGE", 0, 5);
    }

    private void hello(Wire.In in) throws SQLException, IOException {
        int version = in.u16();
        String token = in.str();
        if (version != VERSION) {
            throw new SQLException("unsupported protocol version " + version + " (server speaks " + VERSION + ")", STATE_PROTOCOL);
        }
        if (cfg.token != null && !cfg.token.isEmpty()) {
            byte[] want = cfg.token.getBytes(StandardCharsets.UTF_8);
            byte[] got = token == null ? new byte[0] : token.getBytes(StandardCharsets.UTF_8);
            if (!MessageDigest.isEqual(want, got)) {
                throw new SQLException("invalid bridge token", STATE_AUTH);
            }
        }
        authenticated = true;
        synchronized (this) {
            notifyAll();
        }
        o.u16(VERSION).str("tidemark-jdbcbridge").i32(cfg.maxRequest);
    }

    private void open(Wire.In in) throws SQLException, IOException {
        if (conn != null) {
            throw new SQLException("connection already open", STATE_PROTOCOL);
        }
        String url = in.str();
        String user = in.str();
        String password = in.str();
        int n = in.i32();
        Properties props = new Properties();
        for (int i = 0; i < n; i++) {
            String k = in.str();
            String v = in.str();
            props.setProperty(k, v);
        }
        String why = cfg.checkUrl(url, props);
        if (why != null) {
            throw new SQLException(why, STATE_REJECTED);
        }
        Memory.hsqldbDefaults(url, props);
        if (user != null) {
            props.setProperty("user", user);
        }
        if (password != null) {
            props.setProperty("password", password);
        }
        if (!cfg.restrictSessions) {
            conn = DriverManager.getConnection(url, props);
        } else if (Restrict.applies(url)) {
            conn = Restrict.open(url, props);
        } else if (FileDatabases.applies(url)) {
            conn = FileDatabases.open(url, props);
        } else {
            conn = DriverManager.getConnection(url, props);
        }
        guardText = cfg.restrictSessions && Policy.isHsqldb(url);
        conn.setAutoCommit(true);
        defaultIsolation = conn.getTransactionIsolation();
        if (Canceler.isHsqldb(conn)) {
            StaleWaits.register(this);
        }
        String product = conn.getMetaData().getDatabaseProductName();
        o.str(product).str(conn.getMetaData().getDatabaseProductVersion());
    }
}
