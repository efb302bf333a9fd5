package tidemark.bridge;

import static tidemark.bridge.Protocol.*;

import java.io.DataInputStream;
import java.io.IOException;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Properties;

/** How the bridge bounds its memory: request frames, HSQLDB in-memory LOBs, out-of-memory. */
final class Memory {
    private Memory() {}

    /**
     * Reads one frame, holding its size in the server's memory budget until the worker is done
     * with it. A frame over the per-request limit is skipped and replaced by a refusal the
     * worker answers in order (54000), so the connection stays usable.
     */
    static byte[] readFrame(DataInputStream in, Server.Config cfg, boolean authenticated) throws IOException, InterruptedException {
        int len = Wire.readLength(in);
        if (len < 0) {
            return null;
        }
        if (!authenticated && len > MAX_FRAME_UNAUTHENTICATED) {
            throw new IOException("frame of " + len + " bytes before the handshake");
        }
        if (len > cfg.maxRequest) {
            byte[] head = new byte[5];
            in.readFully(head);
            in.skipNBytes(len - 5L);
            byte[] f = new byte[13];
            System.arraycopy(head, 0, f, 0, 4);
            f[4] = (byte) OP_TOO_LARGE;
            long v = len;
            for (int i = 0; i < 8; i++) {
                f[5 + i] = (byte) (v >>> (56 - 8 * i));
            }
            cfg.budget.acquire(f.length);
            return f;
        }
        cfg.budget.acquire(len);
        try {
            byte[] f = new byte[len];
            in.readFully(f);
            return f;
        } catch (IOException | RuntimeException | Error e) {
            cfg.budget.release(len);
            throw e;
        }
    }

    /**
     * An HSQLDB in-memory database keeps its large objects in the heap in blocks of
     * hsqldb.lob_file_scale KiB, 32 by default: every CLOB, even of 200 characters, took 32 KiB,
     * so a 70,000-event append held 2.3 GB (measured) and the next one ran out of a 6 GiB heap.
     * Blocks of 1 KiB (the smallest scale) cut that to about 80 MB. The setting only applies
     * when the database is created; a URL or property that sets it wins.
     */
    static void hsqldbDefaults(String url, Properties props) {
        if (!url.regionMatches(true, 0, "jdbc:hsqldb:mem:", 0, 16)) {
            return;
        }
        if (url.toLowerCase(Locale.ROOT).contains("hsqldb.lob_file_scale")) {
            return;
        }
        for (String k : props.stringPropertyNames()) {
            if (k.trim().equalsIgnoreCase("hsqldb.lob_file_scale")) {
                return;
            }
        }
        props.setProperty("hsqldb.lob_file_scale", "1");
    }

    /** HSQLDB reports an OutOfMemoryError it caught as S1000 with vendor code -458, H2 as 90108. */
    static boolean isOutOfMemory(SQLException e) {
        String m = e.getMessage();
        return e.getErrorCode() == -458 || e.getErrorCode() == 90108 || (m != null && m.contains("OutOfMemoryError"));
    }
}
