package tidemark.bridge;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

/**
 * Watchdog for HSQLDB statements stuck on a lock wait that nothing will end (HSQLDB 2.7, MVCC).
 *
 * <p>In TransactionManagerMVCC.addDeleteAction a statement S that met the uncommitted change of
 * transaction H registers as a waiter of H (H.waitingSessions, S.waitedSessions, S.latch) under
 * the transaction manager's write lock, but it found H's change earlier, without that lock. When
 * H rolls back in between, H's end has already counted down its waiters, and S then waits on the
 * finished H: only H's next commit or rollback, or a cancel of S, releases it. HSQLDB has no lock
 * timeout and a query timeout does not cover that wait, so an idle H hangs S for good.
 *
 * <p>Every {@link #PERIOD_MS} ms one daemon thread looks at the bridge sessions that run a
 * request: a session whose HSQLDB session waits (latch count above zero) only for sessions that
 * are idle and in no transaction (or for none) is stale; seen so on two checks in a row, for the
 * same statement, its statement is cancelled through the bridge's ordinary cancel path (see
 * {@link Session#checkStaleWait}), which fails it with 40502, reported with
 * {@link #MESSAGE_PREFIX} so the client can tell it from its own cancel and retry. The state is
 * read, and the cancel delivered, under the transaction manager's write lock, under which HSQLDB
 * changes it, so a wait that ended meanwhile is never cancelled.
 *
 * <p>It works by reflection on HSQLDB's internals; when they do not have the expected shape
 * (another HSQLDB version) it disables itself without a word. {@code
 * -Dtidemark.bridge.staleWaitWatchdog=false} disables it too. Only databases in MVCC mode
 * are watched.
 *
 * <p>Tests build the stale state with the test-only request {@link Protocol#OP_TEST_HOOK}
 * ({@link #testRollbackLosingWakeups}), accepted only under {@code
 * -Dtidemark.bridge.testHooks=true}.
 */
final class StaleWaits {
    private StaleWaits() {}

    /** Milliseconds between checks; a stale wait is cancelled after two, so within 2 periods. */
    static final long PERIOD_MS = 500;
    /** How long a check waits for the transaction manager's lock before skipping the session. */
    private static final long LOCK_WAIT_MS = 100;
    /** Starts the message of an error caused by the watchdog's cancel (see the HSQLDB dialect's rules). */
    static final String MESSAGE_PREFIX = "jdbcbridge: stale lock wait aborted";
    /** Set to "true" to accept the test-only request {@link Protocol#OP_TEST_HOOK}. */
    static final String TEST_HOOKS_PROPERTY = "tidemark.bridge.testHooks";

    private static final Set<Session> SESSIONS = ConcurrentHashMap.newKeySet();
    private static volatile boolean disabled = "false".equals(System.getProperty("tidemark.bridge.staleWaitWatchdog"));
    private static ScheduledExecutorService timer; // guarded by StaleWaits.class
    private static volatile Shape shape; // resolved on first use

