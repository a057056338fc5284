package io.sluice.connect.host;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.connect.errors.ConnectException;

/**
 * A started task: its plugin instance, its thread, and the ops the agent sends it. Every op runs
 * on the task's one thread; the kinds override the ops they support.
 */
public abstract class TaskRunner {
    protected final TaskSetup setup;
    protected final SerialExecutor executor;

    protected TaskRunner(TaskSetup setup) {
        this.setup = setup;
        this.executor = new SerialExecutor("task-" + setup.idText, setup.loader);
    }

    /** "source" or "sink", task.start's reply. */
    public abstract String kind();

    /** Initializes and starts the task on its thread. */
    public abstract CompletableFuture<byte[]> start();

    /** Stops the task, closes its converters and transformations, and ends its thread. */
    public CompletableFuture<byte[]> stop() {
        // A stage retrying on the task's thread must give up, or the stop would wait for it.
        setup.tolerance.stop();
        CompletableFuture<byte[]> done = executor.call(() -> {
            try {
                stopTask();
            } finally {
                setup.converters.close();
            }
            return empty();
        });
        executor.shutdown();
        return done;
    }

    /** The kind's stop: the task's stop() and whatever the kind holds. */
    protected abstract void stopTask();

    public CompletableFuture<byte[]> poll() {
        return unsupported("task.poll");
    }

    public CompletableFuture<byte[]> commitRecords(ObjectNode body) {
        return unsupported("task.commit_records");
    }

    public CompletableFuture<byte[]> commit() {
        return unsupported("task.commit");
    }

    public CompletableFuture<byte[]> open(ObjectNode body) {
        return unsupported("task.open");
    }

    public CompletableFuture<byte[]> close(ObjectNode body) {
        return unsupported("task.close");
    }

    public CompletableFuture<byte[]> put(BinaryReader batch) {
        return unsupported("task.put");
    }

    public CompletableFuture<byte[]> preCommit(ObjectNode body) {
        return unsupported("task.pre_commit");
    }

    private CompletableFuture<byte[]> unsupported(String op) {
        return CompletableFuture.failedFuture(new ConnectException(op + " is not an op of " + kind() + " task " + setup.idText));
    }

    protected static byte[] empty() {
        return Json.bytes(Map.of());
    }
}
