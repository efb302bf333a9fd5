package tidemark.bridge;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Timestamp;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;

/**
 * Dates and times through java.time, falling back to java.sql.Date, Time and Timestamp where a
 * JDBC 4.1-era driver refuses java.time in getObject(i, Class) or setObject (SQLSTATE 22005, or
 * a feature it does not support). The JVM runs in UTC, so a java.sql value's wall clock is the
 * java.time value's.
 */
final class OldTime {
    private OldTime() {}

    /** Tells a driver's refusal of a java.time type from any other failure. */
    static boolean refused(SQLException e) {
        return "22005".equals(e.getSQLState()) || e instanceof SQLFeatureNotSupportedException;
    }

    static LocalDate date(ResultSet rs, int i) throws SQLException {
        try {
            return rs.getObject(i, LocalDate.class);
        } catch (SQLException e) {
            if (!refused(e)) {
                throw e;
            }
            java.sql.Date d = rs.getDate(i);
            return d == null ? null : d.toLocalDate();
        }
    }

    static LocalTime time(ResultSet rs, int i) throws SQLException {
        try {
            return rs.getObject(i, LocalTime.class);
        } catch (SQLException e) {
            if (!refused(e)) {
                throw e;
            }
            Timestamp t = rs.getTimestamp(i); // keeps the fraction a java.sql.Time drops
            return t == null ? null : t.toLocalDateTime().toLocalTime();
        }
    }

    static LocalDateTime timestamp(ResultSet rs, int i) throws SQLException {
        try {
            return rs.getObject(i, LocalDateTime.class);
        } catch (SQLException e) {
            if (!refused(e)) {
                throw e;
            }
            Timestamp t = rs.getTimestamp(i);
            return t == null ? null : t.toLocalDateTime();
        }
    }

    static OffsetDateTime timestampTz(ResultSet rs, int i) throws SQLException {
        try {
            return rs.getObject(i, OffsetDateTime.class);
        } catch (SQLException e) {
            if (!refused(e)) {
                throw e;
            }
            Timestamp t = rs.getTimestamp(i);
            return t == null ? null : t.toInstant().atOffset(ZoneOffset.UTC);
        }
    }

    /** A time of day as a Timestamp on 1970-01-01: a java.sql.Time drops the fraction. */
    private static Timestamp onEpochDay(LocalTime t) {
        return Timestamp.valueOf(LocalDate.EPOCH.atTime(t));
    }

    /** Binds a java.time value, or its java.sql form where the driver refuses it. */
    static void set(PreparedStatement ps, int i, Object v) throws SQLException {
        try {
            ps.setObject(i, v);
        } catch (SQLException e) {
            if (!refused(e)) {
                throw e;
            }
            if (v instanceof LocalDate) {
                ps.setDate(i, java.sql.Date.valueOf((LocalDate) v));
            } else if (v instanceof LocalTime) {
                ps.setTimestamp(i, onEpochDay((LocalTime) v));
            } else if (v instanceof OffsetTime) {
                ps.setTimestamp(i, onEpochDay(((OffsetTime) v).withOffsetSameInstant(ZoneOffset.UTC).toLocalTime()));
            } else if (v instanceof LocalDateTime) {
                ps.setTimestamp(i, Timestamp.valueOf((LocalDateTime) v));
            } else if (v instanceof OffsetDateTime) {
                ps.setTimestamp(i, Timestamp.from(((OffsetDateTime) v).toInstant()));
            } else {
                throw e;
            }
        }
    }
}
