package io.sluice.connect.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class FrameTest {

    private static ReadableByteChannel channel(byte[] bytes) {
        return Channels.newChannel(new ByteArrayInputStream(bytes));
    }

    private static byte[] bytes(ByteBuffer buf) {
        byte[] b = new byte[buf.remaining()];
        buf.get(b);
        return b;
    }

    @Test
    void encodesTheDocumentedLayout() {
        byte[] wire = bytes(new Frame(Frame.REQUEST, 7, "task.poll", "{}".getBytes(StandardCharsets.UTF_8)).encode());
        ByteBuffer b = ByteBuffer.wrap(wire);
        assertEquals(1 + 4 + 2 + 9 + 2, b.getInt());
        assertEquals(Frame.REQUEST, b.get());
        assertEquals(7, b.getInt());
        assertEquals(9, b.getShort());
        byte[] op = new byte[9];
        b.get(op);
        assertEquals("task.poll", new String(op, StandardCharsets.US_ASCII));
        assertEquals('{', b.get());
    }

    @Test
    void roundTripsAndEndsCleanly() throws Exception {
        Frame sent = new Frame(Frame.ERROR, 42, "", new byte[] {1, 2, 3});
        ReadableByteChannel in = channel(bytes(sent.encode()));
        Frame got = Frame.read(in);
        assertEquals(Frame.ERROR, got.type());
        assertEquals(42, got.id());
        assertEquals("", got.op());
        assertArrayEquals(new byte[] {1, 2, 3}, got.body());
        assertNull(Frame.read(in));
    }

    @Test
    void aTruncatedFrameIsAnError() {
        byte[] wire = bytes(new Frame(Frame.NOTICE, 0, "task.pause", new byte[10]).encode());
        byte[] cut = java.util.Arrays.copyOf(wire, wire.length - 3);
        assertThrows(EOFException.class, () -> Frame.read(channel(cut)));
    }

    @Test
    void binaryPrimitivesRoundTrip() {
        byte[] body = new BinaryWriter().string("tópic").i32(-1).i64(Long.MIN_VALUE).bytes(null).bytes(new byte[] {9}).u16(65535).toByteArray();
        BinaryReader r = new BinaryReader(body);
        assertEquals("tópic", r.string());
        assertEquals(-1, r.i32());
        assertEquals(Long.MIN_VALUE, r.i64());
        assertNull(r.bytes());
        assertArrayEquals(new byte[] {9}, r.bytes());
        assertEquals(65535, r.u16());
    }
}
