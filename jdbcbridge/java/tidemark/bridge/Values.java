package tidemark.bridge;

import static tidemark.bridge.Protocol.*;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Locale;
import java.util.UUID;

/** Maps JDBC column values to wire tags and wire parameters to JDBC setters. */
final class Values {
    private Values() {}

    /** A large object whose content is streamed to the client in chunks. */
    static final class Lob {
        final Clob clob;
        final Blob blob;
        final long length;
        long pos = 1; // 1-based JDBC position (chars for CLOB, bytes for BLOB)

        Lob(Clob c, Blob b, long length) {
            this.clob = c;
            this.blob = b;
            this.length = length;
        }

        void free() {
            try {
                if (clob != null) {
                    clob.free();
                }
                if (blob != null) {
                    blob.free();
                }
            } catch (SQLException | RuntimeException ignored) {
                // best effort
            }
        }
    }

    /** Registers a large object and returns its handle id. */
    interface LobSink {
        int register(Lob lob);
    }

    /**
     * Chooses the wire kind for a column. The type NAME wins over the JDBC type code where drivers
     * disagree (H2 reports UUID as BINARY).
     */
    static int kindOf(String typeName, int jdbcType) {
        String tn = typeName == null ? "" : typeName.toUpperCase(Locale.ROOT);
        if (tn.equals("UUID")) {
            return T_UUID;
        }
        if (tn.startsWith("TIMESTAMP") && tn.contains("WITH TIME ZONE")) {
            return T_TIMESTAMPTZ;
        }
        if (tn.startsWith("TIME") && tn.contains("WITH TIME ZONE")) {
            return T_STRING;
        }
        if (tn.startsWith("INTERVAL")) {
            return T_STRING;
        }
        switch (jdbcType) {
            case Types.BOOLEAN:
            case Types.BIT:
                return T_BOOL;
            case Types.TINYINT:
            case Types.SMALLINT:
            case Types.INTEGER:
            case Types.BIGINT:
                return T_INT64;
            case Types.REAL:
            case Types.FLOAT:
            case Types.DOUBLE:
                return T_DOUBLE;
            case Types.DECIMAL:
            case Types.NUMERIC:
                return T_DECIMAL;
            case Types.DATE:
                return T_DATE;
            case Types.TIME:
                return T_TIME;
            case Types.TIMESTAMP:
                return T_TIMESTAMP;
            case Types.TIMESTAMP_WITH_TIMEZONE:
                return T_TIMESTAMPTZ;
            case Types.BINARY:
            case Types.VARBINARY:
            case Types.LONGVARBINARY:
                return T_BYTES;
            case Types.BLOB:
                return T_BLOB;
            case Types.CLOB:
            case Types.NCLOB:
                return T_CLOB;
            default:
                return T_STRING;
        }
    }

    /** Column kinds for a result set. */
    static int[] kinds(ResultSetMetaData md) throws SQLException {
        int n = md.getColumnCount();
        int[] k = new int[n];
        for (int i = 0; i < n; i++) {
            k[i] = kindOf(md.getColumnTypeName(i + 1), md.getColumnType(i + 1));
        }
        return k;
    }

    /** Writes the column descriptors. */
    static void writeColumns(Wire.Out o, ResultSetMetaData md, int[] kinds) throws SQLException {
        o.i32(kinds.length);
        for (int i = 1; i <= kinds.length; i++) {
            o.str(md.getColumnLabel(i));
            o.str(md.getColumnTypeName(i));
            o.i32(md.getColumnType(i));
            int nl = md.isNullable(i);
            o.u8(nl == ResultSetMetaData.columnNoNulls ? 0 : nl == ResultSetMetaData.columnNullable ? 1 : 2);
            int prec = 0;
            int scale = 0;
            try {
                prec = md.getPrecision(i);
                scale = md.getScale(i);
            } catch (SQLException | RuntimeException ignored) {
                // some types have no precision
            }
            o.i32(prec);
            o.i32(scale);
            o.u8(kinds[i - 1]);
        }
    }

