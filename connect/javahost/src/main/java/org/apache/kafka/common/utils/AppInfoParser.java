package org.apache.kafka.common.utils;

import org.apache.kafka.common.metrics.Metrics;

/**
 * Compatibility for plugins built against Kafka before 4.4, which moved this class to
 * {@code org.apache.kafka.common.utils.internals}: Kafka's own connect-file 4.3 reports its
 * version() with it (Kafka's scanner says "undefined" without it), and so do many plugins. The
 * connector host puts it back, delegating to the class's new home. Part of the host, not of Kafka.
 */
public final class AppInfoParser {
    private AppInfoParser() {}

    /** The kafka-clients version: the host's, 4.4.0. */
    public static String getVersion() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
    }

    /** The kafka-clients commit id. */
    public static String getCommitId() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getCommitId();
    }

    /** Registers a client's app-info MBean, as Kafka's clients do. */
    public static void registerAppInfo(String prefix, String id, Metrics metrics, long nowMs) {
        org.apache.kafka.common.utils.internals.AppInfoParser.registerAppInfo(prefix, id, metrics, nowMs);
    }

    /** Unregisters what registerAppInfo registered. */
    public static void unregisterAppInfo(String prefix, String id, Metrics metrics) {
        org.apache.kafka.common.utils.internals.AppInfoParser.unregisterAppInfo(prefix, id, metrics);
    }
}
