package io.sluice.connect.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host served over a real Unix socket to a fake agent, running Kafka's FileStream connectors
 * and transformations from a plugin.path.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostProtocolTest {
    private static final String SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector";
    private static final String SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector";
    private static final String STRING = "org.apache.kafka.connect.storage.StringConverter";

    @TempDir
    Path dir;
    private FakeAgent agent;

    @BeforeAll
    void startHost() throws Exception {
        agent = new FakeAgent(TestPlugins.catalog(), Files.createTempDirectory("sluice-host-test"));
    }

    @AfterAll
    void stopHost() throws Exception {
        agent.close();
    }

    private static Map<String, String> worker() {
        return Map.of("key.converter", STRING, "value.converter", STRING);
    }

    private static Map<String, Object> body(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    private Path lines(String name, String... lines) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, String.join("\n", lines) + "\n");
        return file;
    }

    private Map<String, String> sourceConfig(String name, Path file) {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("connector.class", SOURCE);
        c.put("name", name);
        c.put("file", file.toString());
        c.put("topic", "lines");
        return c;
    }

    /** Polls until the batches hold at least n records (FileStreamSourceTask may return few at a time). */
    private List<SourceBatch.Rec> pollAtLeast(String task, int n) throws Exception {
        List<SourceBatch.Rec> got = new ArrayList<>();
        for (int i = 0; i < 20 && got.size() < n; i++) {
            got.addAll(SourceBatch.decode(agent.okBody("task.poll", Json.bytes(body("id", task)))).records());
        }
        return got;
    }

    @Test
    void helloReportsKafkaVersion() throws Exception {
        JsonNode hello = agent.ok(Protocol.HOST_HELLO, Map.of("protocol", Protocol.VERSION));
        assertEquals("4.4.0", hello.path("kafka_version").asText());
        assertFalse(hello.path("version").asText().isEmpty());
        assertEquals(Protocol.VERSION, hello.path("protocol").asInt());
    }

    @Test
    void pluginsListOverTheSocket() throws Exception {
        JsonNode list = agent.ok("plugins.list", Map.of());
        boolean found = false;
        for (JsonNode p : list) {
            found |= p.path("class").asText().equals(SINK) && p.path("type").asText().equals("sink");
        }
        assertTrue(found, list.toString());
    }

    @Test
    void validateReportsTheBadKey() throws Exception {
        Map<String, String> config = sourceConfig("v", dir.resolve("in.txt"));
        config.put("batch.size", "lots");
        JsonNode configs = agent.ok("connector.validate", body("config", config)).path("configs");
        Map<String, JsonNode> byName = new HashMap<>();
        configs.forEach(c -> byName.put(c.path("definition").path("name").asText(), c));
        JsonNode batch = byName.get("batch.size");
        assertNotNull(batch, configs.toString());
        assertEquals("INT", batch.path("definition").path("type").asText());
        assertTrue(batch.path("value").path("errors").get(0).asText().contains("batch.size"), batch.toString());
        assertEquals(0, byName.get("topic").path("value").path("errors").size());
        // Only the connector's own keys: the worker-level ones are the agent's.
        assertFalse(byName.containsKey("tasks.max"));
    }

    /** connector.validate's entries by key name. */
    private Map<String, JsonNode> validate(Map<String, String> config) throws Exception {
        JsonNode configs = agent.ok("connector.validate", body("config", config)).path("configs");
        Map<String, JsonNode> byName = new HashMap<>();
        configs.forEach(c -> byName.put(c.path("value").path("name").asText(), c));
        return byName;
    }

    private static List<String> errors(Map<String, JsonNode> byName, String key) {
        JsonNode entry = byName.get(key);
        assertNotNull(entry, key + " missing from " + byName.keySet());
        List<String> out = new ArrayList<>();
        entry.path("value").path("errors").forEach(e -> out.add(e.asText()));
        return out;
    }

    @Test
    void validateChecksTransformsPredicatesAndConvertersWithTheHostsClasses() throws Exception {
        Map<String, String> config = sourceConfig("t", dir.resolve("in.txt"));
        config.put("transforms", "ok,vk,nope");
        config.put("transforms.ok.type", "org.apache.kafka.connect.transforms.InsertField$Value");
        config.put("transforms.ok.static.field", "origin");
        config.put("transforms.ok.static.value", "file");
        config.put("transforms.ok.predicate", "isLines");
        config.put("transforms.vk.type", "org.apache.kafka.connect.transforms.ValueToKey");
        config.put("transforms.nope.type", "org.example.NoSuchTransform");
        config.put("predicates", "isLines");
        config.put("predicates.isLines.type", "org.apache.kafka.connect.transforms.predicates.TopicNameMatches");
        config.put("predicates.isLines.pattern", "lin.*");
        config.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        config.put("value.converter.schemas.enable", "sometimes");
        Map<String, JsonNode> byName = validate(config);

        assertEquals(List.of(), errors(byName, "transforms.ok.type"));
        assertEquals(List.of(), errors(byName, "transforms.ok.static.field"));
        assertEquals(List.of(), errors(byName, "predicates.isLines.pattern"));
        // ValueToKey's own required key, embedded under its alias.
        assertTrue(errors(byName, "transforms.vk.fields").contains(
                "Missing required configuration \"transforms.vk.fields\" which has no default value."),
                byName.get("transforms.vk.fields").toString());
        assertTrue(errors(byName, "transforms.nope.type").get(0).contains("org.example.NoSuchTransform"),
                byName.get("transforms.nope.type").toString());
        assertEquals(List.of(), errors(byName, "value.converter"));
        assertTrue(errors(byName, "value.converter.schemas.enable").get(0).contains("sometimes"),
                byName.get("value.converter.schemas.enable").toString());
        assertEquals("value.converter.schemas.enable",
                byName.get("value.converter.schemas.enable").path("definition").path("name").asText());
        // Keys it has no plugin class for stay the coordinator's.
        assertFalse(byName.containsKey("key.converter"));
        assertFalse(byName.containsKey("transforms"));
    }

    @Test
    void validateReportsAConverterItCannotFind() throws Exception {
        Map<String, String> config = sourceConfig("u", dir.resolve("in.txt"));
        config.put("key.converter", "org.example.NoSuchConverter");
        Map<String, JsonNode> byName = validate(config);
        assertTrue(errors(byName, "key.converter").get(0).contains("org.example.NoSuchConverter"), byName.get("key.converter").toString());
    }

    @Test
    void alterOffsetsHandsTheConnectorLongs() throws Exception {
        // The REST API's 30 arrives as an int; FileStreamSourceConnector accepts only a Long, as
        // a Kafka Connect worker hands it after normalizing the offsets.
        Map<String, String> config = sourceConfig("a", dir.resolve("in.txt"));
        JsonNode reply = agent.ok("connector.alter_offsets", body("class", SOURCE, "config", config, "offsets",
                List.of(body("partition", Map.of("filename", dir.resolve("in.txt").toString()), "offset", Map.of("position", 30)))));
        assertTrue(reply.path("definite").asBoolean(), reply.toString());
    }

    @Test
    void configDefListsDefinitions() throws Exception {
        JsonNode configs = agent.ok("connector.config_def", body("class", SINK)).path("configs");
        JsonNode file = null;
        for (JsonNode c : configs) {
            if (c.path("name").asText().equals("file")) {
                file = c;
            }
        }
        assertNotNull(file, configs.toString());
        assertEquals("STRING", file.path("type").asText());
        // Kafka Connect 4.4's ConfigKeyInfo says order_in_group, not the older "order"
        // (docs/conformance.md records the same of Kafka's REST API).
        for (String field : List.of("name", "type", "required", "default_value", "importance", "documentation",
                "group", "width", "display_name", "dependents", "order_in_group")) {
            assertTrue(file.has(field), field + " missing from " + file);
        }
        assertEquals("HIGH", file.path("importance").asText());
    }

    @Test
    void connectorLifecycle() throws Exception {
        Path file = lines("c.txt", "x");
        agent.ok("connector.start", body("name", "c", "config", sourceConfig("c", file)));
        JsonNode configs = agent.ok("connector.task_configs", body("name", "c", "max_tasks", 3)).path("configs");
        assertEquals(1, configs.size(), configs.toString());
        assertEquals(file.toString(), configs.get(0).path("file").asText());
        assertEquals("org.apache.kafka.connect.file.FileStreamSourceTask", configs.get(0).path("task.class").asText());
        agent.ok("connector.stop", body("name", "c"));
        JsonNode error = agent.error("connector.task_configs", body("name", "c", "max_tasks", 1));
        assertTrue(error.path("message").asText().contains("not running"), error.toString());
        assertTrue(error.path("trace").asText().contains("Connectors"), error.toString());
    }

    @Test
    void startFailureIsAnErrorWithTheConnectorsMessage() throws Exception {
        Map<String, String> config = sourceConfig("bad", dir.resolve("x.txt"));
        config.put("topic", "");
        JsonNode error = agent.error("connector.start", body("name", "bad", "config", config));
        assertFalse(error.path("message").asText().isEmpty(), error.toString());
        assertTrue(error.path("trace").asText().contains("FileStreamSourceConnector"), error.toString());
    }

    @Test
    void sourceTaskReadsLinesWithOffsets() throws Exception {
        Path file = lines("src.txt", "alpha", "beta", "gamma");
        Map<String, String> config = sourceConfig("src", file);
        JsonNode started = agent.ok("task.start", body("id", "src-0", "connector_config", config,
                "task_config", Map.of("file", file.toString(), "topic", "lines"), "worker", worker()));
        assertEquals("source", started.path("kind").asText());

        List<SourceBatch.Rec> records = pollAtLeast("src-0", 3);
        assertEquals(List.of("alpha", "beta", "gamma"), records.stream().map(SourceBatch.Rec::valueText).toList());
        SourceBatch.Rec first = records.get(0);
        assertEquals("lines", first.topic());
        assertEquals(-1, first.partition());
        assertEquals(file.toString(), first.sourcePartition().path("filename").asText());
        assertEquals(6, first.sourceOffset().path("position").asLong()); // after "alpha\n"
        // FileStreamSourceTask asked the agent where to start, through its OffsetStorageReader.
        assertTrue(agent.offsetReads.stream().anyMatch(read -> read.path("id").asText().equals("src-0")
                && read.path("partitions").get(0).path("filename").asText().equals(file.toString())));

        List<Map<String, Object>> acks = new ArrayList<>();
        for (SourceBatch.Rec r : records) {
            acks.add(body("seq", r.seq(), "topic", "lines", "partition", 0, "offset", r.seq()));
        }
        agent.ok("task.commit_records", body("id", "src-0", "records", acks));
        // An acknowledged record is forgotten: acknowledging it again is an error.
        agent.error("task.commit_records", body("id", "src-0", "records", List.of(acks.get(0))));
        agent.ok("task.commit", body("id", "src-0"));
        agent.ok("task.stop", body("id", "src-0"));
        agent.error("task.poll", body("id", "src-0"));
    }

    /**
     * A quick restart: a start, a stop sent while the host still builds the task, and a start again.
     * The host runs them in order, so the stop stops the first task (rather than finding nothing
     * and leaving it to run) and the second start does not find it running.
     */
    @Test
    void aStopDuringItsStartStopsThatTask() throws Exception {
        Map<String, String> config = Map.of("connector.class", ProbeSourceConnector.class.getName(), "name", "quick");
        byte[] start = Json.bytes(body("id", "quick-0", "connector_config", config,
                "task_config", Map.of("task.class", ProbeSourceConnector.ProbeSourceTask.class.getName()), "worker", worker()));
        ProbeSourceConnector.ProbeSourceTask.buildMillis = 500;
        try {
            CompletableFuture<Frame> first = agent.send("task.start", start);
            CompletableFuture<Frame> stop = agent.send("task.stop", Json.bytes(body("id", "quick-0")));
            CompletableFuture<Frame> second = agent.send("task.start", start);
            for (CompletableFuture<Frame> reply : List.of(first, stop, second)) {
                Frame f = reply.get(30, TimeUnit.SECONDS);
                assertEquals(Frame.REPLY, f.type(), new String(f.body(), StandardCharsets.UTF_8));
            }
        } finally {
            ProbeSourceConnector.ProbeSourceTask.buildMillis = 0;
        }
        agent.ok("task.stop", body("id", "quick-0"));
        agent.error("task.poll", body("id", "quick-0"));
    }

    @Test
    void sourceTaskResumesFromTheAgentsOffset() throws Exception {
        Path file = lines("resume.txt", "one", "two");
        agent.offsets = partition -> Map.of("position", 4L); // after "one\n"
        try {
            agent.ok("task.start", body("id", "resume-0", "connector_config", sourceConfig("resume", file),
                    "task_config", Map.of("file", file.toString(), "topic", "lines"), "worker", worker()));
            List<SourceBatch.Rec> records = pollAtLeast("resume-0", 1);
            assertEquals("two", records.get(0).valueText());
            agent.ok("task.stop", body("id", "resume-0"));
        } finally {
            agent.offsets = partition -> null;
        }
    }

    @Test
    void transformsWithPredicateAndConnectorConverter() throws Exception {
        Path file = lines("tx.txt", "hello");
        Map<String, String> config = sourceConfig("tx", file);
        config.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        config.put("value.converter.schemas.enable", "false");
        config.put("transforms", "hoist,insert");
        config.put("transforms.hoist.type", "org.apache.kafka.connect.transforms.HoistField$Value");
        config.put("transforms.hoist.field", "line");
        config.put("transforms.insert.type", "org.apache.kafka.connect.transforms.InsertField$Value");
        config.put("transforms.insert.static.field", "origin");
        config.put("transforms.insert.static.value", "file");
        config.put("transforms.insert.predicate", "onLines");
        config.put("predicates", "onLines");
        config.put("predicates.onLines.type", "org.apache.kafka.connect.transforms.predicates.TopicNameMatches");
        config.put("predicates.onLines.pattern", "lines");
        agent.ok("task.start", body("id", "tx-0", "connector_config", config,
                "task_config", Map.of("file", file.toString(), "topic", "lines"), "worker", worker()));
        SourceBatch.Rec record = pollAtLeast("tx-0", 1).get(0);
        JsonNode value = Json.MAPPER.readTree(record.value());
        assertEquals("hello", value.path("line").asText(), value.toString());
        assertEquals("file", value.path("origin").asText(), value.toString());
        agent.ok("task.stop", body("id", "tx-0"));
    }

    @Test
    void errorsToleranceAllSkipsAFailingTransformation() throws Exception {
        Path file = lines("tol.txt", "a", "b");
        Map<String, String> config = sourceConfig("tol", file);
        // InsertField$Value needs a Struct or a Map; FileStream's values are strings.
        config.put("transforms", "insert");
        config.put("transforms.insert.type", "org.apache.kafka.connect.transforms.InsertField$Value");
        config.put("transforms.insert.static.field", "origin");
        config.put("transforms.insert.static.value", "file");
        config.put("errors.tolerance", "all");
        agent.ok("task.start", body("id", "tol-0", "connector_config", config,
                "task_config", Map.of("file", file.toString(), "topic", "lines"), "worker", worker()));
        // Skipped records are not sent; their positions are, as Kafka Connect commits a skipped
        // record's offset.
        List<SourceBatch.Rec> skipped = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            skipped.addAll(SourceBatch.decode(agent.okBody("task.poll", Json.bytes(body("id", "tol-0")))).records());
        }
        assertEquals(2, skipped.size());
        assertTrue(skipped.stream().allMatch(r -> r.flags() == SourceTaskRunner.FLAG_DROPPED && r.topic() == null));
        assertEquals(4, skipped.get(1).sourceOffset().path("position").asLong()); // after "a\nb\n"
        agent.ok("task.stop", body("id", "tol-0"));

        config.put("errors.tolerance", "none");
        config.put("name", "strict");
        agent.ok("task.start", body("id", "strict-0", "connector_config", config,
                "task_config", Map.of("file", file.toString(), "topic", "lines"), "worker", worker()));
        JsonNode error = null;
        for (int i = 0; i < 5 && error == null; i++) {
            Frame reply = agent.call("task.poll", Json.bytes(body("id", "strict-0")));
            if (reply.type() == Frame.ERROR) {
                error = Json.MAPPER.readTree(reply.body());
            }
        }
        assertNotNull(error, "a failing transformation with errors.tolerance=none must fail the poll");
        assertEquals("Tolerance exceeded in error handler", error.path("message").asText());
        assertTrue(error.path("trace").asText().contains("InsertField"), error.toString());
        agent.ok("task.stop", body("id", "strict-0"));
    }

    @Test
    void sinkTaskWritesPutRecords() throws Exception {
        Path out = dir.resolve("sink-out.txt");
        Map<String, String> config = new LinkedHashMap<>();
        config.put("connector.class", SINK);
        config.put("name", "snk");
        config.put("file", out.toString());
        config.put("topics", "in");
        JsonNode started = agent.ok("task.start", body("id", "snk-0", "connector_config", config,
                "task_config", Map.of("file", out.toString(), "topics", "in"), "worker", worker()));
        assertEquals("sink", started.path("kind").asText());
        List<Map<String, Object>> partitions = List.of(body("topic", "in", "partition", 0));
        agent.ok("task.open", body("id", "snk-0", "partitions", partitions));

        BinaryWriter batch = new BinaryWriter().string("snk-0").i32(2);
        String[] values = {"first", "second"};
        for (int i = 0; i < values.length; i++) {
            batch.string("in").i32(0).i64(10 + i).i64(1_700_000_000_000L).u8(1)
                    .bytes(null).bytes(values[i].getBytes(StandardCharsets.UTF_8))
                    .u16(1).string("h").bytes("v".getBytes(StandardCharsets.UTF_8));
        }
        agent.okBody("task.put", batch.toByteArray());

        JsonNode committed = agent.ok("task.pre_commit", body("id", "snk-0",
                "offsets", List.of(body("topic", "in", "partition", 0, "offset", 12)))).path("offsets");
        assertEquals(1, committed.size(), committed.toString());
        assertEquals(12, committed.get(0).path("offset").asLong());
        // FileStreamSinkTask's preCommit flushes the file.
        assertEquals(List.of("first", "second"), Files.readAllLines(out));

        agent.ok("task.close", body("id", "snk-0", "partitions", partitions));
        agent.ok("task.stop", body("id", "snk-0"));
    }

    @Test
    void unknownOpIsAnError() throws Exception {
        JsonNode error = agent.error("task.frobnicate", Map.of());
        assertTrue(error.path("message").asText().contains("task.frobnicate"));
    }
}
