package io.sluice.connect.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ScanTest {

    /** The class → entry map of a plugins.list answer. */
    private static Map<String, JsonNode> byClass(JsonNode list) {
        Map<String, JsonNode> m = new HashMap<>();
        list.forEach(e -> m.put(e.path("class").asText(), e));
        return m;
    }

    @Test
    void scanPrintsThePluginPathsPluginsOnly() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String pluginPath = TestPlugins.pluginPath().toString();
        int status = Main.run(new String[] {"--scan", "--plugin-path", pluginPath},
                new PrintStream(out, true, StandardCharsets.UTF_8), path -> {
                    assertEquals(pluginPath, path);
                    return TestPlugins.catalog();
                });
        assertEquals(0, status);
        JsonNode list = Json.MAPPER.readTree(out.toByteArray());
        assertTrue(list.isArray());
        Map<String, JsonNode> plugins = byClass(list);

        JsonNode source = plugins.get("org.apache.kafka.connect.file.FileStreamSourceConnector");
        assertEquals("source", source.path("type").asText(), list.toString());
        assertEquals("sink", plugins.get("org.apache.kafka.connect.file.FileStreamSinkConnector").path("type").asText());
        // connect-file 4.4.0 is not on Maven Central; 4.3.1's connectors ask kafka-clients'
        // AppInfoParser, which 4.4.0 moved and the host puts back: they report 4.4.0, as on a
        // Kafka Connect worker.
        assertEquals("4.4.0", source.path("version").asText());

        JsonNode insertField = plugins.get("org.apache.kafka.connect.transforms.InsertField$Value");
        assertEquals("transformation", insertField.path("type").asText());
        assertEquals("4.4.0", insertField.path("version").asText());
        assertEquals("predicate", plugins.get("org.apache.kafka.connect.transforms.predicates.TopicNameMatches").path("type").asText());

        // The host's own classpath (connect-json, connect-runtime's converters) is not listed.
        assertFalse(plugins.containsKey("org.apache.kafka.connect.json.JsonConverter"));
        assertFalse(plugins.containsKey("org.apache.kafka.connect.storage.StringConverter"));
    }

    @Test
    void scanAndSocketAreExclusive() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream stdout = new PrintStream(out, true, StandardCharsets.UTF_8);
        try {
            Main.run(new String[] {"--plugin-path", "/nonexistent"}, stdout);
            throw new AssertionError("no mode given, yet run returned");
        } catch (IllegalArgumentException expected) {
            assertTrue(expected.getMessage().contains("--scan"));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
