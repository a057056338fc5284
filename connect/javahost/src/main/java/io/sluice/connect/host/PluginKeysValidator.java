package io.sluice.connect.host;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.runtime.AbstractHerder;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.SinkConnectorConfig;
import org.apache.kafka.connect.runtime.SourceConnectorConfig;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfos;
import org.apache.kafka.connect.runtime.rest.entities.ConfigKeyInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConfigValueInfo;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.ConverterConfig;
import org.apache.kafka.connect.storage.ConverterType;
import org.apache.kafka.connect.storage.HeaderConverter;

/**
 * The framework keys of a Java connector's config that only the plugins' classes can validate:
 * its transformations and predicates ({@code transforms.<alias>.*}, {@code predicates.<alias>.*},
 * Kafka's ConnectorConfig enrichment: each one's type, and its own ConfigDef embedded under its
 * prefix) and the converters it names ({@code key.converter}, {@code value.converter},
 * {@code header.converter} and their settings under their prefixes, as Kafka's AbstractHerder
 * validates them). The task that runs the connector builds these same classes in this host, so
 * they are validated against the host's classes — its plugin path and Kafka's own on its
 * classpath — not the coordinator's. Other framework keys are the coordinator's to validate.
 * Must be called with the connector's class loader in place.
 */
final class PluginKeysValidator {
    private static final String TRANSFORMS_PREFIX = ConnectorConfig.TRANSFORMS_CONFIG + ".";
    private static final String PREDICATES_PREFIX = ConnectorConfig.PREDICATES_CONFIG + ".";

    /** A converter key, its version key, its kind and the ConfigDef its instances give. */
    private record ConverterKey(String property, String versionProperty, Class<?> kind,
                                ConverterType type, Function<Object, ConfigDef> configDef) {
    }

    private static final List<ConverterKey> CONVERTERS = List.of(
            new ConverterKey(ConnectorConfig.KEY_CONVERTER_CLASS_CONFIG, ConnectorConfig.KEY_CONVERTER_VERSION_CONFIG,
                    Converter.class, ConverterType.KEY, c -> ((Converter) c).config()),
            new ConverterKey(ConnectorConfig.VALUE_CONVERTER_CLASS_CONFIG, ConnectorConfig.VALUE_CONVERTER_VERSION_CONFIG,
                    Converter.class, ConverterType.VALUE, c -> ((Converter) c).config()),
            new ConverterKey(ConnectorConfig.HEADER_CONVERTER_CLASS_CONFIG, ConnectorConfig.HEADER_CONVERTER_VERSION_CONFIG,
                    HeaderConverter.class, ConverterType.HEADER, c -> ((HeaderConverter) c).config()));

    private final Plugins plugins;

    PluginKeysValidator(Plugins plugins) {
        this.plugins = plugins;
    }

    /** The entries for the config's transformations, predicates and converters; empty when it names none. */
    List<ConfigInfo> validate(Connector connector, Map<String, String> config) {
        ConfigDef base = connector instanceof SinkConnector ? SinkConnectorConfig.configDef() : SourceConnectorConfig.configDef();
        ConfigDef enriched = ConnectorConfig.enrich(plugins, base, config, false);
        Map<String, ConfigValue> values = enriched.validateAll(config);

        Map<String, ConfigDef.ConfigKey> keys = new LinkedHashMap<>();
        enriched.configKeys().forEach((name, key) -> {
            if (name.startsWith(TRANSFORMS_PREFIX) || name.startsWith(PREDICATES_PREFIX)) {
                keys.put(name, key);
            }
        });
        List<ConfigInfo> out = new ArrayList<>();
        List<ConfigInfo> converters = new ArrayList<>();
        for (ConverterKey c : CONVERTERS) {
            if (config.get(c.property()) == null) {
                continue; // the worker's converter: the coordinator knows it
            }
            keys.put(c.property(), enriched.configKeys().get(c.property()));
            converters.addAll(embedded(c, config, values.get(c.property()), values.get(c.versionProperty()), connector.getClass().getClassLoader()));
        }
        List<ConfigValue> kept = keys.keySet().stream().map(values::get).filter(v -> v != null).toList();
        out.addAll(AbstractHerder.generateResult(connector.getClass().getName(), keys, kept, List.of()).configs());
        out.addAll(converters);
        return out;
    }

    /**
     * The converter's own settings, validated by its ConfigDef and named under its prefix; none
     * when its class or version key already has an error (that entry says so).
     */
    private List<ConfigInfo> embedded(ConverterKey c, Map<String, String> config, ConfigValue classValue,
                                      ConfigValue versionValue, ClassLoader connectorLoader) {
        if (classValue == null || !classValue.errorMessages().isEmpty()
                || (versionValue != null && !versionValue.errorMessages().isEmpty())) {
            return List.of();
        }
        Object instance;
        try {
            // As the task will load it (TaskConverters): the connector's loader first.
            instance = TaskConverters.instantiate(plugins, config.get(c.property()), connectorLoader, c.kind(), c.property());
        } catch (ConfigException e) {
            classValue.addErrorMessage(e.getMessage());
            return List.of();
        }
        ConfigDef def = c.configDef().apply(instance);
        if (def == null) {
            return List.of();
        }
        String prefix = c.property() + ".";
        Map<String, String> settings = new LinkedHashMap<>();
        config.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                settings.put(k.substring(prefix.length()), v);
            }
        });
        settings.putIfAbsent(ConverterConfig.TYPE_CONFIG, c.type().getName());
        List<ConfigValue> values = def.validate(settings);
        ConfigInfos infos = AbstractHerder.generateResult(c.property(), def.configKeys(), values, List.of());
        return infos.configs().stream().filter(i -> i.configValue() != null).map(i -> prefixed(i, prefix)).toList();
    }

    /** An entry with its key's name under prefix, as Kafka's prefixedConfigInfos names them. */
    private static ConfigInfo prefixed(ConfigInfo info, String prefix) {
        ConfigKeyInfo k = info.configKey();
        ConfigKeyInfo key = k == null ? null : new ConfigKeyInfo(prefix + k.name(), k.type(), k.required(), k.defaultValue(),
                k.importance(), k.documentation(), k.group(), k.orderInGroup(), k.width(), k.displayName(), k.dependents());
        ConfigValueInfo v = info.configValue();
        return new ConfigInfo(key, new ConfigValueInfo(prefix + v.name(), v.value(), v.recommendedValues(), v.errors(), v.visible()));
    }
}
