package io.sluice.connect.host;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.runtime.AbstractHerder;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.isolation.LoaderSwap;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfos;
import org.apache.kafka.connect.runtime.rest.entities.ConfigKeyInfo;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.maven.artifact.versioning.VersionRange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * connector.validate and connector.config_def: Kafka Connect's validation of a connector's own
 * keys (its {@code config()} ConfigDef and its {@code validate()}), answered in the REST API's
 * shapes with Kafka's own entities, and the framework keys only the plugins' classes can
 * validate (transformations, predicates, converters: {@link PluginKeysValidator}). The other
 * worker-level keys (name, tasks.max…) are the coordinator's to validate.
 */
public final class ConnectorValidator {
    private static final Logger log = LoggerFactory.getLogger(ConnectorValidator.class);
    private final Plugins plugins;
    private final PluginKeysValidator pluginKeys;

    public ConnectorValidator(Plugins plugins) {
        this.plugins = plugins;
        this.pluginKeys = new PluginKeysValidator(plugins);
    }

    /**
     * What connector.validate answers: the ConfigInfo entries, and the preflight answers the
     * config asks for (null when it asks for none).
     */
    public record Result(List<ConfigInfo> configs, Map<String, Object> preflight) {
    }

    /**
     * The ConfigInfo entries of /config/validate for the connector's own keys, then those of
     * the transformations, predicates and converters the config names; and, for a source
     * connector whose config asks for exactly.once.support=required or
     * transaction.boundary=connector, what the connector answers to Kafka Connect's preflight
     * checks. The agent's coordinator turns the answers into Kafka's messages.
     */
    public Result validate(Map<String, String> config) {
        String className = config.get(ConnectorConfig.CONNECTOR_CLASS_CONFIG);
        if (className == null || className.isBlank()) {
            throw new IllegalArgumentException("Connector config " + config + " contains no connector type");
        }
        Connector connector = plugins.newConnector(className, PluginVersions.connector(config));
        try (LoaderSwap swap = plugins.withClassLoader(connector.getClass().getClassLoader())) {
            ConfigDef def = connector.config();
            if (def == null) {
                throw new IllegalStateException(className + ".config() must return a ConfigDef that is not null.");
            }
            Config result = connector.validate(config);
            List<ConfigValue> values = result == null ? List.of() : result.configValues();
            ConfigInfos infos = AbstractHerder.generateResult(className, def.configKeys(), values, def.groups());
            List<ConfigInfo> out = new ArrayList<>(infos.configs());
            out.addAll(pluginKeys.validate(connector, config));
            return new Result(out, connector instanceof SourceConnector source ? preflight(source, config) : null);
        }
    }

    /** The answers of exactlyOnceSupport and canDefineTransactionBoundaries config asks for. */
    private static Map<String, Object> preflight(SourceConnector connector, Map<String, String> config) {
        Map<String, Object> out = new LinkedHashMap<>();
        if ("required".equalsIgnoreCase(config.getOrDefault("exactly.once.support", "").trim())) {
            out.put("exactly_once", answer(() -> connector.exactlyOnceSupport(config)));
        }
        if ("connector".equalsIgnoreCase(config.getOrDefault("transaction.boundary", "").trim())) {
            out.put("transaction_boundaries", answer(() -> connector.canDefineTransactionBoundaries(config)));
        }
        return out.isEmpty() ? null : out;
    }

    /** One answer: the enum constant's name ("" for null), or the message of what the method threw. */
    private static Map<String, Object> answer(Supplier<Enum<?>> method) {
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            Enum<?> value = method.get();
            out.put("support", value == null ? "" : value.name());
        } catch (Exception e) {
            log.error("A source connector's exactly-once preflight method failed", e);
            out.put("threw", true);
            out.put("message", e.getMessage() == null ? "" : e.getMessage());
        }
        return out;
    }

    /**
     * The definitions GET /connector-plugins/{class}/config lists for the connector's own keys, of
     * the version asked for (null: the newest).
     */
    public List<ConfigKeyInfo> configDef(String className, VersionRange version) {
        Connector connector = plugins.newConnector(className, version);
        try (LoaderSwap swap = plugins.withClassLoader(connector.getClass().getClassLoader())) {
            ConfigDef def = connector.config();
            if (def == null) {
                throw new IllegalStateException(className + ".config() must return a ConfigDef that is not null.");
            }
            return def.configKeys().values().stream().map(AbstractHerder::convertConfigKey).toList();
        }
    }
}
