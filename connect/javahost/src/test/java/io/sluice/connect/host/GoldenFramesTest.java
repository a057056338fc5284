package io.sluice.connect.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/**
 * Decodes the agent–host protocol's golden frames (agent/internal/javahost/testdata/frames, one
 * file per request, reply, notice and error reply: the exact bytes on the socket), which the Go
 * tests decode too, so that both sides read every body the same way.
 */
class GoldenFramesTest {

    /** The frames directory: the surefire property, else relative to the Maven module. */
    private static Path dir() {
        String configured = System.getProperty("golden.frames");
        Path path = configured != null ? Path.of(configured) : Path.of("../../agent/internal/javahost/testdata/frames");
        assertTrue(Files.isDirectory(path), "no golden frames at " + path.toAbsolutePath());
        return path;
    }

    private static byte[] file(String name) throws IOException {
        return Files.readAllBytes(dir().resolve(name));
    }

    /** Reads the one frame a file holds. */
    private static Frame frame(byte[] bytes) throws IOException {
        ReadableByteChannel in = Channels.newChannel(new ByteArrayInputStream(bytes));
        Frame f = Frame.read(in);
        assertNotNull(f);
        assertNull(Frame.read(in), "bytes after the frame");
        return f;
    }

    private static Frame frame(String name) throws IOException {
        return frame(file(name));
    }

    private static ObjectNode json(String name) throws IOException {
        return Json.object(frame(name).body());
    }

    private static byte[] bytes(ByteBuffer buf) {
        byte[] b = new byte[buf.remaining()];
        buf.get(b);
        return b;
    }

    /** Binary bodies, which are not JSON. */
    private static boolean binary(String name) {
        return name.equals("request.task.put.frame") || name.equals("reply.task.poll.frame");
    }

