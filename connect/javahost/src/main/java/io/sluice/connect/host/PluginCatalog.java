package io.sluice.connect.host;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.runtime.isolation.PluginDesc;
import org.apache.kafka.connect.runtime.isolation.Plugins;

/**
 * The plugins Kafka Connect's isolation finds on a plugin path, each in its own class loader, and
 * the plugins.list answer: those the plugin path holds, the host's own classpath left out (the Go
 * agent has built-ins for Kafka's converters and transformations).
 */
public final class PluginCatalog {
    /** What {@link PluginDesc#location()} says of a plugin found on the host's classpath. */
    private static final String CLASSPATH = "classpath";

    private final Plugins plugins;

    private PluginCatalog(Plugins plugins) {
        this.plugins = plugins;
    }

    /** Scans the plugin path (directories, comma-separated as plugin.path takes them). */
    public static PluginCatalog scan(String pluginPath) {
        Map<String, String> props = new LinkedHashMap<>();
        props.put(WorkerConfig.PLUGIN_PATH_CONFIG, pluginPath);
        return new PluginCatalog(new Plugins(props));
    }

    public Plugins plugins() {
        return plugins;
    }

    /** One entry of plugins.list: a class, its type as GET /connector-plugins spells it, its version. */
    public record Entry(String className, String type, String version) {
        Map<String, String> json() {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("class", className);
            m.put("type", type);
            m.put("version", version);
            return m;
        }
    }

    /** The plugins of the plugin path, in Kafka's order (by class, then version). */
    public List<Entry> list() {
        List<Entry> entries = new ArrayList<>();
        Stream.<Collection<? extends PluginDesc<?>>>of(
                        plugins.sourceConnectors(), plugins.sinkConnectors(), plugins.converters(),
                        plugins.headerConverters(), plugins.transformations(), plugins.predicates())
                .flatMap(Collection::stream)
                .filter(desc -> !CLASSPATH.equals(desc.location()))
                .sorted()
                .forEach(desc -> entries.add(new Entry(desc.className(), desc.typeName(), desc.version())));
        return entries;
    }

    /** The plugins.list reply body. */
    public byte[] listJson() {
        return Json.bytes(list().stream().map(Entry::json).toList());
    }
}
