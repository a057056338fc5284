package io.sluice.connect.host;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.isolation.LoaderSwap;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.ConverterConfig;
import org.apache.kafka.connect.storage.ConverterType;
import org.apache.kafka.connect.storage.HeaderConverter;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;

/**
 * A task's key, value and header converters, chosen as Kafka Connect's worker chooses them: the
 * connector config's {@code key.converter} (with its {@code key.converter.*} settings) when it
 * names one, else the worker's (the agent's, from task.start's "worker"); the header converter
 * defaults to SimpleHeaderConverter.
 */
public record TaskConverters(Converter key, Converter value, HeaderConverter header) {

    public static TaskConverters build(Plugins plugins, Map<String, String> connectorConfig,
                                       Map<String, String> worker, ClassLoader connectorLoader) {
        Converter key = converter(plugins, connectorConfig, worker, connectorLoader, ConnectorConfig.KEY_CONVERTER_CLASS_CONFIG, true);
        Converter value = converter(plugins, connectorConfig, worker, connectorLoader, ConnectorConfig.VALUE_CONVERTER_CLASS_CONFIG, false);
        HeaderConverter header = headerConverter(plugins, connectorConfig, worker, connectorLoader);
        return new TaskConverters(key, value, header);
    }

    private static Converter converter(Plugins plugins, Map<String, String> connectorConfig, Map<String, String> worker,
                                       ClassLoader connectorLoader, String property, boolean isKey) {
        Map<String, String> source = connectorConfig.get(property) != null ? connectorConfig : worker;
        String className = source.get(property);
        if (className == null) {
            throw new ConfigException("Missing required configuration \"" + property + "\" which has no default value.");
        }
        Converter converter = instantiate(plugins, className, connectorLoader, Converter.class, property);
        try (LoaderSwap swap = plugins.withClassLoader(converter.getClass().getClassLoader())) {
            converter.configure(withPrefix(source, property + "."), isKey);
        }
        return converter;
    }

    private static HeaderConverter headerConverter(Plugins plugins, Map<String, String> connectorConfig,
                                                   Map<String, String> worker, ClassLoader connectorLoader) {
        String property = ConnectorConfig.HEADER_CONVERTER_CLASS_CONFIG;
        Map<String, String> source = connectorConfig.get(property) != null ? connectorConfig : worker;
        String className = source.getOrDefault(property, SimpleHeaderConverter.class.getName());
        HeaderConverter converter = instantiate(plugins, className, connectorLoader, HeaderConverter.class, property);
        Map<String, Object> settings = withPrefix(source, property + ".");
        settings.put(ConverterConfig.TYPE_CONFIG, ConverterType.HEADER.getName());
        try (LoaderSwap swap = plugins.withClassLoader(converter.getClass().getClassLoader())) {
            converter.configure(settings);
        }
        return converter;
    }

    /**
     * Loads the class through the connector's loader first, so a converter packaged with the
     * connector wins as it does in Kafka Connect, then by Kafka's plugin names and aliases.
     */
    static <T> T instantiate(Plugins plugins, String className, ClassLoader connectorLoader,
                                     Class<T> kind, String property) {
        Class<?> klass;
        try {
            klass = Class.forName(className, false, connectorLoader);
        } catch (ClassNotFoundException notInConnector) {
            try {
                klass = plugins.pluginClass(className);
            } catch (ClassNotFoundException e) {
                throw new ConfigException(property, className, "Class " + className + " could not be found.");
            }
        }
        if (!kind.isAssignableFrom(klass)) {
            throw new ConfigException(property, className, "Class " + className + " is not a " + kind.getSimpleName());
        }
        try (LoaderSwap swap = plugins.withClassLoader(klass.getClassLoader())) {
            return kind.cast(klass.getDeclaredConstructor().newInstance());
        } catch (ReflectiveOperationException e) {
            throw new ConfigException(property, className, "Could not instantiate " + className + ": " + e);
        }
    }

    private static Map<String, Object> withPrefix(Map<String, String> config, String prefix) {
        Map<String, Object> settings = new HashMap<>();
        config.forEach((k, v) -> {
            if (k.startsWith(prefix) && k.length() > prefix.length()) {
                settings.put(k.substring(prefix.length()), v);
            }
        });
        return settings;
    }

    /** Closes the converters that hold resources. */
    public void close() {
        for (Object c : new Object[] {key, value, header}) {
            if (c instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception ignored) {
                    // closing at stop: nothing left to do with the error
                }
            }
        }
    }
}
