package io.sluice.connect.host;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.sink.SinkConnectorContext;
import org.apache.kafka.connect.source.SourceConnectorContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;

/**
 * A connector's ConnectorContext: what the connector asks for on its own becomes a notice to the
 * agent (connector.reconfigure, connector.error); a source connector reads offsets through the
 * agent like its tasks.
 */
public final class HostConnectorContext implements SourceConnectorContext, SinkConnectorContext {
    private final String name;
    private final Connection connection;
    private final PluginMetrics metrics;
    private final OffsetStorageReader offsets;

    public HostConnectorContext(String name, Connection connection, PluginMetrics metrics) {
        this.name = name;
        this.connection = connection;
        this.metrics = metrics;
        this.offsets = new HostOffsetReader(connection, name);
    }

    @Override
    public void requestTaskReconfiguration() {
        connection.notice(Protocol.CONNECTOR_RECONFIGURE, Json.bytes(Map.of("name", name)));
    }

    @Override
    public void raiseError(Exception e) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", name);
        body.putAll(Errors.fields(e));
        connection.notice(Protocol.CONNECTOR_ERROR, Json.bytes(body));
    }

    @Override
    public PluginMetrics pluginMetrics() {
        return metrics;
    }

    @Override
    public OffsetStorageReader offsetStorageReader() {
        return offsets;
    }
}
