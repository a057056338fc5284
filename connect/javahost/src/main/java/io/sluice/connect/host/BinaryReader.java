package io.sluice.connect.host;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** Reads the primitives of the protocol's binary bodies (big-endian; docs/plugins.md). */
public final class BinaryReader {
    private final ByteBuffer buf;

    public BinaryReader(byte[] body) {
        this.buf = ByteBuffer.wrap(body);
    }

    public int u8() {
        return Byte.toUnsignedInt(get().get());
    }

    public int u16() {
        return Short.toUnsignedInt(get().getShort());
    }

    public int i32() {
        return get().getInt();
    }

    /** A u32 as a long, so counts above 2^31 are not negative. */
    public long u32() {
        return Integer.toUnsignedLong(get().getInt());
    }

    public long i64() {
        return get().getLong();
    }

    public String string() {
        byte[] b = new byte[u16()];
        get().get(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    /** A {@code bytes}; null for length −1. */
    public byte[] bytes() {
        int length = i32();
        if (length == -1) {
            return null;
        }
        if (length < 0 || length > buf.remaining()) {
            throw new IllegalArgumentException("bad bytes length " + length);
        }
        byte[] b = new byte[length];
        buf.get(b);
        return b;
    }

    private ByteBuffer get() {
        if (!buf.hasRemaining()) {
            throw new BufferUnderflowException();
        }
        return buf;
    }
}
