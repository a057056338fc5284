package io.sluice.connect.host;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.utils.internals.AppInfoParser;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the agent's requests on one connection: routes each op to the connectors or the tasks
 * (each of which runs on its own thread) and answers the host-wide ops itself.
 */
public final class Host implements Connection.RequestHandler {
    private static final Logger log = LoggerFactory.getLogger(Host.class);

    /** This host's version, reported by host.hello. */
    public static final String VERSION = "0.1.0";

    /** How long the host waits for its tasks and connectors to stop once the agent is gone. */
    private static final long STOP_TIMEOUT_SECONDS = 10;

    private final PluginCatalog catalog;
    private final Connection connection;
    private final Connectors connectors;
    private final Tasks tasks;
    private final HostMetrics metrics;
    /**
     * For ops bound to no started connector or task (list, validate, config_def, alter_offsets)
     * and for building a task before it has its thread: they may be slow (a plugin's validate can
     * reach a database) and must not hold up the reader thread, and they share no state, so a
     * pool.
     */
    private final ExecutorService shared = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "host-ops");
        thread.setDaemon(true);
        return thread;
    });

    public Host(PluginCatalog catalog, Connection connection) {
        this.catalog = catalog;
        this.connection = connection;
        this.metrics = new HostMetrics("sluice-connect-host");
        this.connectors = new Connectors(catalog.plugins(), connection, metrics);
        this.tasks = new Tasks(catalog.plugins(), connection, metrics, shared);
    }

    /** Serves until the agent closes the socket, then stops what still runs. */
    public void serve() throws IOException {
        try {
            connection.serve(this);
        } finally {
            // Give sinks the chance to flush and close what they write, but not forever: the
            // agent that would use their answers is gone.
            try {
                CompletableFuture.allOf(tasks.stopAll(), connectors.stopAll()).get(STOP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            } catch (Exception e) {
                log.warn("not every task and connector stopped cleanly", Errors.unwrap(e));
            }
            shared.shutdownNow();
            metrics.close();
            log.info("the agent closed the connection; the host is done");
        }
    }

    @Override
    public CompletableFuture<byte[]> handle(Frame request) {
        String op = request.op();
        if (op.equals(Protocol.TASK_PUT)) {
            return tasks.put(request.body()); // binary: the task id comes first in the batch
        }
        ObjectNode body = Json.object(request.body());
        return switch (op) {
            case Protocol.HOST_HELLO -> hello(body);
            case Protocol.PLUGINS_LIST -> CompletableFuture.supplyAsync(catalog::listJson, shared);
            case Protocol.CONNECTOR_VALIDATE -> CompletableFuture.supplyAsync(() -> connectors.validate(body), shared);
            case Protocol.CONNECTOR_CONFIG_DEF -> CompletableFuture.supplyAsync(() -> connectors.configDef(body), shared);
            case Protocol.CONNECTOR_ALTER_OFFSETS -> CompletableFuture.supplyAsync(() -> connectors.alterOffsets(body), shared);
            case Protocol.CONNECTOR_START -> connectors.start(body);
            case Protocol.CONNECTOR_TASK_CONFIGS -> connectors.taskConfigs(body);
            case Protocol.CONNECTOR_STOP -> connectors.stop(body);
            case Protocol.TASK_START -> tasks.start(body);
            case Protocol.TASK_POLL -> tasks.poll(body);
            case Protocol.TASK_COMMIT_RECORDS -> tasks.commitRecords(body);
            case Protocol.TASK_COMMIT -> tasks.commit(body);
            case Protocol.TASK_OPEN -> tasks.open(body);
            case Protocol.TASK_CLOSE -> tasks.close(body);
            case Protocol.TASK_PRE_COMMIT -> tasks.preCommit(body);
            case Protocol.TASK_STOP -> tasks.stop(body);
            default -> CompletableFuture.failedFuture(new UnsupportedOperationException("unknown op \"" + op + "\""));
        };
    }

    /**
     * Answers host.hello: the host's version, the Kafka version it runs and its protocol version;
     * fails, naming both versions, when the agent states another protocol version.
     */
    static CompletableFuture<byte[]> hello(ObjectNode request) {
        int agentVersion = request.path("protocol").asInt(0);
        try {
            Protocol.checkAgent(agentVersion);
        } catch (IllegalStateException e) {
            log.error("refusing the agent: {}", e.getMessage());
            return CompletableFuture.failedFuture(e);
        }
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("version", VERSION);
        reply.put("kafka_version", AppInfoParser.getVersion());
        reply.put("protocol", Protocol.VERSION);
        return CompletableFuture.completedFuture(Json.bytes(reply));
    }
}
