package io.sluice.connect.host;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Set;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.TransactionContext;

/**
 * The TransactionContext of a source task that defines its own transaction boundaries
 * (transaction.boundary=connector with exactly-once support on). It only keeps the task's
 * requests: poll hands them to the agent in the batch's flags, and the agent's transactional
 * producer ends the transaction there. A request for a record is taken when poll encodes that
 * record; a request for the batch when poll ends. Tasks may call it from any thread.
 */
final class HostTransactionContext implements TransactionContext {
    /** What the agent is asked to do after a record or a batch. */
    enum Request { NONE, COMMIT, ABORT }

    private final Set<SourceRecord> commitAfter = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Set<SourceRecord> abortAfter = Collections.newSetFromMap(new IdentityHashMap<>());
    private boolean commitBatch;
    private boolean abortBatch;

    @Override
    public synchronized void commitTransaction() {
        commitBatch = true;
    }

    @Override
    public synchronized void commitTransaction(SourceRecord record) {
        commitAfter.add(Objects.requireNonNull(record, "record"));
    }

    @Override
    public synchronized void abortTransaction() {
        abortBatch = true;
    }

    @Override
    public synchronized void abortTransaction(SourceRecord record) {
        abortAfter.add(Objects.requireNonNull(record, "record"));
    }

    /** The request for record (an abort wins over a commit, as in Kafka Connect), now cleared. */
    synchronized Request takeRecord(SourceRecord record) {
        boolean abort = abortAfter.remove(record);
        boolean commit = commitAfter.remove(record);
        return abort ? Request.ABORT : commit ? Request.COMMIT : Request.NONE;
    }

    /** The request for the batch just polled, now cleared. */
    synchronized Request takeBatch() {
        Request r = abortBatch ? Request.ABORT : commitBatch ? Request.COMMIT : Request.NONE;
        abortBatch = false;
        commitBatch = false;
        return r;
    }
}
