package io.sluice.connect.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.errors.Stage;
import org.apache.kafka.connect.runtime.errors.ToleranceType;
import org.apache.kafka.connect.util.ConnectorTaskId;
import org.junit.jupiter.api.Test;

/** errors.retry.*, errors.tolerance and errors.log.* of a task's stages. */
class ErrorToleranceTest {
    private static final ConnectorTaskId ID = new ConnectorTaskId("files", 2);
    private static final RawRecord RAW = new RawRecord("in", 0, 5, 1_700_000_000_000L, TimestampType.CREATE_TIME,
            null, "x".getBytes(StandardCharsets.UTF_8), new RecordHeaders());

    private static ErrorTolerance tolerance(ToleranceType type, long retryTimeout, boolean log, boolean include) {
        return new ErrorTolerance(ID, type, retryTimeout, 50, log, include);
    }

    /** Fails with a RetriableException the first n calls, then answers "ok". */
    private static final class Flaky {
        final AtomicInteger calls = new AtomicInteger();
        final int failures;

        Flaky(int failures) {
            this.failures = failures;
        }

        String call() {
            if (calls.incrementAndGet() <= failures) {
                throw new RetriableException("not yet");
            }
            return "ok";
        }
    }

    @Test
    void retriesARetriableExceptionWithinTheTimeout() {
        Flaky flaky = new Flaky(2);
        ErrorTolerance.Attempt attempt = new ErrorTolerance.Attempt(RAW::logDetail);
        long start = System.nanoTime();
        String got = tolerance(ToleranceType.NONE, 10_000, false, false).run(attempt, Stage.TRANSFORMATION, Flaky.class, flaky::call);
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertEquals("ok", got);
        assertFalse(attempt.failed());
        assertEquals(3, flaky.calls.get());
        // 300 ms doubling is more than errors.retry.delay.max.ms=50: each wait is below 50 ms.
        assertTrue(ms < 1_000, "waited " + ms + " ms");
    }

    @Test
    void theDefaultTimeoutRetriesNothing() {
        Flaky flaky = new Flaky(1);
        ConnectException e = assertThrows(ConnectException.class, () -> tolerance(ToleranceType.NONE, 0, false, false)
                .run(new ErrorTolerance.Attempt(RAW::logDetail), Stage.VALUE_CONVERTER, Flaky.class, flaky::call));
        assertEquals("Tolerance exceeded in error handler", e.getMessage());
        assertTrue(e.getCause() instanceof RetriableException);
        assertEquals(1, flaky.calls.get());
    }

    @Test
    void retriesEndAtTheTimeoutThenTheRecordIsSkippedUnderAll() {
        Flaky flaky = new Flaky(Integer.MAX_VALUE);
        ErrorTolerance.Attempt attempt = new ErrorTolerance.Attempt(RAW::logDetail);
        long start = System.nanoTime();
        assertNull(tolerance(ToleranceType.ALL, 400, false, false).run(attempt, Stage.KEY_CONVERTER, Flaky.class, flaky::call));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(attempt.failed());
        assertEquals(Stage.KEY_CONVERTER, attempt.failure().stage());
        assertTrue(flaky.calls.get() > 2, flaky.calls.get() + " calls");
        assertTrue(ms >= 350 && ms < 2_000, "retried for " + ms + " ms");
    }

    @Test
    void retryingForeverEndsWhenTheTaskStops() throws Exception {
        Flaky flaky = new Flaky(Integer.MAX_VALUE);
        ErrorTolerance tolerance = tolerance(ToleranceType.ALL, -1, false, false);
        ErrorTolerance.Attempt attempt = new ErrorTolerance.Attempt(RAW::logDetail);
        Thread stopper = new Thread(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                return;
            }
            tolerance.stop();
        });
        stopper.start();
        assertNull(tolerance.run(attempt, Stage.TRANSFORMATION, Flaky.class, flaky::call));
        stopper.join();
        assertTrue(attempt.failed());
    }

    @Test
    void aNonRetriableFailureIsNotRetriedAndLaterStagesAreSkipped() {
        AtomicInteger calls = new AtomicInteger();
        ErrorTolerance tolerance = tolerance(ToleranceType.ALL, 10_000, false, false);
        ErrorTolerance.Attempt attempt = new ErrorTolerance.Attempt(RAW::logDetail);
        assertNull(tolerance.run(attempt, Stage.VALUE_CONVERTER, JsonConverter.class, () -> {
            calls.incrementAndGet();
            throw new DataException("not JSON");
        }));
        assertEquals(1, calls.get());
        assertEquals(JsonConverter.class, attempt.failure().executingClass());
        assertNull(tolerance.run(attempt, Stage.HEADER_CONVERTER, Object.class, () -> "never"));
        assertEquals(Stage.VALUE_CONVERTER, attempt.failure().stage(), "the first failure stays");
    }

    /** What the stage logs on System.err, where slf4j-simple writes. */
    private static String logged(ErrorTolerance tolerance) {
        PrintStream saved = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setErr(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            tolerance.run(new ErrorTolerance.Attempt(RAW::logDetail), Stage.VALUE_CONVERTER, JsonConverter.class, () -> {
                throw new DataException("not JSON");
            });
        } finally {
            System.setErr(saved);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aToleratedFailureIsLoggedOnlyWhenErrorsLogEnable() {
        assertFalse(logged(tolerance(ToleranceType.ALL, 0, false, true)).contains("Error encountered"));
        String plain = logged(tolerance(ToleranceType.ALL, 0, true, false));
        assertTrue(plain.contains("Error encountered in task files-2. Executing stage 'VALUE_CONVERTER' with class '"
                + JsonConverter.class.getName() + "'."), plain);
        assertTrue(plain.contains("DataException: not JSON"), plain);
        assertFalse(plain.contains("where consumed record"), plain);
        String detailed = logged(tolerance(ToleranceType.ALL, 0, true, true));
        assertTrue(detailed.contains("with class '" + JsonConverter.class.getName() + "', where consumed record is "
                + "{topic='in', partition=0, offset=5, timestamp=1700000000000, timestampType=CreateTime}."), detailed);
    }
}
