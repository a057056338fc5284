package io.sluice.connect.host;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.runtime.errors.Stage;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.source.TransactionContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A SourceTask: task.poll polls, transforms and converts into a binary source batch, keeping each
 * polled record by its seq until task.commit_records hands it to commitRecord; task.commit is
 * commit().
 */
public final class SourceTaskRunner extends TaskRunner {
    private static final Logger log = LoggerFactory.getLogger(SourceTaskRunner.class);
    /** Kafka's "no timestamp" (RecordBatch.NO_TIMESTAMP): the agent's ack carries none. */
    private static final long NO_TIMESTAMP = -1L;

    private final SourceTask task;
    private final TransformChain<SourceRecord> chain;
    private final Connection connection;
    private final PluginMetrics pluginMetrics;
    /** Polled records the agent has not acknowledged yet, by seq, as the task returned them. */
    private final Map<Long, SourceRecord> unacknowledged = new ConcurrentHashMap<>();
    /** The task's TransactionContext when it defines its own transaction boundaries, else null. */
    private final HostTransactionContext transactions;
    private long nextSeq;

    /** A record's flags in a source batch (docs/plugins.md). */
    static final int FLAG_DROPPED = 1;
    static final int FLAG_COMMIT_AFTER = 2;
    static final int FLAG_ABORT_AFTER = 4;
    /** A batch's flags, after its records. */
    static final int BATCH_COMMIT = 1;
    static final int BATCH_ABORT = 2;

    public SourceTaskRunner(TaskSetup setup, Plugins plugins, HostMetrics metrics, Connection connection) {
        super(setup);
        this.task = (SourceTask) setup.task;
        this.chain = setup.transformChain(plugins, metrics);
        this.connection = connection;
        this.pluginMetrics = metrics.forTask(setup.id.connector(), setup.id.task());
        this.transactions = setup.definesTransactions ? new HostTransactionContext() : null;
    }

    @Override
    public String kind() {
        return "source";
    }

    @Override
    public CompletableFuture<byte[]> start() {
        OffsetStorageReader offsets = new HostOffsetReader(connection, setup.idText);
        SourceTaskContext context = new SourceTaskContext() {
            @Override
            public Map<String, String> configs() {
                return setup.taskConfig;
            }

            @Override
            public OffsetStorageReader offsetStorageReader() {
                return offsets;
            }

            @Override
            public PluginMetrics pluginMetrics() {
                return pluginMetrics;
            }

            @Override
            public TransactionContext transactionContext() {
                return transactions;
            }
        };
        return executor.call(() -> {
            task.initialize(context);
            task.start(setup.taskConfig);
            return Json.bytes(Map.of("kind", kind()));
        });
    }

    @Override
    public CompletableFuture<byte[]> poll() {
        return executor.call(() -> {
            List<SourceRecord> polled = task.poll();
            BinaryWriter records = new BinaryWriter();
            int count = 0;
            if (polled != null) {
                for (SourceRecord record : polled) {
                    long seq = nextSeq;
                    nextSeq = (nextSeq + 1) & 0xFFFFFFFFL; // seq is a u32 on the wire
                    int request = recordRequest(record);
                    BinaryWriter encoded = new BinaryWriter();
                    if (encode(record, seq, encoded)) {
                        records.u8(request).raw(encoded.toByteArray());
                        unacknowledged.put(seq, record);
                    } else {
                        // Kafka Connect acknowledges a dropped record at once, with no metadata, and
                        // commits its position: the agent gets the position alone.
                        records.u8(request | FLAG_DROPPED)
                                .bytes(OffsetJson.encode(record.sourcePartition()))
                                .bytes(OffsetJson.encode(record.sourceOffset()));
                        commitRecord(record, null);
                    }
                    count++;
                }
            }
            return new BinaryWriter().i32(count).raw(records.toByteArray()).u8(batchRequest()).toByteArray();
        });
    }

    /** The flags of what the task asked the transaction after record to be. */
    private int recordRequest(SourceRecord record) {
        if (transactions == null) {
            return 0;
        }
        return switch (transactions.takeRecord(record)) {
            case COMMIT -> FLAG_COMMIT_AFTER;
            case ABORT -> FLAG_ABORT_AFTER;
            case NONE -> 0;
        };
    }

