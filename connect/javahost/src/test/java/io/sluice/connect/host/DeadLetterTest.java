package io.sluice.connect.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A sink task's dead letter queue over the protocol: failed conversions in task.put's reply,
 * the errantRecordReporter's records in task.report requests.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DeadLetterTest {
    private static final String PROBE = ProbeSinkConnector.class.getName();
    private static final String JSON = "org.apache.kafka.connect.json.JsonConverter";
    private static final String STRING = "org.apache.kafka.connect.storage.StringConverter";
    private FakeAgent agent;

    @BeforeAll
    void startHost() throws Exception {
        agent = new FakeAgent(TestPlugins.catalog(), Files.createTempDirectory("sluice-dlq-test"));
    }

    @AfterAll
    void stopHost() throws Exception {
        agent.close();
    }

    @BeforeEach
    void clear() {
        agent.reports.clear();
        ProbeSinkConnector.PUT.clear();
    }

    private static Map<String, Object> body(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    private static byte[] putBatch(String task, String... values) {
        BinaryWriter w = new BinaryWriter().string(task).i32(values.length);
        for (int i = 0; i < values.length; i++) {
            w.string("in").i32(0).i64(i).i64(1_700_000_000_000L + i).u8(1)
                    .bytes("k".getBytes(StandardCharsets.UTF_8)).bytes(values[i].getBytes(StandardCharsets.UTF_8))
                    .u16(1).string("n").bytes("42".getBytes(StandardCharsets.UTF_8));
        }
        return w.toByteArray();
    }

    private Map<String, String> config(String name, String valueConverter, String... kv) {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("connector.class", PROBE);
        c.put("name", name);
        c.put("topics", "in");
        c.put("key.converter", STRING);
        c.put("value.converter", valueConverter);
        c.put("value.converter.schemas.enable", "false");
        for (int i = 0; i < kv.length; i += 2) {
            c.put(kv[i], kv[i + 1]);
        }
        return c;
    }

    private void start(String id, Map<String, String> config) throws Exception {
        agent.ok("task.start", body("id", id, "connector_config", config,
                "task_config", Map.of("task.class", ProbeSinkConnector.ProbeTask.class.getName()), "worker", Map.of()));
        agent.ok("task.open", body("id", id, "partitions", List.of(body("topic", "in", "partition", 0))));
    }

    private static String text(JsonNode base64) {
        return new String(Base64.getDecoder().decode(base64.asText()), StandardCharsets.UTF_8);
    }

    @Test
    void aFailedConversionIsInThePutReplyByIndex() throws Exception {
        start("dlq-0", config("dlq", JSON, "errors.tolerance", "all", "errors.deadletterqueue.topic.name", "dead"));
        JsonNode reply = Json.MAPPER.readTree(agent.okBody("task.put", putBatch("dlq-0", "{\"a\":1}", "not json", "{\"b\":2}")));
        JsonNode errant = reply.path("errant");
        assertEquals(1, errant.size(), reply.toString());
        JsonNode e = errant.get(0);
        assertEquals(1, e.path("index").asInt());
        assertEquals("VALUE_CONVERTER", e.path("stage").asText());
        assertEquals(JSON, e.path("class").asText());
        assertEquals("org.apache.kafka.connect.errors.DataException", e.path("exception").asText());
        assertTrue(e.path("message").asText().contains("Converting byte[] to Kafka Connect data failed"), e.toString());
        assertTrue(e.path("trace").asText().startsWith("org.apache.kafka.connect.errors.DataException"), e.toString());
        assertEquals(2, ProbeSinkConnector.PUT.size(), "the good records are put");
        agent.ok("task.stop", body("id", "dlq-0"));
    }

    @Test
    void withoutADeadLetterQueueTheReplyNamesNothing() throws Exception {
        start("nodlq-0", config("nodlq", JSON, "errors.tolerance", "all"));
        JsonNode reply = Json.MAPPER.readTree(agent.okBody("task.put", putBatch("nodlq-0", "not json")));
        assertTrue(reply.path("errant").isMissingNode(), reply.toString());
        agent.ok("task.stop", body("id", "nodlq-0"));
    }

    @Test
    void underToleranceNoneTheRecordIsReportedThenThePutFails() throws Exception {
        start("strict-0", config("strict", JSON, "errors.deadletterqueue.topic.name", "dead"));
        Frame reply = agent.call("task.put", putBatch("strict-0", "{\"a\":1}", "not json"));
        assertEquals(Frame.ERROR, reply.type());
        JsonNode error = Json.MAPPER.readTree(reply.body());
        assertEquals("Tolerance exceeded in error handler", error.path("message").asText());
        JsonNode report = agent.reports.poll(5, TimeUnit.SECONDS);
        assertNotNull(report, "the failed record goes to the DLQ before the task fails");
        assertEquals("not json", text(report.path("record").path("value")));
        assertEquals(1, report.path("record").path("offset").asLong());
        assertEquals("VALUE_CONVERTER", report.path("stage").asText());
        agent.ok("task.stop", body("id", "strict-0"));
    }

    @Test
    void errantRecordReporterSendsTheConsumedRecordOrASerializedOne() throws Exception {
        start("rep-0", config("rep", STRING, "errors.tolerance", "all", "errors.deadletterqueue.topic.name", "dead"));
        agent.okBody("task.put", putBatch("rep-0", "plain", "report", "report-new"));
        JsonNode consumed = agent.reports.poll(5, TimeUnit.SECONDS);
        JsonNode made = agent.reports.poll(5, TimeUnit.SECONDS);
        assertNotNull(made, "two reports");
        assertEquals("rep-0", consumed.path("id").asText());
        JsonNode r = consumed.path("record");
        assertEquals("report", text(r.path("value")));
        assertEquals("k", text(r.path("key")));
        assertEquals(1_700_000_000_001L, r.path("timestamp").asLong());
        assertEquals(1, r.path("timestamp_type").asInt());
        // The header as consumed, not as the header converter read it.
        assertEquals("42", text(r.path("headers").get(0).path("value")));
        assertEquals("TASK_PUT", consumed.path("stage").asText());
        assertEquals("org.apache.kafka.connect.sink.SinkTask", consumed.path("class").asText());
        assertEquals("org.apache.kafka.connect.errors.ConnectException", consumed.path("exception").asText());
        assertEquals("cannot write report", consumed.path("message").asText());
        assertEquals("made", text(made.path("record").path("value")));
        assertEquals(2, made.path("record").path("offset").asLong());

        // Reports are awaited before pre_commit answers, so the agent commits after them.
        agent.ok("task.pre_commit", body("id", "rep-0", "offsets", List.of(body("topic", "in", "partition", 0, "offset", 3))));
        agent.ok("task.stop", body("id", "rep-0"));
    }

    @Test
    void errantRecordReporterIsNullWithoutDlqOrLogAndFatalUnderNone() throws Exception {
        start("none-0", config("none", STRING, "errors.tolerance", "all"));
        JsonNode error = Json.MAPPER.readTree(agent.call("task.put", putBatch("none-0", "report")).body());
        assertEquals("no reporter", error.path("message").asText());
        agent.ok("task.stop", body("id", "none-0"));

        // errors.log.enable alone makes a reporter; under errors.tolerance=none a report fails the task.
        start("logged-0", config("logged", STRING, "errors.log.enable", "true"));
        Frame reply = agent.call("task.put", putBatch("logged-0", "report"));
        assertEquals(Frame.ERROR, reply.type());
        JsonNode fatal = Json.MAPPER.readTree(reply.body());
        assertTrue(fatal.path("trace").asText().contains("Tolerance exceeded in error handler"), fatal.toString());
        assertTrue(agent.reports.isEmpty(), "no DLQ, no task.report");
        agent.ok("task.stop", body("id", "logged-0"));
    }
}
