package io.sluice.connect.host;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The one thread a connector or a task runs on (Kafka Connect's plugins are not thread-safe),
 * with the plugin's class loader as its context loader, as Kafka Connect's worker sets it.
 */
public final class SerialExecutor {
    private final ExecutorService executor;

    public SerialExecutor(String name, ClassLoader pluginLoader) {
        this.executor = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setContextClassLoader(pluginLoader);
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Runs work on this executor's thread; the future fails with what the work threw. */
    public <T> CompletableFuture<T> call(Callable<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                try {
                    result.complete(work.call());
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
        } catch (RuntimeException rejected) {
            result.completeExceptionally(new IllegalStateException("already stopped", rejected));
        }
        return result;
    }

    /** Lets queued work finish and ends the thread. */
    public void shutdown() {
        executor.shutdown();
    }

    /** Waits a little for the thread to end, so a stop reply means the plugin is done. */
    public void awaitTermination(long millis) throws InterruptedException {
        executor.awaitTermination(millis, TimeUnit.MILLISECONDS);
    }
}
