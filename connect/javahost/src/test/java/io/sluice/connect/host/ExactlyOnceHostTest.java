package io.sluice.connect.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly-once support through the host: the preflight answers connector.validate gives, the
 * TransactionContext's requests in a source batch's flags, and dropped records' positions.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ExactlyOnceHostTest {
    private static final String PROBE = ProbeSourceConnector.class.getName();
    private static final String STRING = "org.apache.kafka.connect.storage.StringConverter";
    private static final Map<String, String> EXACTLY_ONCE = Map.of("key.converter", STRING, "value.converter", STRING,
            TaskSetup.EXACTLY_ONCE_WORKER_KEY, "enabled");

    @TempDir
    Path dir;
    private FakeAgent agent;

    @BeforeAll
    void startHost() throws Exception {
        agent = new FakeAgent(TestPlugins.catalog(), Files.createTempDirectory("sluice-eos-test"));
    }

    @AfterAll
    void stopHost() throws Exception {
        agent.close();
    }

    private static Map<String, String> config(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("connector.class", PROBE);
        m.put("name", "probe-src");
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    private JsonNode preflight(Map<String, String> config) throws Exception {
        return agent.ok("connector.validate", Map.of("config", config)).path("preflight");
    }

    @Test
    void validateAnswersThePreflightTheConfigAsksFor() throws Exception {
        JsonNode both = preflight(config("exactly.once.support", "Required", "probe.eos", "SUPPORTED",
                "transaction.boundary", " connector ", "probe.boundaries", "UNSUPPORTED"));
        assertEquals("SUPPORTED", both.path("exactly_once").path("support").asText(), both.toString());
        assertEquals("UNSUPPORTED", both.path("transaction_boundaries").path("support").asText(), both.toString());

        JsonNode nulls = preflight(config("exactly.once.support", "required", "transaction.boundary", "connector"));
        assertEquals("", nulls.path("exactly_once").path("support").asText(), nulls.toString());
        assertEquals("", nulls.path("transaction_boundaries").path("support").asText(), nulls.toString());

        JsonNode thrown = preflight(config("exactly.once.support", "required", "probe.eos", "throw"));
        assertTrue(thrown.path("exactly_once").path("threw").asBoolean(), thrown.toString());
        assertEquals("cannot tell without the database", thrown.path("exactly_once").path("message").asText());
        assertTrue(thrown.path("transaction_boundaries").isMissingNode(), thrown.toString());

        // Nothing asked, nothing answered.
        assertTrue(preflight(config("exactly.once.support", "requested", "probe.eos", "throw")).isMissingNode());
    }

    @Test
    void transactionRequestsTravelInTheBatchFlags() throws Exception {
        Map<String, String> config = config("transaction.boundary", "connector");
        agent.ok("task.start", Map.of("id", "probe-src-0", "connector_config", config, "task_config", config,
                "worker", EXACTLY_ONCE));
        SourceBatch batch = SourceBatch.decode(agent.okBody("task.poll", Json.bytes(Map.of("id", "probe-src-0"))));
        List<Integer> flags = batch.records().stream().map(SourceBatch.Rec::flags).toList();
        assertEquals(List.of(SourceTaskRunner.FLAG_COMMIT_AFTER, 0, SourceTaskRunner.FLAG_ABORT_AFTER, 0), flags);
        assertEquals(SourceTaskRunner.BATCH_COMMIT, batch.flags());
        agent.ok("task.stop", Map.of("id", "probe-src-0"));

        // Without the agent's exactly-once support the task has no TransactionContext.
        agent.ok("task.start", Map.of("id", "probe-src-1", "connector_config", config, "task_config", config,
                "worker", Map.of("key.converter", STRING, "value.converter", STRING)));
        SourceBatch plain = SourceBatch.decode(agent.okBody("task.poll", Json.bytes(Map.of("id", "probe-src-1"))));
        assertEquals(4, plain.records().size());
        assertTrue(plain.records().stream().allMatch(r -> r.flags() == 0));
        assertEquals(0, plain.flags());
        agent.ok("task.stop", Map.of("id", "probe-src-1"));
    }

    @Test
    void aDroppedRecordKeepsItsPosition() throws Exception {
        Map<String, String> config = config("transforms", "drop", "transforms.drop.type",
                "org.apache.kafka.connect.transforms.Filter");
        agent.ok("task.start", Map.of("id", "probe-drop-0", "connector_config", config, "task_config", config,
                "worker", Map.of("key.converter", STRING, "value.converter", STRING)));
        SourceBatch batch = SourceBatch.decode(agent.okBody("task.poll", Json.bytes(Map.of("id", "probe-drop-0"))));
        assertEquals(4, batch.records().size());
        SourceBatch.Rec last = batch.records().get(3);
        assertTrue((last.flags() & SourceTaskRunner.FLAG_DROPPED) != 0);
        assertEquals(3, last.sourceOffset().path("n").asLong());
        assertEquals("p", last.sourcePartition().path("probe").asText());
        assertFalse(batch.records().stream().anyMatch(r -> r.topic() != null));
        agent.ok("task.stop", Map.of("id", "probe-drop-0"));
    }
}
