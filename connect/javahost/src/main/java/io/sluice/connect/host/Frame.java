package io.sluice.connect.host;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;

/**
 * One frame of the agent–host protocol (docs/plugins.md, "Frames"): a type, a request id, an
 * op name and a body, behind a big-endian u32 length.
 */
public record Frame(byte type, int id, String op, byte[] body) {

    /** A request, which gets exactly one reply or error reply with its id. */
    public static final byte REQUEST = 0;
    /** The answer to a request. */
    public static final byte REPLY = 1;
    /** A failed request: the body is {"message", "trace"}. */
    public static final byte ERROR = 2;
    /** A one-way message; its id is 0. */
    public static final byte NOTICE = 3;

    /** The largest frame the protocol allows, counted after the length field. */
    public static final int MAX_LENGTH = 64 << 20;

    /** Encodes the frame, length prefix included, ready for the socket. */
    public ByteBuffer encode() {
        byte[] opBytes = op.getBytes(StandardCharsets.US_ASCII);
        int length = 1 + 4 + 2 + opBytes.length + body.length;
        if (length > MAX_LENGTH) {
            throw new IllegalArgumentException("frame of " + length + " bytes exceeds the protocol's 64 MiB");
        }
        ByteBuffer buf = ByteBuffer.allocate(4 + length);
        buf.putInt(length).put(type).putInt(id).putShort((short) opBytes.length).put(opBytes).put(body);
        return buf.flip();
    }

    /**
     * Reads the next frame.
     *
     * @return the frame, or null when the channel ended cleanly between frames
     */
    public static Frame read(ReadableByteChannel in) throws IOException {
        ByteBuffer lengthBuf = ByteBuffer.allocate(4);
        if (!fill(in, lengthBuf, true)) {
            return null;
        }
        int length = lengthBuf.flip().getInt();
        if (length < 7 || length > MAX_LENGTH) {
            throw new IOException("bad frame length " + Integer.toUnsignedString(length));
        }
        ByteBuffer buf = ByteBuffer.allocate(length);
        fill(in, buf, false);
        buf.flip();
        byte type = buf.get();
        int id = buf.getInt();
        int opLength = Short.toUnsignedInt(buf.getShort());
        if (opLength > buf.remaining()) {
            throw new IOException("frame's op length " + opLength + " exceeds the frame");
        }
        byte[] opBytes = new byte[opLength];
        buf.get(opBytes);
        byte[] body = new byte[buf.remaining()];
        buf.get(body);
        return new Frame(type, id, new String(opBytes, StandardCharsets.US_ASCII), body);
    }

    /** Fills buf; false if the channel ended before any byte and that is allowed. */
    private static boolean fill(ReadableByteChannel in, ByteBuffer buf, boolean eofAllowedAtStart) throws IOException {
        while (buf.hasRemaining()) {
            if (in.read(buf) < 0) {
                if (eofAllowedAtStart && buf.position() == 0) {
                    return false;
                }
                throw new EOFException("connection closed in the middle of a frame");
            }
        }
        return true;
    }
}
