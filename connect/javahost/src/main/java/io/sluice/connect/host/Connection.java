package io.sluice.connect.host;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host's end of the agent's socket: one reader thread (the caller of {@link #serve}) that
 * hands requests to a {@link RequestHandler} and completes the host's own pending requests with
 * their replies; writes from any thread, one frame at a time.
 */
public final class Connection {
    private static final Logger log = LoggerFactory.getLogger(Connection.class);

    /** Handles one request from the agent; the future's value is the reply body. */
    public interface RequestHandler {
        CompletableFuture<byte[]> handle(Frame request);
    }

    private final ByteChannel channel;
    private final Object writeLock = new Object();
    private final AtomicInteger nextId = new AtomicInteger(1);
    private final Map<Integer, CompletableFuture<Frame>> pending = new ConcurrentHashMap<>();
    private volatile boolean closed;

    public Connection(ByteChannel channel) {
        this.channel = channel;
    }

    /**
     * Reads frames until the agent closes the socket, then fails the host's pending requests.
     * Handlers must not block this thread: they answer through their futures.
     */
    public void serve(RequestHandler handler) throws IOException {
        try {
            Frame frame;
            while ((frame = Frame.read(channel)) != null) {
                switch (frame.type()) {
                    case Frame.REQUEST -> dispatch(handler, frame);
                    case Frame.REPLY, Frame.ERROR -> complete(frame);
                    case Frame.NOTICE -> log.warn("ignoring notice {} from the agent: the protocol has none", frame.op());
                    default -> throw new IOException("unknown frame type " + frame.type());
                }
            }
        } finally {
            closed = true;
            IOException gone = new IOException("the agent closed the connection");
            pending.values().forEach(f -> f.completeExceptionally(gone));
            pending.clear();
        }
    }

    private void dispatch(RequestHandler handler, Frame request) {
        CompletableFuture<byte[]> reply;
        try {
            reply = handler.handle(request);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((body, error) -> {
            if (error != null) {
                Throwable cause = Errors.unwrap(error);
                log.debug("{} failed", request.op(), cause);
                send(new Frame(Frame.ERROR, request.id(), "", Errors.body(cause)));
            } else {
                send(new Frame(Frame.REPLY, request.id(), "", body));
            }
        });
    }

    private void complete(Frame reply) {
        CompletableFuture<Frame> waiting = pending.remove(reply.id());
        if (waiting == null) {
            log.warn("reply to request {} that the host is not waiting for", reply.id());
            return;
        }
        waiting.complete(reply);
    }

    /**
     * Sends a request to the agent; the future completes with the reply frame (its type tells a
     * reply from an error reply) or fails when the connection ends.
     */
    public CompletableFuture<Frame> request(String op, byte[] body) {
        int id = nextId.getAndUpdate(i -> i == Integer.MAX_VALUE ? 1 : i + 1);
        CompletableFuture<Frame> reply = new CompletableFuture<>();
        pending.put(id, reply);
        if (closed) {
            pending.remove(id);
            reply.completeExceptionally(new IOException("the connection to the agent is closed"));
            return reply;
        }
        if (!send(new Frame(Frame.REQUEST, id, op, body))) {
            pending.remove(id);
            reply.completeExceptionally(new IOException("could not send " + op + " to the agent"));
        }
        return reply;
    }

    /** Sends a notice; a notice lost with the connection is only logged. */
    public void notice(String op, byte[] body) {
        send(new Frame(Frame.NOTICE, 0, op, body));
    }

    /** Writes one whole frame; false if the socket failed. */
    private boolean send(Frame frame) {
        ByteBuffer buf;
        try {
            buf = frame.encode();
        } catch (IllegalArgumentException e) {
            // Too big a reply becomes an error reply rather than a broken stream.
            if (frame.type() == Frame.REPLY) {
                return send(new Frame(Frame.ERROR, frame.id(), "", Errors.body(e)));
            }
            log.error("dropping frame {}", frame.op(), e);
            return false;
        }
        synchronized (writeLock) {
            try {
                while (buf.hasRemaining()) {
                    channel.write(buf);
                }
                return true;
            } catch (IOException e) {
                if (!closed) {
                    log.error("writing to the agent failed", e);
                }
                return false;
            }
        }
    }
}
