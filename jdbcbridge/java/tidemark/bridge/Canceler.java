package tidemark.bridge;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Cancels running statements off the reader thread. Some drivers block in cancel():
 * HSQLDB's JDBCPreparedStatement.cancel() is synchronized on the statement that is executing, so
 * for HSQLDB the cancel request is sent to the session directly (what JDBCStatement.cancel does).
 *
 * <p>An HSQLDB session cancel aborts whatever statement the session runs at that moment, and
 * when the session is idle inside a transaction it leaves a pending abort that fails the next
 * statement with 40502. Session therefore delivers cancels only while the request they name
 * still runs (under its cancel lock) and calls {@link #clearPendingAbort} before moving on.
 */
final class Canceler {
    private Canceler() {}

    private static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "jdbcbridge-cancel");
        t.setDaemon(true);
        return t;
    });

    /** Runs task on a cancel thread. */
    static void run(Runnable task) {
        POOL.execute(task);
    }

    static boolean isHsqldb(Connection conn) {
        return conn != null && conn.getClass().getName().equals("org.hsqldb.jdbc.JDBCConnection");
    }

    /** Cancels st, which runs on conn, on the calling thread. */
    static void cancelNow(Connection conn, Statement st) {
        try {
            if (isHsqldb(conn)) {
                hsqldbCancel(conn);
            } else {
                st.cancel();
            }
        } catch (Exception | LinkageError ignored) {
            // the statement may already be done
        }
    }

    /**
     * Drops an abort HSQLDB may still hold for a statement that had already finished when the
     * cancel reached it (org.hsqldb.Session.abortAction, cleared by HSQLDB only when a
     * statement ends). Only in-process sessions have it; others are left alone.
     */
    static void clearPendingAbort(Connection conn) {
        if (!isHsqldb(conn)) {
            return;
        }
        try {
            Object session = sessionOf(conn);
            if (session != null && session.getClass().getName().equals("org.hsqldb.Session")) {
                Field f = session.getClass().getDeclaredField("abortAction");
                f.setAccessible(true);
                f.setBoolean(session, false);
            }
        } catch (Exception | LinkageError ignored) {
            // another HSQLDB version: nothing to clear
        }
    }

    static Object sessionOf(Connection conn) throws ReflectiveOperationException {
        Field f = conn.getClass().getDeclaredField("sessionProxy");
        f.setAccessible(true);
        return f.get(conn);
    }

    /** Cancels the statement conn's HSQLDB session runs (SessionInterface.cancel). */
    static void hsqldbCancel(Connection conn) throws Exception {
        Object session = sessionOf(conn);
        ClassLoader cl = conn.getClass().getClassLoader();
        Class<?> si = Class.forName("org.hsqldb.SessionInterface", true, cl);
        Class<?> result = Class.forName("org.hsqldb.result.Result", true, cl);
        int randomId = (Integer) si.getMethod("getRandomId").invoke(session);
        Method newCancel = result.getMethod("newCancelRequest", int.class, long.class, String.class);
        Object req = newCancel.invoke(null, randomId, -1L, "");
        si.getMethod("cancel", result).invoke(session, req);
    }
}
