package tidemark.bridge;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * What a client may ask of the bridge beyond SQL rights: which URL prefixes admit a URL, which
 * settings its URL and properties may carry, and (HSQLDB) no text tables.
 */
final class Policy {
    private Policy() {}

    /**
     * Settings a client's URL or properties may carry, by engine, with the values allowed
     * (null: any). A database applies its URL settings when it is first opened, so whoever
     * connects first would set them for everyone (H2 IGNORECASE, HSQLDB sql.ignore_case made
     * 'acc-1' = 'ACC-1' for the application); only settings Tidemark itself uses pass.
     * hsqldb.tx=locks is the engine's default, which a URL without the setting gets anyway.
     */
    private static final Map<String, Set<String>> H2_SETTINGS = allowed(
            "LOCK_TIMEOUT", null, "QUERY_TIMEOUT", null, "DB_CLOSE_DELAY", null, "TIME ZONE", null, "THROTTLE", null);
    private static final Map<String, Set<String>> HSQLDB_SETTINGS = allowed(
            "hsqldb.tx", Set.of("mvcc", "locks"), "sql.pad_space", Set.of("false"), "hsqldb.lob_file_scale", null);

    private static Map<String, Set<String>> allowed(Object... kv) {
        java.util.HashMap<String, Set<String>> m = new java.util.HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            @SuppressWarnings("unchecked")
            Set<String> v = (Set<String>) kv[i + 1];
            m.put(((String) kv[i]).toUpperCase(Locale.ROOT), v);
        }
        return m;
    }

    static boolean isH2(String url) {
        return url.regionMatches(true, 0, "jdbc:h2:", 0, 8);
    }

    static boolean isHsqldb(String url) {
        return url.regionMatches(true, 0, "jdbc:hsqldb:", 0, 12);
    }

    /**
     * Whether prefix admits url: the scheme compared ignoring case, the path exactly, and a
     * prefix that does not end a directory (or scheme) admits only itself or what lies below
     * it, so jdbc:h2:file:/srv/pre does not admit /srv/preEVIL/db.
     */
    static boolean admits(String prefix, String url) {
        if (prefix.isEmpty() || url.length() < prefix.length()) {
            return false;
        }
        int slash = prefix.length();
        for (int i = 0; i < prefix.length(); i++) {
            char c = prefix.charAt(i);
            if (c == '/' || c == '\\') {
                slash = i;
                break;
            }
        }
        int scheme = prefix.lastIndexOf(':', slash - 1) + 1;
        if (!url.regionMatches(true, 0, prefix, 0, scheme) || !url.regionMatches(false, scheme, prefix, scheme, prefix.length() - scheme)) {
            return false;
        }
        char last = prefix.charAt(prefix.length() - 1);
        if (last == '/' || last == '\\' || last == ':' || url.length() == prefix.length()) {
            return true;
        }
        char next = url.charAt(prefix.length());
        return next == '/' || next == '\\' || next == ';';
    }

    /** Returns null when the URL's settings and the properties are allowed, else the reason. */
    static String checkSettings(String url, Properties props) {
        Map<String, Set<String>> allowed = isH2(url) ? H2_SETTINGS : isHsqldb(url) ? HSQLDB_SETTINGS : Map.of();
        List<String[]> settings = new ArrayList<>();
        String[] parts = url.split(";");
        for (int i = 1; i < parts.length; i++) {
            if (parts[i].isBlank()) {
                continue;
            }
            int eq = parts[i].indexOf('=');
            settings.add(new String[] {eq < 0 ? parts[i] : parts[i].substring(0, eq), eq < 0 ? "" : parts[i].substring(eq + 1)});
        }
        for (String k : props.stringPropertyNames()) {
            settings.add(new String[] {k, props.getProperty(k)});
        }
        for (String[] s : settings) {
            String key = s[0].trim().toUpperCase(Locale.ROOT);
            if (!allowed.containsKey(key)) {
                return "the bridge does not allow the setting " + s[0].trim() + " (allowed: " + allowed.keySet()
                        + "): URL settings apply to every session of the database";
            }
            Set<String> values = allowed.get(key);
            if (values != null && !values.contains(s[1].trim().toLowerCase(Locale.ROOT))) {
                return "the bridge allows " + s[0].trim() + " only as " + values;
            }
        }
        return null;
    }

    /**
     * Refuses HSQLDB text tables (CREATE TEXT TABLE, SET TABLE ... SOURCE): their source is a
     * file the database reads and writes, anywhere for an in-memory database, beside it for a
     * file database. Keywords are matched outside strings, quoted names and comments.
     */
    static void checkHsqldbSql(String sql) throws SQLException {
        List<String> t = words(sql);
        for (int i = 0; i + 1 < t.size(); i++) {
            boolean text = t.get(i).equals("TEXT") && t.get(i + 1).equals("TABLE");
            boolean source = t.get(i).equals("SET") && t.get(i + 1).equals("TABLE") && t.subList(i, t.size()).contains("SOURCE");
            if (text || source) {
                throw new SQLException("text tables are refused by the bridge: their source is a file", "42501");
            }
        }
    }

    /** The upper-cased words of sql outside literals, quoted names and comments; "" marks those. */
    static List<String> words(String sql) {
        List<String> out = new ArrayList<>();
        int n = sql.length();
        int i = 0;
        while (i < n) {
            char c = sql.charAt(i);
            if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                int e = sql.indexOf('\n', i);
                i = e < 0 ? n : e + 1;
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int e = sql.indexOf("*/", i + 2);
                i = e < 0 ? n : e + 2;
            } else if (c == '\'' || c == '"') {
                int e = i + 1;
                while (e < n) {
                    if (sql.charAt(e) == c && !(e + 1 < n && sql.charAt(e + 1) == c)) {
                        break;
                    }
                    e += sql.charAt(e) == c ? 2 : 1; // a doubled quote stays inside
                }
                out.add("");
                i = e + 1;
            } else if (Character.isLetterOrDigit(c) || c == '_' || c == '$') {
                int e = i;
                while (e < n && (Character.isLetterOrDigit(sql.charAt(e)) || sql.charAt(e) == '_' || sql.charAt(e) == '$')) {
                    e++;
                }
                out.add(sql.substring(i, e).toUpperCase(Locale.ROOT));
                i = e;
            } else {
                if (!Character.isWhitespace(c)) {
                    out.add(String.valueOf(c));
                }
                i++;
            }
        }
        return out;
    }
}
