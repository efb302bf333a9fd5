package tidemark.bridge;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Properties;

/**
 * File databases: a client never creates one and never administers one. The bridge opens a
 * client's file URL only when the database exists (IFEXISTS), refuses a session whose user
 * has admin rights there, and makes the session's schema the one named like the user when it
 * exists. A file database comes to exist only through the admin path ({@code --create-database
 * URL --user NAME}), which creates it with the bridge's internal admin user as its
 * administrator and NAME as a user without admin rights owning schema NAME.
 */
final class FileDatabases {
    private FileDatabases() {}

    private static boolean startsWith(String s, int from, String... prefixes) {
        for (String p : prefixes) {
            if (s.regionMatches(true, from, p, 0, p.length())) {
                return true;
            }
        }
        return false;
    }

    /** Whether url names an embedded file database of H2 or HSQLDB (not memory, not a server). */
    static boolean applies(String url) {
        if (Policy.isH2(url)) {
            return !startsWith(url, 8, "mem:", "tcp:", "ssl:");
        }
        return Policy.isHsqldb(url) && !startsWith(url, 12, "mem:", "hsql:", "hsqls:", "http:", "https:");
    }

    /** The client's user name as the bridge creates it: upper-cased; the admin name refused. */
    static String clientUser(Properties props) throws SQLException {
        String user = props.getProperty("user", "");
        user = (user.isEmpty() ? "SA" : user).toUpperCase(Locale.ROOT);
        if (user.equals(Restrict.ADMIN) || user.indexOf('"') >= 0) {
            throw new SQLException("user name " + user + " is refused by the bridge", Protocol.STATE_AUTH);
        }
        return user;
    }

    /** url with the engine's "open only if it exists" setting appended. */
    private static String ifExists(String url) {
        return url + (Policy.isH2(url) ? ";IFEXISTS=TRUE" : ";ifexists=true");
    }

    /** Opens an existing file database for a client without admin rights there. */
    static Connection open(String url, Properties props) throws SQLException {
        String user = clientUser(props);
        Properties cp = new Properties();
        cp.putAll(props);
        cp.setProperty("user", user);
        String u = ifExists(Policy.isH2(url) ? Restrict.h2SessionUrl(url) : url);
        Connection c = DriverManager.getConnection(u, cp);
        try {
            if (isAdmin(c, Policy.isH2(url))) {
                throw new SQLException("user " + user + " has admin rights in this file database: the bridge serves file databases"
                        + " only to users without them (create one with the bridge's --create-database)", Protocol.STATE_AUTH);
            }
            try {
                c.setSchema(user);
            } catch (SQLException e) {
                // a user made outside the admin path may own no schema of its name
            }
            return c;
        } catch (SQLException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** Whether the session's user has admin rights; a failing check counts as yes. */
    private static boolean isAdmin(Connection c, boolean h2) {
        String q = h2
                ? "SELECT IS_ADMIN FROM INFORMATION_SCHEMA.USERS WHERE USER_NAME = CURRENT_USER"
                : "SELECT ADMIN FROM INFORMATION_SCHEMA.SYSTEM_USERS WHERE USER_NAME = CURRENT_USER";
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(q)) {
            return !rs.next() || rs.getBoolean(1);
        } catch (SQLException | RuntimeException e) {
            return true;
        }
    }

    /**
     * The admin path: creates the file database url, refusing one that exists, with the
     * bridge's admin user (password from TIDEMARK_JDBCBRIDGE_ADMIN_PASSWORD) and user (password
     * from TIDEMARK_JDBCBRIDGE_USER_PASSWORD, empty when unset). Returns the exit status.
     */
    static int create(String url, String user) {
        String adminPassword = System.getenv("TIDEMARK_JDBCBRIDGE_ADMIN_PASSWORD");
        String password = System.getenv().getOrDefault("TIDEMARK_JDBCBRIDGE_USER_PASSWORD", "");
        if (adminPassword == null || adminPassword.isEmpty()) {
            return fail("--create-database needs TIDEMARK_JDBCBRIDGE_ADMIN_PASSWORD in the environment");
        }
        if (!applies(url) || !startsWith(url, Policy.isH2(url) ? 8 : 12, "file:")) {
            return fail("--create-database takes a jdbc:h2:file: or jdbc:hsqldb:file: URL");
        }
        Properties ap = new Properties();
        ap.setProperty("user", Restrict.ADMIN);
        ap.setProperty("password", adminPassword);
        try {
            Properties up = new Properties();
            up.setProperty("user", user == null ? "" : user);
            String name = clientUser(up);
            try (Connection c = DriverManager.getConnection(ifExists(url), ap)) {
                return fail("database " + url + " exists");
            } catch (SQLException e) {
                if (e.getErrorCode() != 90146 && e.getErrorCode() != -465) {
                    return fail("database " + url + " exists or cannot be opened: " + e.getMessage());
                }
            }
            try (Connection admin = DriverManager.getConnection(url, ap)) {
                Restrict.createUser(admin, Policy.isH2(url), name, password);
                if (Policy.isHsqldb(url)) {
                    try (Statement st = admin.createStatement()) {
                        st.execute("SHUTDOWN");
                    }
                }
            }
            System.out.println("CREATED " + url + " for user " + name);
            return 0;
        } catch (SQLException e) {
            return fail("creating " + url + ": " + e.getMessage());
        }
    }

    private static int fail(String msg) {
        System.err.println("jdbcbridge: " + msg);
        return 2;
    }
}
