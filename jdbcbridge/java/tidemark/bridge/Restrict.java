package tidemark.bridge;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * Runs client sessions on in-memory databases as a database user without admin rights that
 * owns a schema of its own name. The bridge creates each in-memory database itself, as an
 * internal admin user with a random password known only to this process, creates the client's
 * user and schema, and keeps that admin connection open for the life of the database.
 *
 * <p>Without admin rights H2 refuses CREATE ALIAS (Java code), FILE_READ, FILE_WRITE,
 * RUNSCRIPT, SCRIPT TO, CSVREAD/CSVWRITE, LINK_SCHEMA and linked tables; HSQLDB refuses SCRIPT
 * to a file and Java routines (which hsqldb.method_class_names restricts as well). Tidemark's
 * DDL and statements need only the rights of a schema owner.
 */
final class Restrict {
    private Restrict() {}

    /** The internal admin user; clients may not use this name. */
    static final String ADMIN = "TIDEMARK_BRIDGE_ADMIN";

    private static final String ADMIN_PASSWORD = randomPassword();

    /** Open admin connections by database (engine and name), and the users created in each. */
    private static final Map<String, Connection> ADMINS = new HashMap<>();
    private static final Map<String, Set<String>> USERS = new HashMap<>();

    private static String randomPassword() {
        byte[] b = new byte[24];
        new SecureRandom().nextBytes(b);
        StringBuilder sb = new StringBuilder();
        for (byte x : b) {
            sb.append(String.format("%02x", x & 0xff));
        }
        return sb.toString();
    }

    private static boolean isH2(String url) {
        return url.regionMatches(true, 0, "jdbc:h2:mem:", 0, 12);
    }

    private static boolean isHsqldb(String url) {
        return url.regionMatches(true, 0, "jdbc:hsqldb:mem:", 0, 16);
    }

    /** Whether sessions on url are restricted (named in-memory H2 and HSQLDB databases). */
    static boolean applies(String url) {
        return isH2(url) || isHsqldb(url);
    }

    /**
     * Opens url for the client's user (props holds user and password) as a non-admin user
     * owning schema USER, creating the database, user and schema first when needed.
     */
    static Connection open(String url, Properties props) throws SQLException {
        String name = url.substring(isH2(url) ? 12 : 16);
        int semi = name.indexOf(';');
        if (semi >= 0) {
            name = name.substring(0, semi);
        }
        if (name.isBlank()) {
            // A private unnamed database would be created anew by every connection, so the
            // bridge could not prepare it: the client would be its admin.
            throw new SQLException("unnamed in-memory databases are refused by the bridge: name the database", Protocol.STATE_REJECTED);
        }
        String user = FileDatabases.clientUser(props);
        String password = props.getProperty("password", "");
        String key = (isH2(url) ? "h2:" : "hsqldb:") + (isH2(url) ? name : name.toLowerCase(Locale.ROOT));
        synchronized (ADMINS) {
            Connection admin = ADMINS.get(key);
            if (admin == null || admin.isClosed()) {
                Properties ap = new Properties();
                ap.putAll(props);
                ap.setProperty("user", ADMIN);
                ap.setProperty("password", ADMIN_PASSWORD);
                admin = DriverManager.getConnection(url, ap);
                ADMINS.put(key, admin);
                USERS.put(key, new HashSet<>());
            }
            if (USERS.get(key).add(user)) {
                createUser(admin, isH2(url), user, password);
            }
        }
        Properties cp = new Properties();
        cp.putAll(props);
        if (isH2(url)) {
            url = h2SessionUrl(url);
        }
        cp.setProperty("user", user);
        cp.setProperty("password", password);
        Connection c = DriverManager.getConnection(url, cp);
        try {
            c.setSchema(user);
        } catch (SQLException | RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /**
     * H2 applies URL settings with SET statements as the connecting user, and database-level
     * ones (DB_CLOSE_DELAY, MODE, ...) need admin rights. The admin connection that created the
     * database applied them; the client's URL keeps only the session-level settings.
     */
    private static final Set<String> H2_SESSION_SETTINGS = Set.of("LOCK_TIMEOUT", "QUERY_TIMEOUT", "TIME ZONE", "THROTTLE");

    static String h2SessionUrl(String url) {
        String[] parts = url.split(";");
        StringBuilder sb = new StringBuilder(parts[0]);
        for (int i = 1; i < parts.length; i++) {
            int eq = parts[i].indexOf('=');
            String k = (eq < 0 ? parts[i] : parts[i].substring(0, eq)).trim().toUpperCase(Locale.ROOT);
            if (H2_SESSION_SETTINGS.contains(k)) {
                sb.append(';').append(parts[i]);
            }
        }
        return sb.toString();
    }

    static void createUser(Connection admin, boolean h2, String user, String password) throws SQLException {
        String pw = "'" + password.replace("'", "''") + "'";
        try (Statement st = admin.createStatement()) {
            if (h2) {
                st.execute("CREATE USER IF NOT EXISTS \"" + user + "\" PASSWORD " + pw);
                st.execute("CREATE SCHEMA IF NOT EXISTS \"" + user + "\" AUTHORIZATION \"" + user + "\"");
                return;
            }
            try {
                st.execute("CREATE USER \"" + user + "\" PASSWORD " + pw);
                st.execute("CREATE SCHEMA \"" + user + "\" AUTHORIZATION \"" + user + "\"");
                st.execute("ALTER USER \"" + user + "\" SET INITIAL SCHEMA \"" + user + "\"");
            } catch (SQLException e) {
                if (!"42504".equals(e.getSQLState())) { // already exists
                    throw e;
                }
            }
        }
    }
}