    /** The flags of what the task asked the transaction after this batch to be. */
    private int batchRequest() {
        if (transactions == null) {
            return 0;
        }
        return switch (transactions.takeBatch()) {
            case COMMIT -> BATCH_COMMIT;
            case ABORT -> BATCH_ABORT;
            case NONE -> 0;
        };
    }

    /** Transforms and converts one record into out; false if it is not sent (dropped or skipped). */
    private boolean encode(SourceRecord polled, long seq, BinaryWriter out) {
        // Kafka Connect's LogReporter names the record as the task returned it.
        ErrorTolerance.Attempt attempt = new ErrorTolerance.Attempt(() -> ", where source record is = " + polled);
        SourceRecord record = chain.apply(attempt, polled);
        if (record == null) {
            return false;
        }
        TaskConverters c = setup.converters;
        ErrorTolerance tolerance = setup.tolerance;
        String topic = record.topic();
        // Header-aware converters see the record's converted headers, as the worker's producer record has them.
        RecordHeaders kafkaHeaders = tolerance.run(attempt, Stage.HEADER_CONVERTER, c.header().getClass(), () -> {
            RecordHeaders converted = new RecordHeaders();
            for (Header header : record.headers()) {
                converted.add(header.key(), c.header().fromConnectHeader(topic, header.key(), header.schema(), header.value()));
            }
            return converted;
        });
        byte[] key = tolerance.run(attempt, Stage.KEY_CONVERTER, c.key().getClass(),
                () -> c.key().fromConnectData(topic, kafkaHeaders, record.keySchema(), record.key()));
        byte[] value = tolerance.run(attempt, Stage.VALUE_CONVERTER, c.value().getClass(),
                () -> c.value().fromConnectData(topic, kafkaHeaders, record.valueSchema(), record.value()));
        if (attempt.failed()) {
            return false;
        }
        org.apache.kafka.common.header.Header[] headers = kafkaHeaders.toArray();
        out.string(topic)
                .i32(record.kafkaPartition() == null ? -1 : record.kafkaPartition())
                .i64(record.timestamp() == null ? Long.MIN_VALUE : record.timestamp())
                .bytes(key)
                .bytes(value)
                .u16(headers.length);
        for (org.apache.kafka.common.header.Header h : headers) {
            out.string(h.key()).bytes(h.value());
        }
        out.bytes(OffsetJson.encode(record.sourcePartition()))
                .bytes(OffsetJson.encode(record.sourceOffset()))
                .i32((int) seq);
        return true;
    }

    @Override
    public CompletableFuture<byte[]> commitRecords(ObjectNode body) {
        return executor.call(() -> {
            for (JsonNode ack : body.path("records")) {
                long seq = ack.path("seq").asLong();
                SourceRecord record = unacknowledged.remove(seq);
                if (record == null) {
                    throw new ConnectException("task " + setup.idText + " has no record with seq " + seq);
                }
                TopicPartition tp = new TopicPartition(ack.path("topic").asText(), ack.path("partition").asInt());
                RecordMetadata metadata = new RecordMetadata(tp, ack.path("offset").asLong(), 0,
                        NO_TIMESTAMP, -1, -1);
                commitRecord(record, metadata);
            }
            return empty();
        });
    }

    /**
     * commitRecord, whose failure Kafka Connect only logs: the record is in Kafka either way, and
     * the other acknowledged records still get theirs.
     */
    private void commitRecord(SourceRecord record, RecordMetadata metadata) {
        try {
            task.commitRecord(record, metadata);
        } catch (Throwable t) {
            log.error("task {}: commitRecord threw", setup.idText, t);
        }
    }

    /** commit(), whose failure Kafka Connect logs without failing the task: the offsets are committed. */
    @Override
    public CompletableFuture<byte[]> commit() {
        return executor.call(() -> {
            try {
                task.commit();
            } catch (Throwable t) {
                log.error("task {}: commit threw", setup.idText, t);
            }
            return empty();
        });
    }

    @Override
    protected void stopTask() {
        try {
            task.stop();
        } finally {
            chain.close();
            unacknowledged.clear();
        }
    }
}
