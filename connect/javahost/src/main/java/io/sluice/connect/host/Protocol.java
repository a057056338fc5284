package io.sluice.connect.host;

import java.util.List;

/**
 * The agent–host protocol (docs/plugins.md, "The protocol"): its version and its op names. The
 * agent's side is agent/internal/javahost/protocol.go; the golden frames both sides' tests decode
 * are in agent/internal/javahost/testdata/frames.
 */
public final class Protocol {

    /**
     * The protocol version this host speaks. The agent states its own in host.hello's request, the
     * host in its reply; each refuses a peer of another version, naming both.
     */
    public static final int VERSION = 1;

    /** Opens the connection: {"protocol"} → {"version", "kafka_version", "protocol"}. */
    public static final String HOST_HELLO = "host.hello";
    /** Lists the plugin path's plugins. */
    public static final String PLUGINS_LIST = "plugins.list";
    /** Validates a connector config. */
    public static final String CONNECTOR_VALIDATE = "connector.validate";
    /** Lists a connector class's config keys. */
    public static final String CONNECTOR_CONFIG_DEF = "connector.config_def";
    /** Starts a connector. */
    public static final String CONNECTOR_START = "connector.start";
    /** Asks a started connector for its task configs. */
    public static final String CONNECTOR_TASK_CONFIGS = "connector.task_configs";
    /** Stops a connector. */
    public static final String CONNECTOR_STOP = "connector.stop";
    /** Runs a connector class's alterOffsets. */
    public static final String CONNECTOR_ALTER_OFFSETS = "connector.alter_offsets";
    /** Starts a task. */
    public static final String TASK_START = "task.start";
    /** Polls a source task; the reply is a binary source batch. */
    public static final String TASK_POLL = "task.poll";
    /** commitRecord for each acknowledged record. */
    public static final String TASK_COMMIT_RECORDS = "task.commit_records";
    /** SourceTask.commit(). */
    public static final String TASK_COMMIT = "task.commit";
    /** Opens a sink task's partitions. */
    public static final String TASK_OPEN = "task.open";
    /** Closes a sink task's partitions. */
    public static final String TASK_CLOSE = "task.close";
    /** Puts a binary sink batch. */
    public static final String TASK_PUT = "task.put";
    /** A sink task's preCommit. */
    public static final String TASK_PRE_COMMIT = "task.pre_commit";
    /** Stops a task. */
    public static final String TASK_STOP = "task.stop";

    /** The host's request for a task's or connector's offsets. */
    public static final String OFFSETS_READ = "offsets.read";
    /** The host's request to write a record to a sink's dead letter queue. */
    public static final String TASK_REPORT = "task.report";
    /** Notice: ConnectorContext.requestTaskReconfiguration(). */
    public static final String CONNECTOR_RECONFIGURE = "connector.reconfigure";
    /** Notice: ConnectorContext.raiseError(). */
    public static final String CONNECTOR_ERROR = "connector.error";
    /** Notice: SinkTaskContext.requestCommit(). */
    public static final String TASK_REQUEST_COMMIT = "task.request_commit";
    /** Notice: SinkTaskContext.offset(...). */
    public static final String TASK_REWIND = "task.rewind";
    /** Notice: SinkTaskContext.pause(...). */
    public static final String TASK_PAUSE = "task.pause";
    /** Notice: SinkTaskContext.resume(...). */
    public static final String TASK_RESUME = "task.resume";

    /** The requests the agent sends and the host serves. */
    public static final List<String> AGENT_REQUESTS = List.of(HOST_HELLO, PLUGINS_LIST, CONNECTOR_VALIDATE,
            CONNECTOR_CONFIG_DEF, CONNECTOR_START, CONNECTOR_TASK_CONFIGS, CONNECTOR_STOP, CONNECTOR_ALTER_OFFSETS,
            TASK_START, TASK_POLL, TASK_COMMIT_RECORDS, TASK_COMMIT, TASK_OPEN, TASK_CLOSE, TASK_PUT, TASK_PRE_COMMIT,
            TASK_STOP);
    /** The requests the host sends and the agent serves. */
    public static final List<String> HOST_REQUESTS = List.of(OFFSETS_READ, TASK_REPORT);
    /** The notices the host sends. */
    public static final List<String> NOTICES = List.of(CONNECTOR_RECONFIGURE, CONNECTOR_ERROR, TASK_REQUEST_COMMIT,
            TASK_REWIND, TASK_PAUSE, TASK_RESUME);

    private Protocol() {
    }

    /**
     * Checks the protocol version the agent stated in host.hello.
     *
     * @throws IllegalStateException naming both versions when it is not this host's
     */
    static void checkAgent(int agentVersion) {
        if (agentVersion != VERSION) {
            throw new IllegalStateException("the agent speaks connector host protocol " + agentVersion
                    + "; this connector host speaks " + VERSION + ": use the host jar of the agent's release");
        }
    }
}