    /**
     * Writes column i (1-based) of the current row. Returns true when a LOB handle was written (the
     * caller must then end the batch so the result set stays on that row).
     */
    static boolean writeValue(Wire.Out o, ResultSet rs, int i, int kind, LobSink lobs) throws SQLException {
        switch (kind) {
            case T_BOOL: {
                boolean v = rs.getBoolean(i);
                if (rs.wasNull()) {
                    o.u8(T_NULL);
                } else {
                    o.u8(T_BOOL).u8(v ? 1 : 0);
                }
                return false;
            }
            case T_INT64: {
                long v = rs.getLong(i);
                if (rs.wasNull()) {
                    o.u8(T_NULL);
                } else {
                    o.u8(T_INT64).i64(v);
                }
                return false;
            }
            case T_DOUBLE: {
                double v = rs.getDouble(i);
                if (rs.wasNull()) {
                    o.u8(T_NULL);
                } else {
                    o.u8(T_DOUBLE).f64(v);
                }
                return false;
            }
            case T_DECIMAL: {
                String s;
                try {
                    BigDecimal d = rs.getBigDecimal(i);
                    s = d == null ? null : d.toPlainString();
                } catch (SQLException e) {
                    s = rs.getString(i); // DECFLOAT infinities/NaN
                }
                if (s == null) {
                    o.u8(T_NULL);
                } else {
                    o.u8(T_DECIMAL).str(s);
                }
                return false;
            }
            case T_BYTES: {
                byte[] v = rs.getBytes(i);
                if (v == null) {
                    o.u8(T_NULL);
                } else {
                    o.u8(T_BYTES).bytes(v);
                }
                return false;
            }
            case T_DATE: {
                LocalDate d = OldTime.date(rs, i);
                if (d == null) {
                    o.u8(T_NULL);
                } else {
                    o.u8(T_DATE).i64(d.toEpochDay());
                }
                return false;
            }
            case T_TIME: {
                LocalTime t = OldTime.time(rs, i);
                if (t == null) {
                    o.u8(T_NULL);
                } else {
                    o.u8(T_TIME).i64(t.toNanoOfDay());
                }
                return false;
            }
            case T_TIMESTAMP: {
                LocalDateTime t = OldTime.timestamp(rs, i);
                if (t == null) {
                    o.u8(T_NULL);
                } else {
                    o.u8(T_TIMESTAMP).i64(t.toEpochSecond(ZoneOffset.UTC)).i32(t.getNano());
                }
                return false;
            }
            case T_TIMESTAMPTZ: {
                OffsetDateTime t = OldTime.timestampTz(rs, i);
                if (t == null) {
                    o.u8(T_NULL);
                } else {
                    o.u8(T_TIMESTAMPTZ).i64(t.toEpochSecond()).i32(t.getNano()).i32(t.getOffset().getTotalSeconds());
                }
                return false;
            }
            case T_UUID: {
                Object v = rs.getObject(i);
                if (v == null) {
                    o.u8(T_NULL);
                    return false;
                }
                UUID u;
                if (v instanceof UUID) {
                    u = (UUID) v;
                } else if (v instanceof byte[] && ((byte[]) v).length == 16) {
                    ByteBuffer bb = ByteBuffer.wrap((byte[]) v);
                    u = new UUID(bb.getLong(), bb.getLong());
                } else {
                    u = UUID.fromString(v.toString());
                }
                o.u8(T_UUID).i64(u.getMostSignificantBits()).i64(u.getLeastSignificantBits());
                return false;
            }
            case T_CLOB: {
                Clob c = rs.getClob(i);
                if (c == null) {
                    o.u8(T_NULL);
                    return false;
                }
                long n = c.length();
                if (n <= LOB_INLINE_LIMIT) {
                    o.u8(T_STRING).str(n == 0 ? "" : c.getSubString(1, (int) n));
                    try {
                        c.free();
                    } catch (SQLException | RuntimeException ignored) {
                        // best effort
                    }
                    return false;
                }
                int id = lobs.register(new Lob(c, null, n));
                o.u8(T_CLOB).i32(id).i64(n);
                return true;
            }
            case T_BLOB: {
                Blob b = rs.getBlob(i);
                if (b == null) {
                    o.u8(T_NULL);
                    return false;
                }
                long n = b.length();
                if (n <= LOB_INLINE_LIMIT) {
                    o.u8(T_BYTES).bytes(n == 0 ? new byte[0] : b.getBytes(1, (int) n));
                    try {
                        b.free();
                    } catch (SQLException | RuntimeException ignored) {
                        // best effort
                    }
                    return false;
                }
                int id = lobs.register(new Lob(null, b, n));
                o.u8(T_BLOB).i32(id).i64(n);
                return true;
            }
            default: {
                String s = rs.getString(i);
                if (s == null) {
                    o.u8(T_NULL);
                } else {
                    o.u8(T_STRING).str(s);
                }
                return false;
            }
        }
    }

