/*
 * Compatibility shim for the conformance worker (deploy/connect/README.md).
 *
 * connect-file 4.4.0 is not served by the Maven Central this project reaches,
 * so the worker runs connect-file 4.3.1. Its connectors' version() calls
 * org.apache.kafka.common.utils.AppInfoParser.getVersion(), which Kafka 4.4
 * moved to org.apache.kafka.common.utils.internals; without this class the
 * 4.3.1 file connectors fail with NoClassDefFoundError on 4.4 clients. This
 * class only forwards to the 4.4 one, so they report kafka-clients' version.
 */
package org.apache.kafka.common.utils;

/** Forwards the two lookups connect-file 4.3.1 makes to Kafka 4.4's AppInfoParser. */
public final class AppInfoParser {
    private AppInfoParser() {
    }

    /** The kafka-clients version, for example 4.4.0. */
    public static String getVersion() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
    }

    /** The kafka-clients commit id. */
    public static String getCommitId() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getCommitId();
    }
}
