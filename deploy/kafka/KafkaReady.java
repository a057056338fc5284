// Readiness check for the test broker, compiled and run by kafka-up.sh with
// the Kafka jars of the Maven cache on the class path (no extra download). A TCP connect alone is not enough: this
// waits until the broker answers Kafka requests and lists itself in the
// cluster metadata, then asks once for a group and a transaction coordinator
// so that __consumer_offsets and __transaction_state exist before the first
// test (their creation would otherwise fall into the first test's timeouts).
//
// Usage: java -cp '<classes>:<cache>/*' KafkaReady BOOTSTRAP TIMEOUT_SECONDS
// Exit 0 when ready, 1 when the deadline passed (the last error on stderr).

import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeTransactionsOptions;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;

public class KafkaReady {
    interface Step {
        String run(Admin admin, int timeoutMs) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[1]));
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "sluice-kafka-ready");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        p.put(AdminClientConfig.RECONNECT_BACKOFF_MS_CONFIG, "100");
        p.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        p.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "100");
        try (Admin admin = Admin.create(p)) {
            // ApiVersions + Metadata: the broker answers and has registered.
            step(deadline, "cluster metadata", admin, (a, ms) -> {
                var r = a.describeCluster(new DescribeClusterOptions().timeoutMs(ms));
                var nodes = r.nodes().get();
                if (nodes.isEmpty()) throw new IllegalStateException("no broker in metadata yet");
                return "cluster " + r.clusterId().get() + ", brokers " + nodes;
            });
            // FindCoordinator(GROUP) creates __consumer_offsets.
            step(deadline, "group coordinator", admin, (a, ms) -> {
                try {
                    var d = a.describeConsumerGroups(List.of("sluice-kafka-ready"),
                            new DescribeConsumerGroupsOptions().timeoutMs(ms)).all().get();
                    return "group coordinator " + d.get("sluice-kafka-ready").coordinator();
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof GroupIdNotFoundException) return "group coordinator up";
                    throw e;
                }
            });
            // FindCoordinator(TRANSACTION) creates __transaction_state.
            step(deadline, "transaction coordinator", admin, (a, ms) -> {
                try {
                    a.describeTransactions(List.of("sluice-kafka-ready"),
                            new DescribeTransactionsOptions().timeoutMs(ms)).all().get();
                    return "transaction coordinator up";
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof TransactionalIdNotFoundException) return "transaction coordinator up";
                    throw e;
                }
            });
        }
    }

    static void step(long deadline, String what, Admin admin, Step s) throws Exception {
        Throwable last = null;
        long left;
        while ((left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())) > 0) {
            try {
                System.out.println("ready: " + s.run(admin, (int) Math.max(100, Math.min(5000, left))));
                return;
            } catch (Exception e) {
                last = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
                Thread.sleep(250);
            }
        }
        System.err.println("not ready: " + what + ": " + last);
        System.exit(1);
    }
}
