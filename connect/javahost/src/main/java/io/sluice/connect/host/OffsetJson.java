package io.sluice.connect.host;

import java.util.Map;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonConverterConfig;

/**
 * Source partitions and offsets as JSON, converted as Kafka Connect's offset store converts them
 * (a schemaless JsonConverter): a task reads back an integer as a Long, bytes as base64, exactly
 * as it would from Kafka Connect's offsets topic.
 */
public final class OffsetJson {
    private static final JsonConverter CONVERTER = new JsonConverter();

    static {
        CONVERTER.configure(Map.of(JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, "false"), false);
    }

    private OffsetJson() {
    }

    /** JSON of a source partition or offset; null for null. */
    public static byte[] encode(Map<String, ?> map) {
        return map == null ? null : CONVERTER.fromConnectData("", null, map);
    }

    /**
     * A partition or offset as a task would read it back from the offsets topic (an Integer
     * becomes a Long…): what Kafka Connect's worker hands a connector's alterOffsets, so that a
     * connector checking for a Long (FileStreamSourceConnector does) accepts a REST API number.
     */
    public static Map<String, Object> normalize(Map<String, ?> map) {
        return map == null ? null : decode(encode(map));
    }

    /** A partition or offset read back; null for JSON null. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> decode(byte[] json) {
        SchemaAndValue data = CONVERTER.toConnectData("", json);
        if (data.value() == null) {
            return null;
        }
        if (!(data.value() instanceof Map)) {
            throw new DataException("an offset must be a JSON object, not " + new String(json, java.nio.charset.StandardCharsets.UTF_8));
        }
        return (Map<String, Object>) data.value();
    }
}
