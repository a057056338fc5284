package io.sluice.connect.host;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;

/**
 * A sink record as Kafka stores it (a task.put batch's record, before the host converts it), kept
 * so that a failed record reaches the dead letter queue as it was consumed.
 *
 * @param timestamp epoch ms; null: none
 */
public record RawRecord(String topic, int partition, long offset, Long timestamp, TimestampType timestampType,
                        byte[] key, byte[] value, RecordHeaders headers) {

    /** The record in task.report's JSON (bytes in base64, as Jackson writes them). */
    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("topic", topic);
        m.put("partition", partition);
        m.put("offset", offset);
        m.put("timestamp", timestamp);
        m.put("timestamp_type", switch (timestampType) {
            case CREATE_TIME -> 1;
            case LOG_APPEND_TIME -> 2;
            default -> 0;
        });
        m.put("key", key);
        m.put("value", value);
        List<Map<String, Object>> hs = new ArrayList<>();
        for (Header h : headers) {
            Map<String, Object> hm = new LinkedHashMap<>();
            hm.put("key", h.key());
            hm.put("value", h.value());
            hs.add(hm);
        }
        m.put("headers", hs);
        return m;
    }

    /** The record as Kafka Connect's LogReporter names a consumed record. */
    public String logDetail() {
        StringBuilder b = new StringBuilder(", where consumed record is {topic='").append(topic).append('\'')
                .append(", partition=").append(partition).append(", offset=").append(offset);
        if (timestamp != null && (timestampType == TimestampType.CREATE_TIME || timestampType == TimestampType.LOG_APPEND_TIME)) {
            b.append(", timestamp=").append(timestamp).append(", timestampType=").append(timestampType);
        }
        return b.append('}').toString();
    }

    /** The failure's fields of task.put's errant entries and task.report: stage, class, exception. */
    static Map<String, Object> failureJson(ErrorTolerance.Failure f) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("stage", f.stage().name());
        m.put("class", f.executingClass() == null ? null : f.executingClass().getName());
        m.put("exception", f.error().getClass().getName());
        m.put("message", f.error().getMessage());
        m.put("trace", Errors.trace(f.error()));
        return m;
    }
}
