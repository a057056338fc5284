package io.sluice.connect.host;

import java.util.List;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.runtime.TransformationStage;
import org.apache.kafka.connect.runtime.errors.Stage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task's transformations with their predicates, built by Kafka's ConnectorConfig from the
 * connector config's {@code transforms} and {@code predicates}, applied in order.
 */
public final class TransformChain<R extends ConnectRecord<R>> implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TransformChain.class);

    private final List<TransformationStage<R>> stages;
    private final ErrorTolerance tolerance;

    public TransformChain(List<TransformationStage<R>> stages, ErrorTolerance tolerance) {
        this.stages = stages;
        this.tolerance = tolerance;
    }

    /**
     * The record after every stage; null when a transformation dropped it, or failed (the
     * attempt then has the failure) and the failure is tolerated.
     */
    public R apply(ErrorTolerance.Attempt attempt, R record) {
        R current = record;
        for (TransformationStage<R> stage : stages) {
            R input = current;
            current = tolerance.run(attempt, Stage.TRANSFORMATION, stage.transformClass(), () -> stage.apply(input));
            if (current == null) {
                return null;
            }
        }
        return current;
    }

    @Override
    public void close() {
        for (TransformationStage<R> stage : stages) {
            try {
                stage.close();
            } catch (RuntimeException e) {
                log.warn("closing transformation {} failed", stage.transformClass().getName(), e);
            }
        }
    }
}
