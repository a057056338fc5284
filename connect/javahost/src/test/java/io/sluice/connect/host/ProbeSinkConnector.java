package io.sluice.connect.host;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/**
 * A sink connector for tests that records what it is given and uses its contexts on request:
 * the connector asks for reconfiguration or raises an error as its config says; its task acts on
 * the values it is put ("pause", "rewind", "commit", "retry"; "report" reports the record to the
 * errantRecordReporter and waits for the write, "report-new" reports a record it made).
 */
public class ProbeSinkConnector extends SinkConnector {
    static final BlockingQueue<SinkRecord> PUT = new LinkedBlockingQueue<>();
    static final BlockingQueue<Map<TopicPartition, Long>> ALTERED = new LinkedBlockingQueue<>();

    private Map<String, String> config;

    @Override
    public void start(Map<String, String> props) {
        config = props;
        if (Boolean.parseBoolean(props.get("probe.reconfigure"))) {
            context().requestTaskReconfiguration();
        }
        if (Boolean.parseBoolean(props.get("probe.raise"))) {
            context().raiseError(new ConnectException("the probe failed on purpose"));
        }
    }

    @Override
    public Class<? extends Task> taskClass() {
        return ProbeTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> configs = new ArrayList<>();
        for (int i = 0; i < Integer.parseInt(config.getOrDefault("probe.tasks", "1")); i++) {
            configs.add(Map.of("probe.index", Integer.toString(i)));
        }
        return configs;
    }

    @Override
    public void stop() {
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef();
    }

    @Override
    public String version() {
        return "probe";
    }

    @Override
    public boolean alterOffsets(Map<String, String> connectorConfig, Map<TopicPartition, Long> offsets) {
        ALTERED.add(offsets);
        return true;
    }

    /** The probe's task. */
    public static class ProbeTask extends SinkTask {
        @Override
        public void start(Map<String, String> props) {
        }

        @Override
        public void put(Collection<SinkRecord> records) {
            for (SinkRecord r : records) {
                // The consumer's partition, whatever a transformation made of the topic.
                TopicPartition tp = new TopicPartition(r.originalTopic(), r.originalKafkaPartition());
                switch (String.valueOf(r.value())) {
                    case "pause" -> context.pause(tp);
                    case "rewind" -> context.offset(tp, 5L);
                    case "commit" -> context.requestCommit();
                    case "retry" -> throw new RetriableException("try again");
                    case "report", "report-new" -> report(r);
                    default -> { }
                }
                PUT.add(r);
            }
        }

        private void report(SinkRecord r) {
            ErrantRecordReporter reporter = context.errantRecordReporter();
            if (reporter == null) {
                throw new ConnectException("no reporter");
            }
            SinkRecord reported = String.valueOf(r.value()).equals("report") ? r
                    : r.newRecord(r.topic(), r.kafkaPartition(), r.keySchema(), r.key(), r.valueSchema(), "made", r.timestamp());
            try {
                // Waiting inside put must not deadlock: the agent writes while put runs.
                reporter.report(reported, new ConnectException("cannot write " + r.value())).get(10, TimeUnit.SECONDS);
            } catch (InterruptedException | ExecutionException | TimeoutException e) {
                throw new ConnectException(e);
            }
        }

        @Override
        public Map<TopicPartition, OffsetAndMetadata> preCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
            return Map.of(); // commit nothing: the agent must not commit what the task did not say
        }

        @Override
        public void stop() {
        }

        @Override
        public String version() {
            return "probe";
        }
    }
}
