package io.sluice.connect.host;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The agent's side of the protocol, for tests: listens on a Unix socket, runs a {@link Host} that
 * connects to it, sends requests and collects the host's notices; answers the host's
 * offsets.read with {@link #offsets} and keeps its task.report requests in {@link #reports}.
 */
final class FakeAgent implements AutoCloseable {
    private final Path socketPath;
    private final ServerSocketChannel server;
    private final SocketChannel channel;
    private final Thread hostThread;
    private final Thread readerThread;
    private final AtomicInteger nextId = new AtomicInteger(1);
    private final Map<Integer, CompletableFuture<Frame>> pending = new ConcurrentHashMap<>();
    final BlockingQueue<Frame> notices = new LinkedBlockingQueue<>();
    final BlockingQueue<JsonNode> offsetReads = new LinkedBlockingQueue<>();
    /** The host's task.report requests, each answered as written. */
    final BlockingQueue<JsonNode> reports = new LinkedBlockingQueue<>();
    /** Answers one asked-for source partition with its offset (null: none). */
    volatile Function<JsonNode, Object> offsets = partition -> null;

    FakeAgent(PluginCatalog catalog, Path dir) throws IOException {
        socketPath = dir.resolve("host.sock");
        Files.deleteIfExists(socketPath);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socketPath));
        hostThread = new Thread(() -> {
            try (SocketChannel client = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                client.connect(UnixDomainSocketAddress.of(socketPath));
                new Host(catalog, new Connection(client)).serve();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, "test-host");
        hostThread.setDaemon(true);
        hostThread.start();
        channel = server.accept();
        readerThread = new Thread(this::read, "test-agent-reader");
        readerThread.setDaemon(true);
        readerThread.start();
    }

    private void read() {
        try {
            Frame frame;
            while ((frame = Frame.read(channel)) != null) {
                switch (frame.type()) {
                    case Frame.REPLY, Frame.ERROR -> pending.remove(frame.id()).complete(frame);
                    case Frame.NOTICE -> notices.add(frame);
                    case Frame.REQUEST -> answer(frame);
                    default -> throw new IOException("bad frame type " + frame.type());
                }
            }
        } catch (IOException e) {
            pending.values().forEach(f -> f.completeExceptionally(e));
        }
    }

    private void answer(Frame request) throws IOException {
        if (request.op().equals("task.report")) {
            reports.add(Json.object(request.body()));
            write(new Frame(Frame.REPLY, request.id(), "", Json.bytes(Map.of())));
            return;
        }
        if (!request.op().equals("offsets.read")) {
            write(new Frame(Frame.ERROR, request.id(), "", Json.bytes(Map.of("message", "unexpected " + request.op(), "trace", ""))));
            return;
        }
        JsonNode body = Json.object(request.body());
        offsetReads.add(body);
        java.util.List<Object> answers = new java.util.ArrayList<>();
        for (JsonNode partition : body.path("partitions")) {
            answers.add(offsets.apply(partition));
        }
        write(new Frame(Frame.REPLY, request.id(), "", Json.bytes(Map.of("offsets", answers))));
    }

    private synchronized void write(Frame frame) throws IOException {
        ByteBuffer buf = frame.encode();
        while (buf.hasRemaining()) {
            channel.write(buf);
        }
    }

    /** Sends a request and waits for its reply or error reply. */
    Frame call(String op, byte[] body) throws Exception {
        return send(op, body).get(30, TimeUnit.SECONDS);
    }

    /** Sends a request without waiting: its reply or error reply, when it comes. */
    CompletableFuture<Frame> send(String op, byte[] body) throws IOException {
        int id = nextId.getAndIncrement();
        CompletableFuture<Frame> reply = new CompletableFuture<>();
        pending.put(id, reply);
        write(new Frame(Frame.REQUEST, id, op, body));
        return reply;
    }

    /** Sends a JSON request; fails the test unless the reply is a reply. */
    JsonNode ok(String op, Object body) throws Exception {
        return Json.MAPPER.readTree(okBody(op, Json.bytes(body)));
    }

    /** Sends a request; fails the test unless the reply is a reply; the reply's raw body. */
    byte[] okBody(String op, byte[] body) throws Exception {
        Frame reply = call(op, body);
        if (reply.type() != Frame.REPLY) {
            throw new AssertionError(op + " failed: " + new String(reply.body(), java.nio.charset.StandardCharsets.UTF_8));
        }
        return reply.body();
    }

    /** Sends a JSON request that must fail; the error reply's body. */
    JsonNode error(String op, Object body) throws Exception {
        Frame reply = call(op, Json.bytes(body));
        if (reply.type() != Frame.ERROR) {
            throw new AssertionError(op + " succeeded but should have failed");
        }
        return Json.MAPPER.readTree(reply.body());
    }

    @Override
    public void close() throws Exception {
        channel.close();
        hostThread.join(10_000);
        server.close();
        Files.deleteIfExists(socketPath);
    }
}
