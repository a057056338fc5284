package io.sluice.connect.host;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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

/**
 * connector.validate and connector.config_def: Kafka Connect's validation of a connector's own
 * keys (its {@code config()} ConfigDef and its {@code validate()}), answered in the REST API's
 * shapes with Kafka's own entities, and the framework keys only the plugins' classes can
 * validate (transformations, predicates, converters: {@link PluginKeysValidator}). The other
 * worker-level keys (name, tasks.max…) are the coordinator's to validate.
 */
public final class ConnectorValidator {
    private final Plugins plugins;
    private final PluginKeysValidator pluginKeys;

    public ConnectorValidator(Plugins plugins) {
        this.plugins = plugins;
        this.pluginKeys = new PluginKeysValidator(plugins);
    }

    /**
     * The ConfigInfo entries of /config/validate for the connector's own keys, then those of
     * the transformations, predicates and converters the config names.
     */
    public List<ConfigInfo> validate(Map<String, String> config) {
        String className = config.get(ConnectorConfig.CONNECTOR_CLASS_CONFIG);
        if (className == null || className.isBlank()) {
            throw new IllegalArgumentException("Connector config " + config + " contains no connector type");
        }
        Connector connector = plugins.newConnector(className);
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
            return out;
        }
    }

    /** The definitions GET /connector-plugins/{class}/config lists for the connector's own keys. */
    public List<ConfigKeyInfo> configDef(String className) {
        Connector connector = plugins.newConnector(className);
        try (LoaderSwap swap = plugins.withClassLoader(connector.getClass().getClassLoader())) {
            ConfigDef def = connector.config();
            if (def == null) {
                throw new IllegalStateException(className + ".config() must return a ConfigDef that is not null.");
            }
            return def.configKeys().values().stream().map(AbstractHerder::convertConfigKey).toList();
        }
    }
}
