package io.sluice.connect.host;

import java.util.Map;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.isolation.PluginUtils;
import org.apache.maven.artifact.versioning.InvalidVersionSpecificationException;
import org.apache.maven.artifact.versioning.VersionRange;

/**
 * The connector version a config asks for (KIP-891). Several versions of a plugin may be on the
 * plugin path, each in its own class loader; the agent sends the exact version the connector's
 * config resolved to when it was written (the coordinator resolves it once for the whole fleet),
 * and the host loads that one.
 */
final class PluginVersions {
    private PluginVersions() {
    }

    /**
     * The version requirement of connector.plugin.version, read as Kafka Connect reads it; null
     * (any version: the newest) when the config names none or "latest".
     */
    static VersionRange connector(Map<String, String> config) {
        String spec = config.get(ConnectorConfig.CONNECTOR_VERSION);
        try {
            return PluginUtils.connectorVersionRequirement(spec);
        } catch (InvalidVersionSpecificationException e) {
            throw new ConnectException("Invalid " + ConnectorConfig.CONNECTOR_VERSION + " " + spec + ": " + e.getMessage(), e);
        }
    }
}
