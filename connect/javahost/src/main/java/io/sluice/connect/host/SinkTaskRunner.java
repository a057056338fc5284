package io.sluice.connect.host;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.IllegalWorkerStateException;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.runtime.SinkConnectorConfig;
import org.apache.kafka.connect.runtime.errors.Stage;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;
import org.apache.kafka.connect.sink.SinkTaskContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A SinkTask: task.put converts the agent's raw records into SinkRecords, transforms them and
 * calls put(); open/close/pre_commit are the task's; what the task asks of its context
 * (rewind, pause, resume, a commit) becomes a notice to the agent.
 */
public final class SinkTaskRunner extends TaskRunner {
    private static final Logger log = LoggerFactory.getLogger(SinkTaskRunner.class);

    private final SinkTask task;
    private final TransformChain<SinkRecord> chain;
    private final Connection connection;
    private final PluginMetrics pluginMetrics;
    /** errantRecordReporter() and the DLQ; null unless a DLQ topic or errors.log.enable is set. */
    private final SinkErrantReporter reporter;
    /** The partitions opened and not closed: SinkTaskContext.assignment(). */
    private final Set<TopicPartition> assignment = ConcurrentHashMap.newKeySet();

    public SinkTaskRunner(TaskSetup setup, Plugins plugins, HostMetrics metrics, Connection connection) {
        super(setup);
        this.task = (SinkTask) setup.task;
        this.chain = setup.transformChain(plugins, metrics);
        this.connection = connection;
        this.pluginMetrics = metrics.forTask(setup.id.connector(), setup.id.task());
        String dlqTopic = setup.connectorConfig.getOrDefault(SinkConnectorConfig.DLQ_TOPIC_NAME_CONFIG, "").trim();
        // Kafka Connect's SinkConnectorConfig.enableErrantRecordReporter().
        this.reporter = !dlqTopic.isEmpty() || setup.tolerance.logEnabled()
                ? new SinkErrantReporter(setup, connection, !dlqTopic.isEmpty()) : null;
    }

    @Override
    public String kind() {
        return "sink";
    }

    @Override
    public CompletableFuture<byte[]> start() {
        return executor.call(() -> {
            task.initialize(new Context());
            task.start(setup.taskConfig);
            return Json.bytes(Map.of("kind", kind()));
        });
    }

    @Override
    public CompletableFuture<byte[]> open(ObjectNode body) {
        List<TopicPartition> partitions = partitions(body.path("partitions"));
        return executor.call(() -> {
            assignment.addAll(partitions);
            task.open(partitions);
            return empty();
        });
    }

    @Override
    public CompletableFuture<byte[]> close(ObjectNode body) {
        List<TopicPartition> partitions = partitions(body.path("partitions"));
        return executor.call(() -> {
            try {
                task.close(partitions);
            } finally {
                partitions.forEach(assignment::remove);
            }
            return empty();
        });
    }

