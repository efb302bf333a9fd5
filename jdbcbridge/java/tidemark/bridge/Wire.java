package tidemark.bridge;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Minimal big-endian encoder/decoder for frames. Text is strict UTF-8 both ways: malformed input
 * (bytes ff fe, overlong forms such as c0 af, encoded surrogates such as ed a0 80) and strings
 * with unpaired surrogates are refused with SQLSTATE 22021, never replaced.
 */
final class Wire {
    private Wire() {}

    private static final ThreadLocal<CharsetDecoder> DECODER = ThreadLocal.withInitial(() -> StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT));

    /** Decodes n bytes of strict UTF-8; throws BridgeException 22021 on malformed input. */
    static String decodeUtf8(byte[] b, int off, int n) {
        boolean ascii = true;
        for (int i = off; i < off + n; i++) {
            if (b[i] < 0) {
                ascii = false;
                break;
            }
        }
        if (ascii) {
            return new String(b, off, n, StandardCharsets.US_ASCII);
        }
        CharsetDecoder d = DECODER.get().reset();
        ByteBuffer in = ByteBuffer.wrap(b, off, n);
        CharBuffer out = CharBuffer.allocate(n); // UTF-8 never needs more chars than bytes
        CoderResult r = d.decode(in, out, true);
        if (!r.isError()) {
            r = d.flush(out);
        }
        if (r.isError()) {
            int at = in.position() - off;
            StringBuilder hex = new StringBuilder();
            for (int i = in.position(); i < Math.min(in.position() + Math.max(r.length(), 1), off + n); i++) {
                hex.append(String.format("%02x", b[i] & 0xff));
            }
            throw new BridgeException(BridgeException.INVALID_TEXT,
                    "text sent to the bridge is not valid UTF-8: bytes " + hex + " at byte offset " + at);
        }
        out.flip();
        return out.toString();
    }

    /**
     * Encodes s as UTF-8; throws BridgeException 22021 when s holds an unpaired surrogate (text
     * the database returned that has no UTF-8 form).
     */
    static byte[] encodeUtf8(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw new BridgeException(BridgeException.INVALID_TEXT, String.format(
                        "text from the database cannot be encoded as UTF-8: unpaired surrogate U+%04X at char %d", (int) c, i));
            }
        }
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Reads a frame's length prefix; returns -1 on clean EOF. */
    static int readLength(DataInputStream in) throws IOException {
        int b0 = in.read();
        if (b0 < 0) {
            return -1;
        }
        int len = (b0 << 24) | (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
        if (len < 5) {
            throw new IOException("bad frame length " + len);
        }
        return len;
    }

    /** Decoder over one frame payload. */
    static final class In {
        final byte[] b;
        int pos;

        In(byte[] b, int pos) {
            this.b = b;
            this.pos = pos;
        }

        private void need(int n) throws IOException {
            if (pos + n > b.length) {
                throw new EOFException("truncated frame");
            }
        }

        int u8() throws IOException {
            need(1);
            return b[pos++] & 0xff;
        }

        int u16() throws IOException {
            return (u8() << 8) | u8();
        }

        int i32() throws IOException {
            need(4);
            int v = ((b[pos] & 0xff) << 24) | ((b[pos + 1] & 0xff) << 16) | ((b[pos + 2] & 0xff) << 8) | (b[pos + 3] & 0xff);
            pos += 4;
            return v;
        }

        long i64() throws IOException {
            return ((long) i32() << 32) | (i32() & 0xffffffffL);
        }

        double f64() throws IOException {
            return Double.longBitsToDouble(i64());
        }

        byte[] bytes() throws IOException {
            int n = i32();
            if (n < 0) {
                return null;
            }
            need(n);
            byte[] r = new byte[n];
            System.arraycopy(b, pos, r, 0, n);
            pos += n;
            return r;
        }

        String str() throws IOException {
            int n = i32();
            if (n < 0) {
                return null;
            }
            need(n);
            String s = decodeUtf8(b, pos, n);
            pos += n;
            return s;
        }
    }

    /**
     * Growable output buffer; the first 4 bytes are reserved for the frame length. A response
     * that would grow past limit bytes is refused (BridgeException 54000) instead of growing
     * the heap without bound.
     */
    static final class Out {
        byte[] b = new byte[8192];
        int len;
        int limit = Integer.MAX_VALUE - 16;

        void reset() {
            len = 4;
            if (b.length > (8 << 20)) {
                b = new byte[8192];
            }
        }

        int size() {
            return len - 4;
        }

        private void ensure(int n) {
            if ((long) len + n - 4 > limit) {
                throw new BridgeException(BridgeException.TOO_LARGE,
                        "response larger than the bridge's per-request limit of " + limit + " bytes");
            }
            if (len + n > b.length) {
                long c = (long) b.length * 2;
                while (c < len + n) {
                    c *= 2;
                }
                c = Math.min(c, (long) limit + 8);
                byte[] nb = new byte[(int) c];
                System.arraycopy(b, 0, nb, 0, len);
                b = nb;
            }
        }

        Out u8(int v) {
            ensure(1);
            b[len++] = (byte) v;
            return this;
        }

        Out u16(int v) {
            return u8(v >>> 8).u8(v);
        }

        Out i32(int v) {
            ensure(4);
            b[len] = (byte) (v >>> 24);
            b[len + 1] = (byte) (v >>> 16);
            b[len + 2] = (byte) (v >>> 8);
            b[len + 3] = (byte) v;
            len += 4;
            return this;
        }

        Out i64(long v) {
            return i32((int) (v >>> 32)).i32((int) v);
        }

        Out f64(double v) {
            return i64(Double.doubleToRawLongBits(v));
        }

        Out bytes(byte[] v) {
            if (v == null) {
                return i32(-1);
            }
            return bytes(v, 0, v.length);
        }

        Out bytes(byte[] v, int off, int n) {
            i32(n);
            ensure(n);
            System.arraycopy(v, off, b, len, n);
            len += n;
            return this;
        }

        Out str(String s) {
            if (s == null) {
                return i32(-1);
            }
            return bytes(encodeUtf8(s));
        }

        /** Writes the frame (length prefix + body) to the stream. */
        void writeTo(OutputStream os) throws IOException {
            int n = len - 4;
            b[0] = (byte) (n >>> 24);
            b[1] = (byte) (n >>> 16);
            b[2] = (byte) (n >>> 8);
            b[3] = (byte) n;
            os.write(b, 0, len);
            os.flush();
        }
    }
}
