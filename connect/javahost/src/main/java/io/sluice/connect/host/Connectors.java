package io.sluice.connect.host;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.TaskConfig;
import org.apache.kafka.connect.runtime.isolation.LoaderSwap;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkTask;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.maven.artifact.versioning.VersionRange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connector ops: validation and config definitions, the lifecycle of started connectors
 * (each on its own thread, keyed by name) and alterOffsets on a connector instance of its own, as
 * Kafka Connect's worker runs it.
 */
public final class Connectors {
    private static final Logger log = LoggerFactory.getLogger(Connectors.class);

    private final Plugins plugins;
    private final Connection connection;
    private final HostMetrics metrics;
    private final ConnectorValidator validator;
    private final Map<String, Running> running = new ConcurrentHashMap<>();

    /** A started connector and the thread it runs on. */
    private record Running(Connector connector, Map<String, String> config, SerialExecutor executor) {
    }

    public Connectors(Plugins plugins, Connection connection, HostMetrics metrics) {
        this.plugins = plugins;
        this.connection = connection;
        this.metrics = metrics;
        this.validator = new ConnectorValidator(plugins);
    }

    public byte[] validate(ObjectNode body) {
        ConnectorValidator.Result result = validator.validate(Json.stringMap(body, "config"));
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("configs", result.configs());
        if (result.preflight() != null) {
            reply.put("preflight", result.preflight());
        }
        return Json.bytes(reply);
    }

    public byte[] configDef(ObjectNode body) {
        Map<String, String> version = body.hasNonNull("version")
                ? Map.of(ConnectorConfig.CONNECTOR_VERSION, Json.text(body, "version")) : Map.of();
        return Json.bytes(Map.of("configs", validator.configDef(Json.text(body, "class"), PluginVersions.connector(version))));
    }

    /** Starts connector name; one already running under that name is stopped first. */
    public CompletableFuture<byte[]> start(ObjectNode body) {
        String name = Json.text(body, "name");
        Map<String, String> config = Json.stringMap(body, "config");
        String className = config.get(ConnectorConfig.CONNECTOR_CLASS_CONFIG);
        if (className == null) {
            throw new IllegalArgumentException("Connector config " + config + " contains no connector type");
        }
        Running previous = running.remove(name);
        CompletableFuture<Void> stopped = previous == null
                ? CompletableFuture.completedFuture(null)
                // The old instance failing to stop must not keep the new one from starting.
                : stop(name, previous).handle((reply, error) -> {
                    if (error != null) {
                        log.warn("connector {} failed to stop before its restart", name, Errors.unwrap(error));
                    }
                    return null;
                });
        // The class only: the connector is built on its own thread, in its loader, as Kafka does.
        // The version the config names (the agent sends the one the connector resolved to), in
        // that version's own loader.
        VersionRange version = PluginVersions.connector(config);
        ClassLoader loader = plugins.connectorClass(className, version).getClassLoader();
        return stopped.thenCompose(ignored -> {
            SerialExecutor executor = new SerialExecutor("connector-" + name, loader);
            return executor.call(() -> {
                Connector connector = plugins.newConnector(className, version);
                connector.initialize(new HostConnectorContext(name, connection, metrics.forConnector(name)));
                connector.start(config);
                running.put(name, new Running(connector, config, executor));
                return Json.bytes(Map.of());
            }).whenComplete((reply, error) -> {
                if (error != null) {
                    executor.shutdown();
                }
            });
        });
    }

    /**
     * The connector's task configs, each with task.class (and a sink's topics) added as Kafka
     * Connect's worker adds them, so task.start knows the task's class.
     */
    public CompletableFuture<byte[]> taskConfigs(ObjectNode body) {
        String name = Json.text(body, "name");
        int maxTasks = body.path("max_tasks").asInt(1);
        Running r = find(name);
        return r.executor().call(() -> {
            Connector connector = r.connector();
            List<Map<String, String>> configs = connector.taskConfigs(maxTasks);
            if (configs == null) {
                configs = List.of();
            }
            if (configs.size() > maxTasks) {
                throw new ConnectException("The connector " + name + " has generated " + configs.size()
                        + " tasks, which is greater than " + maxTasks
                        + ", the maximum number of tasks it is configured to create.");
            }
            String taskClass = connector.taskClass().getName();
            List<Map<String, String>> result = new ArrayList<>();
            for (Map<String, String> taskConfig : configs) {
                Map<String, String> c = new LinkedHashMap<>(taskConfig);
                c.put(TaskConfig.TASK_CLASS_CONFIG, taskClass);
                if (connector instanceof SinkConnector) {
                    copy(r.config(), c, SinkTask.TOPICS_CONFIG);
                    copy(r.config(), c, SinkTask.TOPICS_REGEX_CONFIG);
                }
                result.add(c);
            }
            return Json.bytes(Map.of("configs", result));
        });
    }