    /**
     * put() with the batch's records (the task id already read), converted and transformed. The
     * reply names the records whose conversion or transformation failed and was tolerated, by
     * index in the batch, for the agent to write to the dead letter queue.
     */
    @Override
    public CompletableFuture<byte[]> put(BinaryReader batch) {
        return executor.call(() -> {
            long count = batch.u32();
            List<SinkRecord> records = new ArrayList<>();
            IdentityHashMap<SinkRecord, RawRecord> delivered = new IdentityHashMap<>();
            List<Map<String, Object>> errant = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                RawRecord raw = read(batch);
                ErrorTolerance.Attempt attempt = new ErrorTolerance.Attempt(raw::logDetail);
                SinkRecord record = convert(attempt, raw);
                if (record != null) {
                    records.add(record);
                    delivered.put(record, raw);
                } else if (attempt.failed() && reporter != null && reporter.deadLetterQueue()) {
                    Map<String, Object> entry = new LinkedHashMap<>();
                    entry.put("index", i);
                    entry.putAll(RawRecord.failureJson(attempt.failure()));
                    errant.add(entry);
                }
            }
            if (reporter == null) {
                task.put(records);
            } else {
                reporter.batch(delivered);
                try {
                    task.put(records);
                } finally {
                    reporter.endBatch();
                }
                reporter.maybeThrowAsyncError();
            }
            return errant.isEmpty() ? empty() : Json.bytes(Map.of("errant", errant));
        });
    }

    /** Reads one record of a binary sink batch (docs/plugins.md). */
    static RawRecord read(BinaryReader in) {
        String topic = in.string();
        int partition = in.i32();
        long offset = in.i64();
        long timestamp = in.i64();
        TimestampType timestampType = switch (in.u8()) {
            case 1 -> TimestampType.CREATE_TIME;
            case 2 -> TimestampType.LOG_APPEND_TIME;
            default -> TimestampType.NO_TIMESTAMP_TYPE;
        };
        byte[] key = in.bytes();
        byte[] value = in.bytes();
        int headerCount = in.u16();
        RecordHeaders headers = new RecordHeaders();
        for (int h = 0; h < headerCount; h++) {
            headers.add(in.string(), in.bytes());
        }
        return new RawRecord(topic, partition, offset, timestamp == Long.MIN_VALUE ? null : timestamp, timestampType,
                key, value, headers);
    }

    /**
     * Converts and transforms one record; null when a transformation dropped it or a stage failed
     * (the attempt has the failure). A failure under errors.tolerance=none fails the put, after
     * the record was written to the dead letter queue, as Kafka Connect reports it before failing.
     */
    private SinkRecord convert(ErrorTolerance.Attempt attempt, RawRecord raw) {
        try {
            return convertAndTransform(attempt, raw);
        } catch (ConnectException e) {
            if (attempt.failed() && reporter != null && reporter.deadLetterQueue()) {
                try {
                    reporter.send(raw, attempt.failure()).get();
                } catch (Exception dlq) {
                    e.addSuppressed(dlq);
                }
            }
            throw e;
        }
    }

    private SinkRecord convertAndTransform(ErrorTolerance.Attempt attempt, RawRecord raw) {
        TaskConverters c = setup.converters;
        ErrorTolerance tolerance = setup.tolerance;
        String topic = raw.topic();
        SchemaAndValue keyData = tolerance.run(attempt, Stage.KEY_CONVERTER, c.key().getClass(),
                () -> orNull(c.key().toConnectData(topic, raw.headers(), raw.key())));
        SchemaAndValue valueData = tolerance.run(attempt, Stage.VALUE_CONVERTER, c.value().getClass(),
                () -> orNull(c.value().toConnectData(topic, raw.headers(), raw.value())));
        ConnectHeaders headers = tolerance.run(attempt, Stage.HEADER_CONVERTER, c.header().getClass(), () -> {
            ConnectHeaders converted = new ConnectHeaders();
            for (org.apache.kafka.common.header.Header h : raw.headers()) {
                converted.add(h.key(), orNull(c.header().toConnectHeader(topic, h.key(), h.value())));
            }
            return converted;
        });
        if (attempt.failed()) {
            return null;
        }
        SinkRecord record = new SinkRecord(topic, raw.partition(), keyData.schema(), keyData.value(),
                valueData.schema(), valueData.value(), raw.offset(), raw.timestamp(), raw.timestampType(), headers);
        return chain.apply(attempt, record);
    }

    /** A converter answering null means no data, as the worker reads it. */
    private static SchemaAndValue orNull(SchemaAndValue data) {
        return data == null ? SchemaAndValue.NULL : data;
    }

    @Override
    public CompletableFuture<byte[]> preCommit(ObjectNode body) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (JsonNode o : body.path("offsets")) {
            offsets.put(new TopicPartition(o.path("topic").asText(), o.path("partition").asInt()),
                    new OffsetAndMetadata(o.path("offset").asLong()));
        }
        return executor.call(() -> {
            Map<TopicPartition, OffsetAndMetadata> committable = task.preCommit(offsets);
            if (reporter != null) {
                // Kafka Connect commits only once the reported records are in the DLQ.
                reporter.awaitPending();
            }
            List<Map<String, Object>> reply = new ArrayList<>();
            if (committable != null) {
                committable.forEach((tp, om) -> reply.add(offset(tp, om.offset())));
            }
            return Json.bytes(Map.of("offsets", reply));
        });
    }

    @Override
    protected void stopTask() {
        try {
            task.stop();
        } finally {
            chain.close();
        }
    }

    private static List<TopicPartition> partitions(JsonNode list) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (JsonNode p : list) {
            partitions.add(new TopicPartition(p.path("topic").asText(), p.path("partition").asInt()));
        }
        return partitions;
    }

    private static Map<String, Object> offset(TopicPartition tp, long offset) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("topic", tp.topic());
        m.put("partition", tp.partition());
        m.put("offset", offset);
        return m;
    }

    private static Map<String, Object> partition(TopicPartition tp) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("topic", tp.topic());
        m.put("partition", tp.partition());
        return m;
    }

    /** The task's SinkTaskContext: requests to the consumer the agent runs become notices. */
    private final class Context implements SinkTaskContext {
        @Override
        public Map<String, String> configs() {
            return setup.taskConfig;
        }

        @Override
        public void offset(Map<TopicPartition, Long> offsets) {
            List<Map<String, Object>> list = new ArrayList<>();
            offsets.forEach((tp, o) -> list.add(SinkTaskRunner.offset(tp, o)));
            notice(Protocol.TASK_REWIND, "offsets", list);
        }

        @Override
        public void offset(TopicPartition tp, long offset) {
            offset(Map.of(tp, offset));
        }

        @Override
        public void timeout(long timeoutMs) {
            // The agent paces redelivery after a RetriableException itself.
            log.debug("task {} asked for a {} ms retry timeout", setup.idText, timeoutMs);
        }

        @Override
        public Set<TopicPartition> assignment() {
            return Set.copyOf(assignment);
        }

        @Override
        public void pause(TopicPartition... partitions) {
            notice(Protocol.TASK_PAUSE, "partitions", assigned(partitions, "pause"));
        }

        @Override
        public void resume(TopicPartition... partitions) {
            notice(Protocol.TASK_RESUME, "partitions", assigned(partitions, "resume"));
        }

        @Override
        public void requestCommit() {
            connection.notice(Protocol.TASK_REQUEST_COMMIT, Json.bytes(Map.of("id", setup.idText)));
        }

        @Override
        public PluginMetrics pluginMetrics() {
            return pluginMetrics;
        }

        @Override
        public ErrantRecordReporter errantRecordReporter() {
            return reporter;
        }

        /** Kafka Connect refuses to pause or resume a partition the task does not have. */
        private List<Map<String, Object>> assigned(TopicPartition[] partitions, String verb) {
            Collection<TopicPartition> asked = Arrays.asList(partitions);
            for (TopicPartition tp : asked) {
                if (!assignment.contains(tp)) {
                    throw new IllegalWorkerStateException("SinkTasks may not " + verb
                            + " partitions that are not currently assigned to them.");
                }
            }
            return asked.stream().map(SinkTaskRunner::partition).toList();
        }

        private void notice(String op, String field, Object value) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("id", setup.idText);
            body.put(field, value);
            connection.notice(op, Json.bytes(body));
        }
    }
}
