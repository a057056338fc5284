package org.apache.kafka.common.utils;

/**
 * Compatibility for plugins built against Kafka before 4.4, which moved this class to
 * {@code org.apache.kafka.common.utils.internals}: Debezium 3.6 names metrics with it, and fails
 * with NoClassDefFoundError on kafka-clients 4.4 without it. The connector host puts it back,
 * delegating to the class's new home. Part of the host, not of Kafka.
 */
public final class Sanitizer {
    private Sanitizer() {}

    /** Kafka's Sanitizer.sanitize: a name made safe for metrics and ZooKeeper-era paths. */
    public static String sanitize(String name) {
        return org.apache.kafka.common.utils.internals.Sanitizer.sanitize(name);
    }

    /** Kafka's Sanitizer.desanitize: the inverse of sanitize. */
    public static String desanitize(String name) {
        return org.apache.kafka.common.utils.internals.Sanitizer.desanitize(name);
    }

    /** Kafka's Sanitizer.jmxSanitize: a value quoted where JMX needs it. */
    public static String jmxSanitize(String name) {
        return org.apache.kafka.common.utils.internals.Sanitizer.jmxSanitize(name);
    }
}
