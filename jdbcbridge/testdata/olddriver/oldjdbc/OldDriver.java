package oldjdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.Properties;
import java.util.logging.Logger;

/**
 * A test driver that behaves as a JDBC 4.1-era driver does: jdbc:old:URL opens URL with the
 * driver that serves it, and every getObject(i, java.time class) and setObject(i, java.time
 * value) is refused with SQLSTATE 22005.
 */
public final class OldDriver implements Driver {
    private static final String PREFIX = "jdbc:old:";

    static {
        try {
            DriverManager.registerDriver(new OldDriver());
        } catch (SQLException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public boolean acceptsURL(String url) {
        return url != null && url.startsWith(PREFIX);
    }

    public Connection connect(String url, Properties info) throws SQLException {
        if (!acceptsURL(url)) {
            return null;
        }
        return (Connection) wrap(DriverManager.getConnection(url.substring(PREFIX.length()), info), Connection.class);
    }

    private static Object wrap(Object target, Class<?> iface) {
        return Proxy.newProxyInstance(OldDriver.class.getClassLoader(), new Class<?>[] {iface}, (p, m, args) -> {
            if (refuses(m, args)) {
                throw new SQLException("data type not supported: " + m.getName() + " with java.time", "22005");
            }
            Object r;
            try {
                r = m.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            Class<?> rt = m.getReturnType();
            if (r != null && (rt == Statement.class || rt == PreparedStatement.class || rt == CallableStatement.class || rt == ResultSet.class)) {
                return wrap(r, rt);
            }
            return r;
        });
    }

    private static boolean refuses(Method m, Object[] args) {
        if (args == null || args.length < 2) {
            return false;
        }
        if (m.getName().equals("getObject") && args[1] instanceof Class) {
            return ((Class<?>) args[1]).getName().startsWith("java.time.");
        }
        return m.getName().equals("setObject") && args[1] != null && args[1].getClass().getName().startsWith("java.time.");
    }

    public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) {
        return new DriverPropertyInfo[0];
    }

    public int getMajorVersion() {
        return 4;
    }

    public int getMinorVersion() {
        return 1;
    }

    public boolean jdbcCompliant() {
        return false;
    }

    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }
}
