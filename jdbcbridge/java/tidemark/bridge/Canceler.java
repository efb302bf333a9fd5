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
 */
final class Canceler {
    private Canceler() {}

    private static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "jdbcbridge-cancel");
        t.setDaemon(true);
        return t;
    });

    /** Asynchronously cancels st, which runs on conn. */
    static void cancel(Connection conn, Statement st) {
        POOL.execute(() -> {
            try {
                if (conn != null && conn.getClass().getName().equals("org.hsqldb.jdbc.JDBCConnection")) {
                    hsqldbCancel(conn);
                } else {
                    st.cancel();
                }
            } catch (Exception | LinkageError ignored) {
                // the statement may already be done
            }
        });
    }

    private static void hsqldbCancel(Connection conn) throws Exception {
        Field f = conn.getClass().getDeclaredField("sessionProxy");
        f.setAccessible(true);
        Object session = f.get(conn);
        ClassLoader cl = conn.getClass().getClassLoader();
        Class<?> si = Class.forName("org.hsqldb.SessionInterface", true, cl);
        Class<?> result = Class.forName("org.hsqldb.result.Result", true, cl);
        int randomId = (Integer) si.getMethod("getRandomId").invoke(session);
        Method newCancel = result.getMethod("newCancelRequest", int.class, long.class, String.class);
        Object req = newCancel.invoke(null, randomId, -1L, "");
        si.getMethod("cancel", result).invoke(session, req);
    }
}
