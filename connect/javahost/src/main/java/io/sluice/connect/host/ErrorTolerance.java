package io.sluice.connect.host;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.errors.Stage;
import org.apache.kafka.connect.runtime.errors.ToleranceType;
import org.apache.kafka.connect.util.ConnectorTaskId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task's error handling for its conversions and transformations, as Kafka Connect's
 * RetryWithToleranceOperator and LogReporter do it: a {@link RetriableException} is tried again
 * with exponential backoff (300 ms doubling, past errors.retry.delay.max.ms a random delay below
 * it) until errors.retry.timeout (0: no retry, -1: forever); a failure then fails the task under
 * errors.tolerance=none ("Tolerance exceeded in error handler") or skips the record under
 * {@code all}, and is logged when errors.log.enable is true, the record too when
 * errors.log.include.messages is. Where a skipped record goes beyond the log (a sink's dead
 * letter queue) is the runner's: it reads the {@link Attempt}'s failure.
 */
public final class ErrorTolerance {
    private static final Logger log = LoggerFactory.getLogger(ErrorTolerance.class);
    /** Kafka Connect's first backoff; each retry doubles it. */
    static final long RETRIES_DELAY_MIN_MS = 300;

    private final ConnectorTaskId id;
    private final ToleranceType tolerance;
    private final long retryTimeoutMs;
    private final long maxDelayMs;
    private final boolean logEnabled;
    private final boolean includeMessages;
    /** Counted down by {@link #stop()}: a backoff in progress ends, and no retry follows. */
    private final CountDownLatch stopRequested = new CountDownLatch(1);

    /** What failed in a record's stage: Kafka Connect's stage, the class that ran it, the error. */
    public record Failure(Stage stage, Class<?> executingClass, Throwable error) {
    }

    /**
     * One record's way through its stages, Kafka Connect's ProcessingContext: once a stage failed,
     * the record's later stages are not run.
     */
    public static final class Attempt {
        private final Supplier<String> detail;
        private Failure failure;

        /** @param detail the record as the log names it with errors.log.include.messages */
        public Attempt(Supplier<String> detail) {
            this.detail = detail;
        }

        /** Whether a stage of the record failed. */
        public boolean failed() {
            return failure != null;
        }

        /** The failure; null while none. */
        public Failure failure() {
            return failure;
        }
    }

    /** The handling connConfig's errors.* keys ask for, for task id. */
    public ErrorTolerance(ConnectorTaskId id, ConnectorConfig connConfig) {
        this(id, connConfig.errorToleranceType(), connConfig.errorRetryTimeout(), connConfig.errorMaxDelayInMillis(),
                connConfig.enableErrorLog(), connConfig.includeRecordDetailsInErrorLog());
    }

    ErrorTolerance(ConnectorTaskId id, ToleranceType tolerance, long retryTimeoutMs, long maxDelayMs,
                   boolean logEnabled, boolean includeMessages) {
        this.id = id;
        this.tolerance = tolerance;
        this.retryTimeoutMs = retryTimeoutMs;
        this.maxDelayMs = maxDelayMs;
        this.logEnabled = logEnabled;
        this.includeMessages = includeMessages;
    }

    /** Whether failures are skipped (errors.tolerance=all) rather than fatal. */
    public boolean tolerant() {
        return tolerance == ToleranceType.ALL;
    }

    /** Whether failures are logged (errors.log.enable). */
    public boolean logEnabled() {
        return logEnabled;
    }

    /**
     * Runs one stage of the attempt's record, retrying a RetriableException.
     *
     * @return the stage's result; null when the stage failed (or an earlier one had), which
     *     {@link Attempt#failed()} tells from a stage's own null
     * @throws ConnectException "Tolerance exceeded in error handler" when the stage failed under
     *     errors.tolerance=none
     */
    public <T> T run(Attempt attempt, Stage stage, Class<?> executingClass, Callable<T> work) {
        if (attempt.failed()) {
            return null;
        }
        long deadline = retryTimeoutMs >= 0 ? System.currentTimeMillis() + retryTimeoutMs : Long.MAX_VALUE;
        for (int tries = 1; ; tries++) {
            try {
                return work.call();
            } catch (RetriableException e) {
                if (System.currentTimeMillis() >= deadline || !backoff(tries, deadline)) {
                    failed(attempt, stage, executingClass, e);
                    return null;
                }
            } catch (Exception e) {
                failed(attempt, stage, executingClass, e);
                return null;
            }
        }
    }

    /**
     * Records a failure that happened outside {@link #run} (a record the task reported), logs it
     * when asked to, and throws under errors.tolerance=none.
     */
    public void failed(Attempt attempt, Stage stage, Class<?> executingClass, Throwable error) {
        attempt.failure = new Failure(stage, executingClass, error);
        if (logEnabled) {
            log.error(message(attempt), error);
        }
        if (!tolerant()) {
            throw new ConnectException("Tolerance exceeded in error handler", error);
        }
    }

    /** Kafka Connect's LogReporter message. */
    String message(Attempt attempt) {
        Failure f = attempt.failure;
        StringBuilder b = new StringBuilder("Error encountered in task ").append(id).append(". Executing stage '")
                .append(f.stage().name()).append("' with class '")
                .append(f.executingClass() == null ? "null" : f.executingClass().getName()).append('\'');
        if (includeMessages) {
            b.append(attempt.detail.get());
        }
        return b.append('.').toString();
    }

    /**
     * Waits before try number tries + 1, Kafka Connect's backoff; false when the task is stopping,
     * which ends the retries.
     */
    private boolean backoff(int tries, long deadline) {
        long delay = RETRIES_DELAY_MIN_MS << Math.min(tries - 1, 40);
        if (delay > maxDelayMs) {
            delay = maxDelayMs > 0 ? ThreadLocalRandom.current().nextLong(maxDelayMs) : 0;
        }
        delay = Math.max(0, Math.min(delay, deadline - System.currentTimeMillis()));
        log.debug("task {}: retrying in {} ms", id, delay);
        try {
            return !stopRequested.await(delay, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Ends the retries of a stopping task, from any thread. */
    public void stop() {
        stopRequested.countDown();
    }
}