    private static void copy(Map<String, String> from, Map<String, String> to, String key) {
        if (from.containsKey(key)) {
            to.put(key, from.get(key));
        }
    }

    /** Stops connector name; one not started is no error, as the protocol's stop promises. */
    public CompletableFuture<byte[]> stop(ObjectNode body) {
        String name = Json.text(body, "name");
        Running r = running.remove(name);
        if (r == null) {
            return CompletableFuture.completedFuture(Json.bytes(Map.of()));
        }
        return stop(name, r);
    }

    private CompletableFuture<byte[]> stop(String name, Running r) {
        CompletableFuture<byte[]> done = r.executor().call(() -> {
            r.connector().stop();
            return Json.bytes(Map.of());
        });
        r.executor().shutdown();
        log.info("connector {} stopping", name);
        return done;
    }

    /**
     * Runs the connector class's alterOffsets on an instance of its own (not a started one), as
     * Kafka Connect's worker does; offsets are in the REST API's shape, a null offset resets.
     */
    public byte[] alterOffsets(ObjectNode body) {
        String className = Json.text(body, "class");
        Map<String, String> config = Json.stringMap(body, "config");
        JsonNode offsets = body.path("offsets");
        Connector connector = plugins.newConnector(className, PluginVersions.connector(config));
        String name = config.getOrDefault(ConnectorConfig.NAME_CONFIG, className);
        try (LoaderSwap swap = plugins.withClassLoader(connector.getClass().getClassLoader())) {
            connector.initialize(new HostConnectorContext(name, connection, metrics.forConnector(name)));
            boolean definite;
            if (connector instanceof SinkConnector sink) {
                definite = sink.alterOffsets(config, sinkOffsets(offsets));
            } else if (connector instanceof SourceConnector source) {
                definite = source.alterOffsets(config, sourceOffsets(offsets));
            } else {
                throw new ConnectException(className + " is neither a source nor a sink connector");
            }
            return Json.bytes(Map.of("definite", definite));
        }
    }

    private static Map<Map<String, ?>, Map<String, ?>> sourceOffsets(JsonNode offsets) {
        Map<Map<String, ?>, Map<String, ?>> result = new HashMap<>();
        for (JsonNode entry : offsets) {
            result.put(OffsetJson.normalize(Json.plainMap(entry.get("partition"))),
                    OffsetJson.normalize(Json.plainMap(entry.get("offset"))));
        }
        return result;
    }

    /** Kafka Connect's sink offsets: {"kafka_topic","kafka_partition"} → {"kafka_offset"}. */
    private static Map<TopicPartition, Long> sinkOffsets(JsonNode offsets) {
        Map<TopicPartition, Long> result = new HashMap<>();
        for (JsonNode entry : offsets) {
            JsonNode partition = entry.path("partition");
            JsonNode topic = partition.get("kafka_topic");
            JsonNode number = partition.get("kafka_partition");
            if (topic == null || !topic.isTextual() || number == null || !number.canConvertToInt()) {
                throw new ConnectException("Sink connector offsets must name kafka_topic and kafka_partition: " + partition);
            }
            JsonNode offset = entry.get("offset");
            Long value = null;
            if (offset != null && !offset.isNull()) {
                JsonNode kafkaOffset = offset.get("kafka_offset");
                if (kafkaOffset == null || !kafkaOffset.canConvertToLong()) {
                    throw new ConnectException("Sink connector offsets must have a kafka_offset: " + offset);
                }
                value = kafkaOffset.asLong();
            }
            result.put(new TopicPartition(topic.asText(), number.asInt()), value);
        }
        return result;
    }

    private Running find(String name) {
        Running r = running.get(name);
        if (r == null) {
            throw new ConnectException("Connector " + name + " is not running on this host");
        }
        return r;
    }

    /** Stops every connector, for the host's exit; the future completes when all have stopped. */
    public CompletableFuture<Void> stopAll() {
        List<CompletableFuture<byte[]>> stops = new ArrayList<>();
        for (String name : List.copyOf(running.keySet())) {
            Running r = running.remove(name);
            if (r != null) {
                stops.add(stop(name, r));
            }
        }
        return CompletableFuture.allOf(stops.toArray(CompletableFuture[]::new));
    }
}
