package io.sluice.connect.host;

import java.util.concurrent.Callable;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.runtime.errors.ToleranceType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * errors.tolerance for a task's conversions and transformations: with {@code none} a failure
 * fails the task, as Kafka Connect's "Tolerance exceeded in error handler"; with {@code all} the
 * record is skipped and the failure logged.
 */
public final class ErrorTolerance {
    private static final Logger log = LoggerFactory.getLogger(ErrorTolerance.class);

    private final String taskId;
    private final ToleranceType tolerance;
    private final boolean includeMessages;

    /** A stage's result that may itself be null (a converter's null value), told from a skip. */
    public record Held<T>(T value) {
    }

    public ErrorTolerance(String taskId, ToleranceType tolerance, boolean includeMessages) {
        this.taskId = taskId;
        this.tolerance = tolerance;
        this.includeMessages = includeMessages;
    }

    /**
     * Runs one stage of one record.
     *
     * @param stage what the stage is, for the log ("key conversion", "transformation")
     * @param record the record, logged only when errors.log.include.messages is true
     * @return the stage's result, or null when the failure is tolerated and the record skipped
     */
    public <T> T run(String stage, Object record, Callable<T> work) {
        try {
            return work.call();
        } catch (Exception e) {
            if (tolerance != ToleranceType.ALL) {
                throw new ConnectException("Tolerance exceeded in error handler", e);
            }
            if (includeMessages) {
                log.warn("task {}: {} failed, skipping the record {}", taskId, stage, record, e);
            } else {
                log.warn("task {}: {} failed, skipping the record", taskId, stage, e);
            }
            return null;
        }
    }
}