    /** Lazily computed parameter types of a prepared statement (Types.NULL when unknown). */
    static final class ParamTypes {
        private final PreparedStatement ps;
        private int[] types;

        ParamTypes(PreparedStatement ps) {
            this.ps = ps;
        }

        int get(int i) {
            if (types == null) {
                try {
                    ParameterMetaData pmd = ps.getParameterMetaData();
                    int n = pmd.getParameterCount();
                    types = new int[n];
                    for (int k = 0; k < n; k++) {
                        try {
                            types[k] = pmd.getParameterType(k + 1);
                            String tn = pmd.getParameterTypeName(k + 1);
                            if (tn != null && tn.toUpperCase(Locale.ROOT).equals("UUID")) {
                                types[k] = Types.OTHER;
                            }
                        } catch (SQLException | RuntimeException e) {
                            types[k] = Types.NULL;
                        }
                    }
                } catch (SQLException | RuntimeException e) {
                    types = new int[0];
                }
            }
            return i <= types.length ? types[i - 1] : Types.NULL;
        }
    }

    /**
     * Text up to this many characters is bound to a CLOB parameter with setString; longer text
     * goes as a character stream. HSQLDB's client copies every character stream through a buffer
     * of its stream block size (512 Ki characters, 1 MiB) before sending it: that allocation per
     * bound CLOB dominated a small event's insert: 16 writers of one-row BEGIN/INSERT/COMMIT into
     * a CLOB column ran at 90-143 rows/s with the stream and 574-1282 with setString, 8-row
     * inserts at 716-884 against 1732-1752 (in-memory HSQLDB 2.7.1, load average 10-13). 64 Ki
     * keeps a large text streamed, as before.
     */
    static final int CLOB_STRING_MAX = 64 * 1024;

    /** Reads one wire parameter and binds it to parameter i (1-based). */
    static void bind(Wire.In in, PreparedStatement ps, int i, ParamTypes pt) throws IOException, SQLException {
        int tag = in.u8();
        switch (tag) {
            case T_NULL: {
                int t = pt.get(i);
                ps.setNull(i, t == Types.NULL || t == Types.OTHER ? Types.VARCHAR : t);
                return;
            }
            case T_BOOL:
                ps.setBoolean(i, in.u8() != 0);
                return;
            case T_INT64:
                ps.setLong(i, in.i64());
                return;
            case T_DOUBLE:
                ps.setDouble(i, in.f64());
                return;
            case T_DECIMAL:
                ps.setBigDecimal(i, new BigDecimal(in.str()));
                return;
            case T_STRING: {
                String s = in.str();
                int t = pt.get(i);
                if ((t == Types.DECIMAL || t == Types.NUMERIC) && looksNumeric(s)) {
                    ps.setBigDecimal(i, new BigDecimal(s));
                } else if ((t == Types.CLOB || t == Types.NCLOB) && s.length() > CLOB_STRING_MAX) {
                    ps.setCharacterStream(i, new java.io.StringReader(s), s.length());
                } else {
                    ps.setString(i, s);
                }
                return;
            }
            case T_BYTES: {
                byte[] b = in.bytes();
                if (pt.get(i) == Types.BLOB) {
                    ps.setBinaryStream(i, new java.io.ByteArrayInputStream(b), b.length);
                } else {
                    ps.setBytes(i, b);
                }
                return;
            }
            case T_TIMESTAMPTZ: {
                long sec = in.i64();
                int nanos = in.i32();
                int off = in.i32();
                OffsetDateTime odt = Instant.ofEpochSecond(sec, nanos).atOffset(ZoneOffset.ofTotalSeconds(off));
                switch (pt.get(i)) {
                    case Types.DATE:
                        OldTime.set(ps, i, odt.toLocalDate());
                        return;
                    case Types.TIME:
                        OldTime.set(ps, i, odt.toLocalTime());
                        return;
                    case Types.TIME_WITH_TIMEZONE:
                        OldTime.set(ps, i, odt.toOffsetTime());
                        return;
                    case Types.TIMESTAMP:
                        OldTime.set(ps, i, odt.withOffsetSameInstant(ZoneOffset.UTC).toLocalDateTime());
                        return;
                    default:
                        OldTime.set(ps, i, odt);
                        return;
                }
            }
            case T_UUID: {
                UUID u = new UUID(in.i64(), in.i64());
                ps.setObject(i, u);
                return;
            }
            default:
                throw new SQLException("unsupported parameter tag " + tag, STATE_PROTOCOL);
        }
    }

    private static boolean looksNumeric(String s) {
        try {
            new BigDecimal(s.trim());
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
