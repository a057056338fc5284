package io.sluice.connect.host;

import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
                .forEach(desc -> entries.add(new Entry(desc.className(), desc.typeName(), versionOf(desc))));
        return entries;
    }

    /** What Kafka's scanner says of a plugin whose version() failed. */
    private static final String UNDEFINED = "undefined";

    /** The version in a Maven jar's name: connect-file-4.3.1.jar → 4.3.1. */
    private static final Pattern JAR_VERSION = Pattern.compile("-(\\d[^/]*)\\.jar$");

    /**
     * A plugin's version; one whose version() failed (Kafka's scanner says "undefined", as for a
     * plugin built against an older Kafka that calls a class Kafka since moved) is named by its
     * jar's Maven version instead, so that connector.plugin.version can still pick it.
     */
    static String versionOf(PluginDesc<?> desc) {
        if (!UNDEFINED.equals(desc.version())) {
            return desc.version();
        }
        try {
            CodeSource src = desc.pluginClass().getProtectionDomain().getCodeSource();
            if (src != null && src.getLocation() != null) {
                Matcher m = JAR_VERSION.matcher(src.getLocation().getPath());
                if (m.find()) {
                    return m.group(1);
                }
            }
        } catch (SecurityException e) {
            // No code source to read: the version stays undefined.
        }
        return desc.version();
    }

    /** The plugins.list reply body. */
    public byte[] listJson() {
        return Json.bytes(list().stream().map(Entry::json).toList());
    }
}