    @Test
    void everyFileIsOneFrameOfItsNameAndReencodesToItsBytes() throws IOException {
        List<String> names = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir())) {
            files.forEach(p -> names.add(p.getFileName().toString()));
        }
        assertFalse(names.isEmpty());
        for (String name : names) {
            byte[] bytes = file(name);
            Frame f = frame(bytes);
            assertTrue(name.endsWith(".frame"), name);
            String[] parts = name.substring(0, name.length() - ".frame".length()).split("\\.", 2);
            String op = parts.length == 2 ? parts[1] : "";
            switch (parts[0]) {
                case "request" -> {
                    assertEquals(Frame.REQUEST, f.type(), name);
                    assertEquals(op, f.op(), name);
                }
                case "notice" -> {
                    assertEquals(Frame.NOTICE, f.type(), name);
                    assertEquals(op, f.op(), name);
                    assertEquals(0, f.id(), name);
                }
                case "reply" -> {
                    assertEquals(Frame.REPLY, f.type(), name);
                    assertEquals("", f.op(), name);
                }
                case "error" -> {
                    assertEquals(Frame.ERROR, f.type(), name);
                    assertEquals("", f.op(), name);
                }
                default -> throw new AssertionError("unexpected golden frame " + name);
            }
            byte[] body = f.body();
            if (!binary(name)) {
                // Jackson decodes the body and writes the same bytes Go wrote.
                JsonNode node = Json.MAPPER.readTree(body);
                body = Json.bytes(node);
                assertEquals(new String(f.body(), StandardCharsets.UTF_8), new String(body, StandardCharsets.UTF_8), name);
            }
            assertArrayEquals(bytes, bytes(new Frame(f.type(), f.id(), f.op(), body).encode()), name);
        }
    }

    @Test
    void everyOpHasItsGoldenFrame() {
        for (String op : Protocol.AGENT_REQUESTS) {
            assertTrue(Files.exists(dir().resolve("request." + op + ".frame")), op);
        }
        for (String op : Protocol.HOST_REQUESTS) {
            assertTrue(Files.exists(dir().resolve("request." + op + ".frame")), op);
        }
        for (String op : Protocol.NOTICES) {
            assertTrue(Files.exists(dir().resolve("notice." + op + ".frame")), op);
        }
    }

    @Test
    void helloStatesTheProtocolVersionOnBothSides() throws Exception {
        assertEquals(Protocol.VERSION, json("request.host.hello.frame").path("protocol").asInt());
        ObjectNode reply = json("reply.host.hello.frame");
        assertEquals(Protocol.VERSION, reply.path("protocol").asInt());
        assertTrue(reply.hasNonNull("version") && reply.hasNonNull("kafka_version"));
        // The golden request is taken; its reply states this host's version.
        ObjectNode answered = Json.object(Host.hello(json("request.host.hello.frame")).get());
        assertEquals(Protocol.VERSION, answered.path("protocol").asInt());
        assertEquals(Host.VERSION, answered.path("version").asText());
    }

    @Test
    void helloRefusesAnotherProtocolVersionNamingBoth() {
        ObjectNode other = Json.object("{\"protocol\":2}".getBytes(StandardCharsets.UTF_8));
        for (ObjectNode request : List.of(other, Json.object(new byte[0]))) {
            CompletableFuture<byte[]> reply = Host.hello(request);
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, reply::get);
            String message = e.getCause().getMessage();
            int stated = request.path("protocol").asInt(0);
            assertTrue(message.contains("the agent speaks connector host protocol " + stated), message);
            assertTrue(message.contains("this connector host speaks " + Protocol.VERSION), message);
        }
    }

    @Test
    void requestBodiesHaveTheFieldsTheHostReads() throws IOException {
        ObjectNode start = json("request.task.start.frame");
        assertEquals("orders-0", Json.text(start, "id"));
        assertEquals("io.example.JdbcSourceTask", Json.stringMap(start, "task_config").get("task.class"));
        assertEquals("disabled", Json.stringMap(start, "worker").get("exactly.once.source.support"));
        assertEquals("io.example.JdbcSourceConnector", Json.stringMap(start, "connector_config").get("connector.class"));
        assertEquals(2, json("request.connector.task_configs.frame").path("max_tasks").asInt());
        ObjectNode configDef = json("request.connector.config_def.frame");
        assertEquals("io.example.JdbcSourceConnector", Json.text(configDef, "class"));
        assertEquals("10.7.4", Json.text(configDef, "version"));
        ObjectNode alter = json("request.connector.alter_offsets.frame");
        assertEquals("orders", alter.path("offsets").get(0).path("partition").path("table").asText());
        assertTrue(alter.path("offsets").get(1).path("offset").isNull());
        JsonNode records = json("request.task.commit_records.frame").path("records");
        assertEquals(3, records.get(1).path("seq").asLong());
        assertEquals(42, json("request.task.pre_commit.frame").path("offsets").get(0).path("offset").asLong());
        assertEquals(1, json("request.task.close.frame").path("partitions").size());
    }

    @Test
    void hostMessagesHaveTheFieldsTheAgentReads() throws IOException {
        ObjectNode report = json("request.task.report.frame");
        assertEquals("s3-1", Json.text(report, "id"));
        assertEquals("TASK_PUT", Json.text(report, "stage"));
        assertEquals("bm90IGpzb24=", report.path("record").path("value").asText()); // base64, as Jackson writes byte[]
        assertEquals("orders", Json.text(json("notice.connector.reconfigure.frame"), "name"));
        assertEquals("table orders dropped", Json.text(json("notice.connector.error.frame"), "message"));
        assertEquals(1, json("notice.task.pause.frame").path("partitions").get(0).path("partition").asInt());
        ObjectNode error = json("error.frame");
        assertEquals("Connection refused", Json.text(error, "message"));
        assertTrue(error.path("retriable").asBoolean());
        assertTrue(Json.text(error, "trace").startsWith("org.apache.kafka.connect.errors.RetriableException"));
    }

    @Test
    void sinkBatchDecodes() throws IOException {
        BinaryReader in = new BinaryReader(frame("request.task.put.frame").body());
        assertEquals("s3-1", in.string());
        assertEquals(2, in.u32());
        RawRecord first = SinkTaskRunner.read(in);
        assertEquals("orders", first.topic());
        assertEquals(0, first.partition());
        assertEquals(42, first.offset());
        assertEquals(1764979200000L, first.timestamp());
        assertEquals(TimestampType.CREATE_TIME, first.timestampType());
        assertArrayEquals("k1".getBytes(StandardCharsets.UTF_8), first.key());
        assertArrayEquals("v".getBytes(StandardCharsets.UTF_8), first.headers().lastHeader("h").value());
        assertNull(first.headers().lastHeader("none").value());
        RawRecord second = SinkTaskRunner.read(in);
        assertEquals(7, second.offset());
        assertNull(second.timestamp());
        assertNull(second.key());
        assertNull(second.value());
    }

    @Test
    void sourceBatchDecodes() throws IOException {
        SourceBatch batch = SourceBatch.decode(frame("reply.task.poll.frame").body());
        assertEquals(3, batch.records().size());
        assertEquals(0, batch.flags());
        SourceBatch.Rec first = batch.records().get(0);
        assertEquals("shop-orders", first.topic());
        assertEquals(2, first.partition());
        assertEquals(1764979200000L, first.timestamp());
        assertEquals("{\"id\":1200,\"total\":9.5}", first.valueText());
        assertArrayEquals("abc".getBytes(StandardCharsets.UTF_8), first.headers().get("trace"));
        assertEquals(1200, first.sourceOffset().path("id").asLong());
        assertEquals(1, first.seq());
        SourceBatch.Rec dropped = batch.records().get(1);
        assertEquals(SourceTaskRunner.FLAG_DROPPED, dropped.flags());
        assertEquals(1201, dropped.sourceOffset().path("id").asLong());
        SourceBatch.Rec last = batch.records().get(2);
        assertEquals(-1, last.partition());
        assertEquals(Long.MIN_VALUE, last.timestamp());
        assertNull(last.key());
        assertEquals(SourceTaskRunner.FLAG_COMMIT_AFTER, last.flags());
    }
}
