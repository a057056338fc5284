package io.sluice.connect.host;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.TransactionContext;

/**
 * A source for the host's tests of exactly-once support: its preflight answers come from its
 * config ("probe.eos" and "probe.boundaries": SUPPORTED, UNSUPPORTED, null or throw), and its
 * task returns the records "r0".."r3" once, asking its TransactionContext to commit after r0,
 * abort after r2 and commit after the batch.
 */
public class ProbeSourceConnector extends SourceConnector {
    private Map<String, String> props;

    @Override
    public void start(Map<String, String> props) {
        this.props = props;
    }

    @Override
    public Class<? extends Task> taskClass() {
        return ProbeSourceTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        return List.of(props);
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
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> config) {
        String answer = answer(config, "probe.eos");
        return answer == null ? null : ExactlyOnceSupport.valueOf(answer);
    }

    @Override
    public ConnectorTransactionBoundaries canDefineTransactionBoundaries(Map<String, String> config) {
        String answer = answer(config, "probe.boundaries");
        return answer == null ? null : ConnectorTransactionBoundaries.valueOf(answer);
    }

    private static String answer(Map<String, String> config, String key) {
        String answer = config.getOrDefault(key, "null");
        if (answer.equals("throw")) {
            throw new IllegalStateException("cannot tell without the database");
        }
        return answer.equals("null") ? null : answer;
    }

    /** The probe's task. */
    public static class ProbeSourceTask extends SourceTask {
        /** How long making a task takes (its constructor): a test's window for requests meanwhile. */
        static volatile long buildMillis;

        private boolean polled;

        public ProbeSourceTask() {
            if (buildMillis > 0) {
                try {
                    Thread.sleep(buildMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public void start(Map<String, String> props) {
        }

        @Override
        public List<SourceRecord> poll() {
            if (polled) {
                return null;
            }
            polled = true;
            TransactionContext txn = context.transactionContext();
            List<SourceRecord> out = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                out.add(new SourceRecord(Map.of("probe", "p"), Map.of("n", (long) i), "probe-out",
                        Schema.STRING_SCHEMA, "r" + i));
            }
            if (txn != null) {
                txn.commitTransaction(out.get(0));
                txn.abortTransaction(out.get(2));
                txn.commitTransaction();
            }
            return out;
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
