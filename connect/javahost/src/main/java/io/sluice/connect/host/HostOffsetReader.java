package io.sluice.connect.host;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.storage.OffsetStorageReader;

/**
 * A source task's (or source connector's) OffsetStorageReader: each read is an offsets.read
 * request to the agent, which answers from the offsets topics; the calling plugin thread blocks
 * for the reply while the reader thread keeps serving.
 */
public final class HostOffsetReader implements OffsetStorageReader {
    private final Connection connection;
    private final String id;

    /** @param id the task id, or the connector's name for a connector's own reader */
    public HostOffsetReader(Connection connection, String id) {
        this.connection = connection;
        this.id = id;
    }

    @Override
    public <T> Map<String, Object> offset(Map<String, T> partition) {
        return offsets(List.of(partition)).get(partition);
    }

    @Override
    public <T> Map<Map<String, T>, Map<String, Object>> offsets(Collection<Map<String, T>> partitions) {
        List<Map<String, T>> asked = new ArrayList<>(partitions);
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("id", id);
        request.put("partitions", asked);
        Frame reply;
        try {
            reply = connection.request(Protocol.OFFSETS_READ, Json.bytes(request)).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ConnectException("interrupted while reading offsets", e);
        } catch (ExecutionException e) {
            throw new ConnectException("Failed to fetch offsets: " + Errors.message(Errors.unwrap(e)), Errors.unwrap(e));
        }
        JsonNode body = Json.object(reply.body());
        if (reply.type() == Frame.ERROR) {
            throw new ConnectException("Failed to fetch offsets: " + body.path("message").asText());
        }
        JsonNode offsets = body.path("offsets");
        if (!offsets.isArray() || offsets.size() != asked.size()) {
            throw new ConnectException("offsets.read answered " + offsets.size() + " offsets for " + asked.size() + " partitions");
        }
        // Kafka's reader leaves partitions with no offset out of the map.
        Map<Map<String, T>, Map<String, Object>> result = new HashMap<>();
        for (int i = 0; i < asked.size(); i++) {
            Map<String, Object> offset = OffsetJson.decode(Json.bytes(offsets.get(i)));
            if (offset != null) {
                result.put(asked.get(i), offset);
            }
        }
        return result;
    }
}