    /** Watches s (a session on an in-process HSQLDB database) until {@link #unregister}. */
    static void register(Session s) {
        if (disabled) {
            return;
        }
        SESSIONS.add(s);
        synchronized (StaleWaits.class) {
            if (timer == null) {
                timer = Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "jdbcbridge-stale-waits");
                    t.setDaemon(true);
                    return t;
                });
                timer.scheduleWithFixedDelay(StaleWaits::tick, PERIOD_MS, PERIOD_MS, TimeUnit.MILLISECONDS);
            }
        }
    }

    static void unregister(Session s) {
        SESSIONS.remove(s);
    }

    private static void tick() {
        for (Session s : SESSIONS) {
            if (disabled) {
                return;
            }
            try {
                s.checkStaleWait();
            } catch (ReflectiveOperationException | ClassCastException | LinkageError | SecurityException
                    | java.lang.reflect.InaccessibleObjectException e) {
                disable(); // another HSQLDB version
            } catch (RuntimeException e) {
                // the session or its connection went away meanwhile
            }
        }
    }

    private static void disable() {
        disabled = true;
        SESSIONS.clear();
    }

    /** The HSQLDB internals the watchdog reads (HSQLDB 2.7.1 field names). */
    private static final class Shape {
        final Field latch;            // Session.latch: CountUpDownLatch
        final Field waitedSessions;   // Session.waitedSessions: OrderedHashSet of the sessions it waits for
        final Field waitingSessions;  // Session.waitingSessions: the sessions waiting for it
        final Field isTransaction;    // Session.isTransaction
        final Field statementStart;   // Session.statementStartSCN
        final Field sessionContext;   // Session.sessionContext
        final Field currentStatement; // SessionContext.currentStatement
        final Field database;         // Session.database
        final Field txManager;        // Database.txManager
        final Method getCount;        // CountUpDownLatch.getCount()
        final Method size;            // OrderedHashSet.size()
        final Method get;             // OrderedHashSet.get(int)
        final Method clear;           // OrderedHashSet.clear()
        final Method add;             // OrderedHashSet.add(Object)
        final Field sessionProxy;     // JDBCConnection.sessionProxy
        volatile Field writeLock;     // TransactionManagerCommon.writeLock, found on first use

        Shape(Class<?> connection, Class<?> session) throws ReflectiveOperationException {
            sessionProxy = field(connection, "sessionProxy");
            latch = field(session, "latch");
            waitedSessions = field(session, "waitedSessions");
            waitingSessions = field(session, "waitingSessions");
            isTransaction = field(session, "isTransaction");
            statementStart = field(session, "statementStartSCN");
            sessionContext = field(session, "sessionContext");
            currentStatement = field(sessionContext.getType(), "currentStatement");
            database = field(session, "database");
            txManager = field(database.getType(), "txManager");
            getCount = method(latch.getType(), "getCount");
            size = method(waitedSessions.getType(), "size");
            get = method(waitedSessions.getType(), "get", int.class);
            clear = method(waitedSessions.getType(), "clear");
            add = method(waitedSessions.getType(), "add", Object.class);
            if (isTransaction.getType() != boolean.class
                    || statementStart.getType() != long.class || getCount.getReturnType() != int.class
                    || size.getReturnType() != int.class || waitingSessions.getType() != waitedSessions.getType()) {
                throw new NoSuchFieldException("unexpected HSQLDB session shape");
            }
        }

        int count(Object hs) throws ReflectiveOperationException {
            return (Integer) getCount.invoke(latch.get(hs));
        }

        List<Object> sessions(Field set, Object hs) throws ReflectiveOperationException {
            Object s = set.get(hs);
            int n = (Integer) size.invoke(s);
            List<Object> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(get.invoke(s, i));
            }
            return out;
        }

        /** The transaction manager's write lock, when the database runs in MVCC mode. */
        Lock mvccLock(Object hs) throws ReflectiveOperationException {
            Object tm = txManager.get(database.get(hs));
            if (tm == null || !tm.getClass().getName().equals("org.hsqldb.TransactionManagerMVCC")) {
                return null; // LOCKS and MVLOCKS modes: not what this was written against
            }
            Field f = writeLock;
            if (f == null) {
                f = field(tm.getClass(), "writeLock"); // TransactionManagerCommon.writeLock
                writeLock = f;
            }
            return (Lock) f.get(tm);
        }

        /** Whether the in-process session hs is in a stale wait; call under the write lock. */
        boolean stale(Object hs) throws ReflectiveOperationException {
            if (count(hs) <= 0) {
                return false;
            }
            for (Object h : sessions(waitedSessions, hs)) {
                // A holder that still runs a statement or waits itself may yet end and count
                // down (a catalog-locking statement waits so before its transaction starts).
                if (isTransaction.getBoolean(h) || count(h) > 0
                        || currentStatement.get(sessionContext.get(h)) != null) {
                    return false;
                }
            }
            return true;
        }

        private static Field field(Class<?> c, String name) throws NoSuchFieldException {
            for (Class<?> k = c; k != null; k = k.getSuperclass()) {
                try {
                    Field f = k.getDeclaredField(name);
                    f.setAccessible(true);
                    return f;
                } catch (NoSuchFieldException ignored) {
                    // look in the superclass
                }
            }
            throw new NoSuchFieldException(c.getName() + "." + name);
        }

        private static Method method(Class<?> c, String name, Class<?>... params) throws NoSuchMethodException {
            Method m = c.getMethod(name, params);
            m.setAccessible(true);
            return m;
        }
    }

    /**
     * The in-process org.hsqldb.Session behind conn, or null (not HSQLDB, or a network session).
     * Resolves the shape on first use.
     */
    private static Object hsqldbSession(Connection conn) throws ReflectiveOperationException {
        if (!Canceler.isHsqldb(conn)) {
            return null;
        }
        Shape s = shape;
        Object hs = s != null ? s.sessionProxy.get(conn) : Canceler.sessionOf(conn);
        if (hs == null || !hs.getClass().getName().equals("org.hsqldb.Session")) {
            return null;
        }
        if (s == null) {
            shape = new Shape(conn.getClass(), hs.getClass());
        }
        return hs;
    }

    /** No stale wait: see {@link #staleStatement}. */
    static final long NONE = Long.MIN_VALUE;

    /**
     * Returns the statement start number (Session.statementStartSCN) of the statement conn's
     * HSQLDB session runs while it is in a stale wait, else {@link #NONE}.
     */
    static long staleStatement(Connection conn) throws ReflectiveOperationException {
        Object hs = hsqldbSession(conn);
        if (hs == null) {
            return NONE;
        }
        Shape s = shape;
        if (s.count(hs) <= 0) {
            return NONE; // the common case, without the lock
        }
        Lock lock = s.mvccLock(hs);
        if (lock == null || !tryLock(lock)) {
            return NONE;
        }
        try {
            return s.stale(hs) ? s.statementStart.getLong(hs) : NONE;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Cancels the statement of conn's HSQLDB session if it is still in the stale wait of
     * statement scn; returns whether it did. The caller holds the bridge session's cancel lock.
     */
    static boolean cancelIfStale(Connection conn, long scn) throws ReflectiveOperationException {
        Object hs = hsqldbSession(conn);
        if (hs == null) {
            return false;
        }
        Shape s = shape;
        Lock lock = s.mvccLock(hs);
        if (lock == null || !tryLock(lock)) {
            return false;
        }
        try {
            if (!s.stale(hs) || s.statementStart.getLong(hs) != scn) {
                return false;
            }
            // Session.cancel takes the same (reentrant) lock: the wait cannot end in between.
            try {
                Canceler.hsqldbCancel(conn);
            } catch (Exception e) {
                return false; // the ordinary cancel path failed; nothing more to do here
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    private static boolean tryLock(Lock lock) {
        try {
            return lock.tryLock(LOCK_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Whether the test-only request is accepted (never in production: a system property). */
    static boolean testHooks() {
        return "true".equals(System.getProperty(TEST_HOOKS_PROPERTY));
    }

    /**
     * Test-only: the number of sessions waiting for conn's HSQLDB session (its waitingSessions).
     */
    static int testWaiters(Connection conn) throws ReflectiveOperationException {
        Object hs = hsqldbSession(conn);
        Shape s = shape;
        Lock lock = s.mvccLock(hs);
        lock.lock();
        try {
            return s.sessions(s.waitingSessions, hs).size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Test-only: ends conn's transaction by rollback as HSQLDB's race does, leaving the sessions
     * that wait for it waiting: they are taken off its waitingSessions before the rollback (so it
     * counts none down) and put back after it, the state a waiter that registered on the finished
     * transaction leaves. Returns the number of such waiters.
     */
    static int testRollbackLosingWakeups(Connection conn, Runnable rollback) throws ReflectiveOperationException {
        Object hs = hsqldbSession(conn);
        Shape s = shape;
        Lock lock = s.mvccLock(hs);
        List<Object> waiters;
        lock.lock();
        try {
            waiters = s.sessions(s.waitingSessions, hs);
            s.clear.invoke(s.waitingSessions.get(hs));
        } finally {
            lock.unlock();
        }
        rollback.run();
        lock.lock();
        try {
            Object set = s.waitingSessions.get(hs);
            for (Object w : waiters) {
                s.add.invoke(set, w);
            }
        } finally {
            lock.unlock();
        }
        return waiters.size();
    }
}
