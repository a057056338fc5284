package io.sluice.connect.host;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Writes the primitives of the protocol's binary bodies (big-endian; docs/plugins.md). */
public final class BinaryWriter {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream(4096);
    private final DataOutputStream out = new DataOutputStream(bytes);

    public BinaryWriter u8(int v) {
        return io(() -> out.writeByte(v));
    }

    public BinaryWriter u16(int v) {
        if (v < 0 || v > 0xFFFF) {
            throw new IllegalArgumentException("value " + v + " does not fit a u16");
        }
        return io(() -> out.writeShort(v));
    }

    public BinaryWriter i32(int v) {
        return io(() -> out.writeInt(v));
    }

    public BinaryWriter i64(long v) {
        return io(() -> out.writeLong(v));
    }

    /** A {@code string}: u16 length, then UTF-8. */
    public BinaryWriter string(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        u16(b.length);
        return io(() -> out.write(b));
    }

    /** A {@code bytes}: i32 length (−1 for null), then the bytes. */
    public BinaryWriter bytes(byte[] b) {
        if (b == null) {
            return i32(-1);
        }
        i32(b.length);
        return io(() -> out.write(b));
    }

    /** Bytes already encoded (a nested part of a body), with no length. */
    public BinaryWriter raw(byte[] b) {
        return io(() -> out.write(b));
    }

    public byte[] toByteArray() {
        return bytes.toByteArray();
    }

    private interface IoAction {
        void run() throws IOException;
    }

    private BinaryWriter io(IoAction action) {
        try {
            action.run();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return this;
    }
}
