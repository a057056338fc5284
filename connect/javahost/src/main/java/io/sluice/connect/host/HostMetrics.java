package io.sluice.connect.host;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.connect.runtime.ConnectMetrics;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.StringConverter;

/**
 * The host's one ConnectMetrics: Kafka's transformation stages and its ConnectorContext API need
 * one (plugins may register metrics). Nothing reports them beyond JMX; the agent has its own.
 */
public final class HostMetrics {
    private final ConnectMetrics metrics;

    public HostMetrics(String hostId) {
        this.metrics = new ConnectMetrics(hostId, new MetricsConfig(), Time.SYSTEM, hostId);
    }

    public ConnectMetrics connectMetrics() {
        return metrics;
    }

    /** What ConnectorContext.pluginMetrics() gives a connector, tagged as Kafka tags it. */
    public PluginMetrics forConnector(String connector) {
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("connector", connector);
        return new PluginMetricsImpl(metrics.metrics(), tags);
    }

    /** What a task context's pluginMetrics() gives a task. */
    public PluginMetrics forTask(String connector, int task) {
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("connector", connector);
        tags.put("task", Integer.toString(task));
        return new PluginMetricsImpl(metrics.metrics(), tags);
    }

    public void close() {
        metrics.stop();
    }

    /**
     * The worker settings ConnectMetrics reads (sampling, reporters): Kafka's defaults. The
     * converters and bootstrap.servers are required keys of a worker config and unused here: the
     * host talks to no broker.
     */
    private static final class MetricsConfig extends WorkerConfig {
        MetricsConfig() {
            super(baseConfigDef(), Map.of(
                    BOOTSTRAP_SERVERS_CONFIG, "localhost:1",
                    KEY_CONVERTER_CLASS_CONFIG, StringConverter.class.getName(),
                    VALUE_CONVERTER_CLASS_CONFIG, StringConverter.class.getName()));
        }
    }
}
