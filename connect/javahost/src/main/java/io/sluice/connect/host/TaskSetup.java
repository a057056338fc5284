package io.sluice.connect.host;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.TaskConfig;
import org.apache.kafka.connect.runtime.isolation.LoaderSwap;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.util.ConnectorTaskId;

/**
 * Everything task.start builds before the task runs: the task instance in its connector's class
 * loader, its converters, its transformation chain and its error tolerance.
 */
public final class TaskSetup {
    final ConnectorTaskId id;
    final String idText;
    final Map<String, String> connectorConfig;
    final Map<String, String> taskConfig;
    final ClassLoader loader;
    final Task task;
    final TaskConverters converters;
    final ConnectorConfig parsedConfig;
    final ErrorTolerance tolerance;
    /**
     * Whether a source task defines its own transaction boundaries: the agent has exactly-once
     * support on and the connector asks for transaction.boundary=connector (Kafka Connect gives
     * such a task a TransactionContext, and no other).
     */
    final boolean definesTransactions;

    private TaskSetup(ConnectorTaskId id, String idText, Map<String, String> connectorConfig, Map<String, String> taskConfig,
                      ClassLoader loader, Task task, TaskConverters converters, ConnectorConfig parsedConfig,
                      boolean definesTransactions) {
        this.id = id;
        this.idText = idText;
        this.connectorConfig = connectorConfig;
        this.taskConfig = taskConfig;
        this.loader = loader;
        this.task = task;
        this.converters = converters;
        this.parsedConfig = parsedConfig;
        this.tolerance = new ErrorTolerance(id, parsedConfig);
        this.definesTransactions = definesTransactions;
    }

    /** The worker setting the agent passes when its exactly-once source support is on. */
    static final String EXACTLY_ONCE_WORKER_KEY = "exactly.once.source.support";

    private static boolean definesTransactions(Map<String, String> config, Map<String, String> worker) {
        String boundary = config.getOrDefault("transaction.boundary", "").trim();
        return "enabled".equalsIgnoreCase(worker.getOrDefault(EXACTLY_ONCE_WORKER_KEY, "").trim())
                && "connector".equalsIgnoreCase(boundary);
    }

    /** Parses a task id, "connector-n" (the connector's name may itself contain '-'). */
    static ConnectorTaskId parseId(String id) {
        int dash = id.lastIndexOf('-');
        if (dash <= 0 || dash == id.length() - 1) {
            throw new IllegalArgumentException("task id \"" + id + "\" is not <connector>-<n>");
        }
        try {
            return new ConnectorTaskId(id.substring(0, dash), Integer.parseInt(id.substring(dash + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("task id \"" + id + "\" is not <connector>-<n>", e);
        }
    }

    public static TaskSetup build(Plugins plugins, String idText, Map<String, String> connectorConfig,
                                  Map<String, String> taskConfig, Map<String, String> worker) {
        ConnectorTaskId id = parseId(idText);
        Map<String, String> config = new LinkedHashMap<>(connectorConfig);
        config.putIfAbsent(ConnectorConfig.NAME_CONFIG, id.connector());
        String connectorClass = config.get(ConnectorConfig.CONNECTOR_CLASS_CONFIG);
        if (connectorClass == null) {
            throw new ConnectException("Connector config " + connectorConfig + " contains no connector type");
        }
        Class<? extends Connector> klass = plugins.connectorClass(connectorClass, PluginVersions.connector(config));
        ClassLoader loader = klass.getClassLoader();
        try (LoaderSwap swap = plugins.withClassLoader(loader)) {
            Class<? extends Task> taskClass = taskClass(plugins, klass, taskConfig, loader);
            Task task = plugins.newTask(taskClass);
            // Kafka's ConnectorConfig: parses errors.* and validates transforms and predicates.
            ConnectorConfig parsed = new ConnectorConfig(plugins, config);
            TaskConverters converters = TaskConverters.build(plugins, config, worker, loader);
            return new TaskSetup(id, idText, config, taskConfig, loader, task, converters, parsed,
                    definesTransactions(config, worker));
        }
    }

    /** The chain of the connector config's transforms, for records of type R. */
    <R extends ConnectRecord<R>> TransformChain<R> transformChain(Plugins plugins, HostMetrics metrics) {
        return new TransformChain<>(parsedConfig.<R>transformationStages(plugins, id, metrics.connectMetrics()), tolerance);
    }

    /** task.class from the task config, as Kafka Connect puts it there; else the connector's. */
    private static Class<? extends Task> taskClass(Plugins plugins, Class<? extends Connector> connectorClass,
                                                   Map<String, String> taskConfig, ClassLoader loader) {
        String name = taskConfig.get(TaskConfig.TASK_CLASS_CONFIG);
        try {
            if (name == null) {
                // The connector class is the version's own: instantiated in its loader.
                Connector connector = connectorClass.getDeclaredConstructor().newInstance();
                return connector.taskClass();
            }
            return Class.forName(name, true, loader).asSubclass(Task.class);
        } catch (ClassNotFoundException e) {
            throw new ConnectException("Task class " + name + " could not be found", e);
        } catch (ReflectiveOperationException e) {
            throw new ConnectException("Could not instantiate " + connectorClass.getName() + " for its task class", e);
        }
    }
}
