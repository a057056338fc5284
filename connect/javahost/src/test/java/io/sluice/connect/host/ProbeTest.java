package io.sluice.connect.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.sink.SinkRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The contexts' notices, sink conversion and alter_offsets, with {@link ProbeSinkConnector}. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProbeTest {
    private static final String PROBE = ProbeSinkConnector.class.getName();
    private FakeAgent agent;

    @BeforeAll
    void startHost() throws Exception {
        agent = new FakeAgent(TestPlugins.catalog(), Files.createTempDirectory("sluice-probe-test"));
    }

    @AfterAll
    void stopHost() throws Exception {
        agent.close();
    }

    private static Map<String, Object> body(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    private Frame notice(String op) throws InterruptedException {
        for (;;) {
            Frame f = agent.notices.poll(10, TimeUnit.SECONDS);
            assertNotNull(f, "no " + op + " notice");
            if (f.op().equals(op)) {
                return f;
            }
        }
    }

    private static byte[] putBatch(String task, String... values) {
        BinaryWriter w = new BinaryWriter().string(task).i32(values.length);
        for (int i = 0; i < values.length; i++) {
            w.string("in").i32(0).i64(i).i64(Long.MIN_VALUE).u8(0)
                    .bytes("k".getBytes(StandardCharsets.UTF_8)).bytes(values[i].getBytes(StandardCharsets.UTF_8))
                    .u16(1).string("n").bytes("42".getBytes(StandardCharsets.UTF_8));
        }
        return w.toByteArray();
    }

    @Test
    void connectorContextBecomesNotices() throws Exception {
        Map<String, String> config = Map.of("connector.class", PROBE, "name", "ctx", "topics", "in",
                "probe.reconfigure", "true", "probe.raise", "true", "probe.tasks", "2");
        agent.ok("connector.start", body("name", "ctx", "config", config));
        assertEquals("ctx", Json.object(notice("connector.reconfigure").body()).path("name").asText());
        JsonNode error = Json.object(notice("connector.error").body());
        assertEquals("the probe failed on purpose", error.path("message").asText());
        assertTrue(error.path("trace").asText().contains("ProbeSinkConnector"));

        JsonNode configs = agent.ok("connector.task_configs", body("name", "ctx", "max_tasks", 2)).path("configs");
        assertEquals(2, configs.size());
        assertEquals("in", configs.get(1).path("topics").asText()); // a sink's topics, as the worker copies them
        assertEquals(ProbeSinkConnector.ProbeTask.class.getName(), configs.get(1).path("task.class").asText());
        JsonNode tooMany = agent.error("connector.task_configs", body("name", "ctx", "max_tasks", 1));
        assertTrue(tooMany.path("message").asText().contains("greater than 1"), tooMany.toString());
        agent.ok("connector.stop", body("name", "ctx"));
        agent.ok("connector.stop", body("name", "ctx")); // stopping one not started is no error
    }

    @Test
    void sinkTaskContextAndConversion() throws Exception {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("connector.class", PROBE);
        config.put("name", "probe");
        config.put("topics", "in");
        config.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        config.put("value.converter", "org.apache.kafka.connect.storage.StringConverter");
        config.put("transforms", "route");
        config.put("transforms.route.type", "org.apache.kafka.connect.transforms.RegexRouter");
        config.put("transforms.route.regex", "in");
        config.put("transforms.route.replacement", "routed");
        // The worker's converters would fail a non-JSON value: the connector's must win.
        Map<String, String> worker = Map.of("key.converter", "org.apache.kafka.connect.json.JsonConverter",
                "value.converter", "org.apache.kafka.connect.json.JsonConverter");
        JsonNode started = agent.ok("task.start", body("id", "probe-0", "connector_config", config,
                "task_config", Map.of("task.class", ProbeSinkConnector.ProbeTask.class.getName()), "worker", worker));
        assertEquals("sink", started.path("kind").asText());

        List<Map<String, Object>> partitions = List.of(body("topic", "in", "partition", 0));
        // Pausing a partition the task was not given is refused, as in Kafka Connect.
        Frame refused = agent.call("task.put", putBatch("probe-0", "pause"));
        assertEquals(Frame.ERROR, refused.type());
        agent.ok("task.open", body("id", "probe-0", "partitions", partitions));
        ProbeSinkConnector.PUT.clear();

        agent.okBody("task.put", putBatch("probe-0", "plain", "pause", "rewind", "commit"));
        SinkRecord first = ProbeSinkConnector.PUT.poll(5, TimeUnit.SECONDS);
        assertEquals("plain", first.value());
        assertEquals("k", first.key());
        assertEquals(Schema.OPTIONAL_STRING_SCHEMA, first.valueSchema());
        assertEquals("routed", first.topic());
        assertEquals(0L, first.kafkaOffset());
        assertEquals(null, first.timestamp());
        // SimpleHeaderConverter reads "42" as an int8.
        assertEquals((byte) 42, first.headers().lastWithName("n").value());

        JsonNode pause = Json.object(notice("task.pause").body());
        assertEquals("probe-0", pause.path("id").asText());
        assertEquals("in", pause.path("partitions").get(0).path("topic").asText());
        JsonNode rewind = Json.object(notice("task.rewind").body());
        assertEquals(5, rewind.path("offsets").get(0).path("offset").asLong());
        assertEquals("probe-0", Json.object(notice("task.request_commit").body()).path("id").asText());

        JsonNode retry = Json.MAPPER.readTree(agent.call("task.put", putBatch("probe-0", "retry")).body());
        assertEquals("try again", retry.path("message").asText());
        assertTrue(retry.path("retriable").asBoolean(), retry.toString());

        JsonNode committed = agent.ok("task.pre_commit", body("id", "probe-0",
                "offsets", List.of(body("topic", "in", "partition", 0, "offset", 4)))).path("offsets");
        assertEquals(0, committed.size(), "preCommit said nothing may be committed");
        agent.ok("task.close", body("id", "probe-0", "partitions", partitions));
        agent.ok("task.stop", body("id", "probe-0"));
    }

    @Test
    void alterSinkOffsets() throws Exception {
        ProbeSinkConnector.ALTERED.clear();
        JsonNode reply = agent.ok("connector.alter_offsets", body("class", PROBE,
                "config", Map.of("connector.class", PROBE, "name", "alt", "topics", "in"),
                "offsets", List.of(
                        body("partition", body("kafka_topic", "in", "kafka_partition", 3), "offset", body("kafka_offset", 17)),
                        body("partition", body("kafka_topic", "in", "kafka_partition", 4), "offset", null))));
        assertTrue(reply.path("definite").asBoolean());
        Map<TopicPartition, Long> altered = ProbeSinkConnector.ALTERED.poll(5, TimeUnit.SECONDS);
        assertEquals(17L, altered.get(new TopicPartition("in", 3)));
        assertTrue(altered.containsKey(new TopicPartition("in", 4)));
        assertEquals(null, altered.get(new TopicPartition("in", 4))); // null: reset

        JsonNode bad = agent.error("connector.alter_offsets", body("class", PROBE, "config", Map.of(),
                "offsets", List.of(body("partition", body("kafka_topic", "in"), "offset", body("kafka_offset", 1)))));
        assertTrue(bad.path("message").asText().contains("kafka_partition"), bad.toString());
    }
}
