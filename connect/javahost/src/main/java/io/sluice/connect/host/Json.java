package io.sluice.connect.host;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** The protocol's JSON bodies: one shared mapper and the few conversions every op needs. */
public final class Json {
    /** Thread-safe once configured; the REST entities carry their own @JsonProperty names. */
    public static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private Json() {
    }

    public static byte[] bytes(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("cannot encode " + value.getClass().getName() + " as JSON", e);
        }
    }

    /** Parses a request body; an empty body counts as {}. */
    public static ObjectNode object(byte[] body) {
        try {
            if (body.length == 0) {
                return MAPPER.createObjectNode();
            }
            JsonNode node = MAPPER.readTree(body);
            if (!(node instanceof ObjectNode object)) {
                throw new IllegalArgumentException("request body is not a JSON object");
            }
            return object;
        } catch (IOException e) {
            throw new UncheckedIOException("request body is not valid JSON: " + e.getMessage(), e);
        }
    }

    /** A required string field. */
    public static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || !value.isTextual()) {
            throw new IllegalArgumentException("request has no string \"" + field + "\"");
        }
        return value.asText();
    }

    /** A string-to-string map field (a connector or task config); absent is empty. */
    public static Map<String, String> stringMap(JsonNode node, String field) {
        Map<String, String> map = new LinkedHashMap<>();
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return map;
        }
        if (!value.isObject()) {
            throw new IllegalArgumentException("\"" + field + "\" is not a JSON object");
        }
        value.fields().forEachRemaining(e -> map.put(e.getKey(), e.getValue().isNull() ? null : e.getValue().asText()));
        return map;
    }

    /** A JSON object as a Java map of plain values (source partitions and offsets). */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> plainMap(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        return MAPPER.convertValue(node, Map.class);
    }
}
