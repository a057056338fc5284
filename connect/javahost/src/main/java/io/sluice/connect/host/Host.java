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
        if (op.equals("task.put")) {
            return tasks.put(request.body()); // binary: the task id comes first in the batch
        }
        ObjectNode body = Json.object(request.body());
        return switch (op) {
            case "host.hello" -> CompletableFuture.completedFuture(hello());
            case "plugins.list" -> CompletableFuture.supplyAsync(catalog::listJson, shared);
            case "connector.validate" -> CompletableFuture.supplyAsync(() -> connectors.validate(body), shared);
            case "connector.config_def" -> CompletableFuture.supplyAsync(() -> connectors.configDef(body), shared);
            case "connector.alter_offsets" -> CompletableFuture.supplyAsync(() -> connectors.alterOffsets(body), shared);
            case "connector.start" -> connectors.start(body);
            case "connector.task_configs" -> connectors.taskConfigs(body);
            case "connector.stop" -> connectors.stop(body);
            case "task.start" -> tasks.start(body);
            case "task.poll" -> tasks.poll(body);
            case "task.commit_records" -> tasks.commitRecords(body);
            case "task.commit" -> tasks.commit(body);
            case "task.open" -> tasks.open(body);
            case "task.close" -> tasks.close(body);
            case "task.pre_commit" -> tasks.preCommit(body);
            case "task.stop" -> tasks.stop(body);
            default -> CompletableFuture.failedFuture(new UnsupportedOperationException("unknown op \"" + op + "\""));
        };
    }

    private static byte[] hello() {
        Map<String, String> reply = new LinkedHashMap<>();
        reply.put("version", VERSION);
        reply.put("kafka_version", AppInfoParser.getVersion());
        return Json.bytes(reply);
    }
}
