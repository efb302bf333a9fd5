package tidemark.bridge;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** Minimal big-endian encoder/decoder for frames. */
final class Wire {
    private Wire() {}

    /** Reads one frame body (after the length prefix); returns null on clean EOF. */
    static byte[] readFrame(DataInputStream in, int max) throws IOException {
        int b0 = in.read();
        if (b0 < 0) {
            return null;
        }
        int len = (b0 << 24) | (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
        if (len < 5 || len > max) {
            throw new IOException("bad frame length " + len);
        }
        byte[] b = new byte[len];
        in.readFully(b);
        return b;
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
            String s = new String(b, pos, n, StandardCharsets.UTF_8);
            pos += n;
            return s;
        }
    }

    /** Growable output buffer; the first 4 bytes are reserved for the frame length. */
    static final class Out {
        byte[] b = new byte[8192];
        int len;

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
            if (len + n > b.length) {
                int c = b.length * 2;
                while (c < len + n) {
                    c *= 2;
                }
                byte[] nb = new byte[c];
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
            return bytes(s.getBytes(StandardCharsets.UTF_8));
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
