package io.sluice.connect.host;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.runtime.errors.Stage;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/**
 * A sink task's dead letter queue and its {@code SinkTaskContext.errantRecordReporter()}, Kafka
 * Connect's WorkerErrantRecordReporter: the host has no Kafka client, so each record reported
 * is a task.report request, which the agent answers once it has written the record to the DLQ;
 * the Future report() returns completes then. A record the host delivered in the batch being put
 * goes as it was consumed; any other (one the task made or kept from an earlier batch) as the
 * task's converters serialize it, as Kafka Connect does.
 */
public final class SinkErrantReporter implements ErrantRecordReporter {
    private final TaskSetup setup;
    private final Connection connection;
    private final boolean deadLetterQueue;
    /** The records of the batch being put, by identity, as consumed; empty between puts. */
    private volatile Map<SinkRecord, RawRecord> batch = Map.of();
    /** Reports not yet awaited: the agent commits only after they are written. */
    private final List<CompletableFuture<Void>> pending = new ArrayList<>();
    /** The first error reported, which fails the task after its put under errors.tolerance=none. */
    private final AtomicReference<Throwable> firstError = new AtomicReference<>();

    /** @param deadLetterQueue whether the connector has a DLQ topic (else reports are only logged) */
    public SinkErrantReporter(TaskSetup setup, Connection connection, boolean deadLetterQueue) {
        this.setup = setup;
        this.connection = connection;
        this.deadLetterQueue = deadLetterQueue;
    }

    /** Whether the connector has a dead letter queue. */
    public boolean deadLetterQueue() {
        return deadLetterQueue;
    }

    @Override
    public Future<Void> report(SinkRecord record, Throwable error) {
        RawRecord raw = batch.get(record);
        if (raw == null) {
            raw = serialize(record);
        }
        ErrorTolerance.Failure failure = new ErrorTolerance.Failure(Stage.TASK_PUT, SinkTask.class, error);
        CompletableFuture<Void> written = deadLetterQueue ? send(raw, failure) : CompletableFuture.completedFuture(null);
        synchronized (pending) {
            pending.add(written);
        }
        firstError.compareAndSet(null, error);
        // Logs it when asked to; under errors.tolerance=none it throws, after the DLQ write was sent.
        setup.tolerance.failed(new ErrorTolerance.Attempt(raw::logDetail), Stage.TASK_PUT, SinkTask.class, error);
        return written;
    }

    /**
     * Sends a failed record to the agent for the DLQ; the future completes once it is written,
     * or fails with the agent's error.
     */
    CompletableFuture<Void> send(RawRecord raw, ErrorTolerance.Failure failure) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", setup.idText);
        body.put("record", raw.toJson());
        body.putAll(RawRecord.failureJson(failure));
        return connection.request(Protocol.TASK_REPORT, Json.bytes(body)).thenApply(reply -> {
            if (reply.type() == Frame.ERROR) {
                throw new ConnectException("could not write to the dead letter queue: "
                        + Json.object(reply.body()).path("message").asText());
            }
            return null;
        });
    }

    /** The record as the task's converters serialize it, for a record the host did not deliver. */
    private RawRecord serialize(SinkRecord record) {
        TaskConverters c = setup.converters;
        String topic = record.topic();
        byte[] key = c.key().fromConnectData(topic, record.keySchema(), record.key());
        byte[] value = c.value().fromConnectData(topic, record.valueSchema(), record.value());
        RecordHeaders headers = new RecordHeaders();
        if (record.headers() != null) {
            for (Header h : record.headers()) {
                headers.add(h.key(), c.header().fromConnectHeader(topic, h.key(), h.schema(), h.value()));
            }
        }
        return new RawRecord(topic, record.kafkaPartition() == null ? -1 : record.kafkaPartition(), record.kafkaOffset(),
                record.timestamp(), record.timestampType(), key, value, headers);
    }

    /** Names the records of the batch about to be put (delivered record → as consumed). */
    void batch(IdentityHashMap<SinkRecord, RawRecord> delivered) {
        batch = delivered;
    }

    /** Forgets the batch once put returned. */
    void endBatch() {
        batch = Map.of();
    }

    /**
     * Kafka Connect's maybeThrowAsyncError: under errors.tolerance=none a record reported (maybe
     * from another thread, whose report() threw where the task did not see it) fails the task.
     */
    void maybeThrowAsyncError() {
        Throwable error = firstError.get();
        if (error != null && !setup.tolerance.tolerant()) {
            throw new ConnectException("Tolerance exceeded in error handler", error);
        }
    }

    /** Waits until every record reported so far is written: the agent commits after this. */
    void awaitPending() {
        List<CompletableFuture<Void>> waiting;
        synchronized (pending) {
            waiting = new ArrayList<>(pending);
            pending.clear();
        }
        for (CompletableFuture<Void> f : waiting) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ConnectException("interrupted while awaiting the dead letter queue", e);
            } catch (ExecutionException e) {
                throw new ConnectException("a reported record was not written to the dead letter queue", Errors.unwrap(e));
            }
        }
    }
}
