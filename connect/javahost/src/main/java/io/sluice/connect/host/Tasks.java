package io.sluice.connect.host;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.runtime.isolation.LoaderSwap;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.sink.SinkTask;
import org.apache.kafka.connect.source.SourceTask;

/** The tasks this host runs, by id, and the task ops routed to them. */
public final class Tasks {
    private final Plugins plugins;
    private final Connection connection;
    private final HostMetrics metrics;
    private final Executor setupPool;
    private final Map<String, TaskRunner> running = new ConcurrentHashMap<>();
    /**
     * The last start or stop of each task id still under way: a task's starts and stops run one
     * after another, in the order they arrived, so that a stop arriving while its task is still
     * being built (a quick restart: a rollout's patch, then its rollback) stops that task rather
     * than finding nothing to stop, and the next start does not find it running.
     */
    private final Map<String, CompletableFuture<byte[]>> lifecycle = new ConcurrentHashMap<>();

    public Tasks(Plugins plugins, Connection connection, HostMetrics metrics, Executor setupPool) {
        this.plugins = plugins;
        this.setupPool = setupPool;
        this.connection = connection;
        this.metrics = metrics;
    }

    /**
     * Builds the task, its converters and transformations (on the host's pool: plugin code that
     * must not hold up the reader thread), then starts it on the task's own thread. A failure
     * anywhere is task.start's error reply.
     */
    public CompletableFuture<byte[]> start(ObjectNode body) {
        String id = Json.text(body, "id");
        return inOrder(id, () -> startNow(id, body));
    }

    /** Runs a start or stop of task id once the one before it (if any) is done, either way. */
    private CompletableFuture<byte[]> inOrder(String id, Supplier<CompletableFuture<byte[]>> op) {
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        CompletableFuture<byte[]> previous = lifecycle.put(id, result);
        CompletableFuture<?> before = previous == null ? CompletableFuture.completedFuture(null) : previous;
        before.handle((reply, error) -> null)
                .thenCompose(ignored -> op.get())
                .whenComplete((reply, error) -> {
                    lifecycle.remove(id, result);
                    if (error != null) {
                        result.completeExceptionally(Errors.unwrap(error));
                    } else {
                        result.complete(reply);
                    }
                });
        return result;
    }

    private CompletableFuture<byte[]> startNow(String id, ObjectNode body) {
        if (running.containsKey(id)) {
            throw new ConnectException("task " + id + " is already running on this host");
        }
        return CompletableFuture.supplyAsync(() -> {
            TaskSetup setup = TaskSetup.build(plugins, id, Json.stringMap(body, "connector_config"),
                    Json.stringMap(body, "task_config"), Json.stringMap(body, "worker"));
            // The runners build the transformation chain: plugin code, in the connector's loader.
            try (LoaderSwap swap = plugins.withClassLoader(setup.loader)) {
                if (setup.task instanceof SourceTask) {
                    return (TaskRunner) new SourceTaskRunner(setup, plugins, metrics, connection);
                }
                if (setup.task instanceof SinkTask) {
                    return new SinkTaskRunner(setup, plugins, metrics, connection);
                }
            }
            throw new ConnectException(setup.task.getClass().getName() + " is neither a SourceTask nor a SinkTask");
        }, setupPool).thenCompose(runner -> {
            if (running.putIfAbsent(id, runner) != null) {
                throw new ConnectException("task " + id + " is already running on this host");
            }
            return runner.start().whenComplete((reply, error) -> {
                if (error != null) {
                    // A task that failed to start is gone: Kafka Connect's worker stops it too.
                    running.remove(id, runner);
                    runner.stop();
                }
            });
        });
    }

    public CompletableFuture<byte[]> poll(ObjectNode body) {
        return on(body, TaskRunner::poll);
    }

    public CompletableFuture<byte[]> commitRecords(ObjectNode body) {
        return on(body, r -> r.commitRecords(body));
    }

    public CompletableFuture<byte[]> commit(ObjectNode body) {
        return on(body, TaskRunner::commit);
    }

    public CompletableFuture<byte[]> open(ObjectNode body) {
        return on(body, r -> r.open(body));
    }

    public CompletableFuture<byte[]> close(ObjectNode body) {
        return on(body, r -> r.close(body));
    }

    public CompletableFuture<byte[]> preCommit(ObjectNode body) {
        return on(body, r -> r.preCommit(body));
    }

    /** task.put's binary batch starts with the task id. */
    public CompletableFuture<byte[]> put(byte[] body) {
        BinaryReader batch = new BinaryReader(body);
        return find(batch.string()).put(batch);
    }

    /** Stops the task; a task not running is no error, so a stop after a failed start is fine. */
    public CompletableFuture<byte[]> stop(ObjectNode body) {
        String id = Json.text(body, "id");
        return inOrder(id, () -> {
            TaskRunner runner = running.remove(id);
            if (runner == null) {
                return CompletableFuture.completedFuture(Json.bytes(Map.of()));
            }
            return runner.stop();
        });
    }

    /** Stops every task, for the host's exit; the future completes when all have stopped. */
    public CompletableFuture<Void> stopAll() {
        List<CompletableFuture<byte[]>> stops = new ArrayList<>();
        for (String id : List.copyOf(running.keySet())) {
            TaskRunner runner = running.remove(id);
            if (runner != null) {
                stops.add(runner.stop());
            }
        }
        return CompletableFuture.allOf(stops.toArray(CompletableFuture[]::new));
    }

    private CompletableFuture<byte[]> on(ObjectNode body, Function<TaskRunner, CompletableFuture<byte[]>> op) {
        return op.apply(find(Json.text(body, "id")));
    }

    private TaskRunner find(String id) {
        TaskRunner runner = running.get(id);
        if (runner == null) {
            throw new ConnectException("task " + id + " is not running on this host");
        }
        return runner;
    }
}
