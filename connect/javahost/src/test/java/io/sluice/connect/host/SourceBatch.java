package io.sluice.connect.host;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Decodes a binary source batch (docs/plugins.md) the way the Go agent does, for tests. */
record SourceBatch(List<Rec> records, int flags) {

    /** A record; a dropped one (flags has SourceTaskRunner.FLAG_DROPPED) has only its position. */
    record Rec(int flags, String topic, int partition, long timestamp, byte[] key, byte[] value,
               Map<String, byte[]> headers, JsonNode sourcePartition, JsonNode sourceOffset, long seq) {
        String valueText() {
            return value == null ? null : new String(value, StandardCharsets.UTF_8);
        }
    }

    static SourceBatch decode(byte[] body) throws IOException {
        BinaryReader in = new BinaryReader(body);
        long count = in.u32();
        List<Rec> records = new ArrayList<>();
        for (long i = 0; i < count; i++) {
            int flags = in.u8();
            boolean dropped = (flags & SourceTaskRunner.FLAG_DROPPED) != 0;
            String topic = null;
            int partition = -1;
            long timestamp = Long.MIN_VALUE;
            byte[] key = null;
            byte[] value = null;
            Map<String, byte[]> headers = new LinkedHashMap<>();
            if (!dropped) {
                topic = in.string();
                partition = in.i32();
                timestamp = in.i64();
                key = in.bytes();
                value = in.bytes();
                int headerCount = in.u16();
                for (int h = 0; h < headerCount; h++) {
                    headers.put(in.string(), in.bytes());
                }
            }
            byte[] partitionJson = in.bytes();
            byte[] offsetJson = in.bytes();
            long seq = dropped ? -1 : in.u32();
            records.add(new Rec(flags, topic, partition, timestamp, key, value, headers,
                    partitionJson == null ? null : Json.MAPPER.readTree(partitionJson),
                    offsetJson == null ? null : Json.MAPPER.readTree(offsetJson), seq));
        }
        return new SourceBatch(records, in.u8());
    }
}
