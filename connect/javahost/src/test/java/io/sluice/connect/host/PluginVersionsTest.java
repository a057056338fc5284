package io.sluice.connect.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.apache.kafka.connect.connector.Connector;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several versions of one plugin on the plugin path (KIP-891): each in a directory of its own, as a
 * user installs them, each loaded in its own class loader; the host lists every version and loads
 * the one connector.plugin.version names (the agent sends the exact version the connector resolved
 * to), the newest when it names none.
 */
class PluginVersionsTest {
    private static final String CLASS = "io.example.versioned.VersionedSourceConnector";

    @TempDir
    static Path dir;

    private static PluginCatalog catalog;

    @BeforeAll
    static void install() throws IOException {
        for (String version : List.of("1.0.0", "1.10.0", "1.9.0")) {
            Path plugin = dir.resolve("plugins").resolve("versioned-" + version);
            Files.createDirectories(plugin);
            buildPlugin(version, plugin.resolve("versioned-" + version + ".jar"));
        }
        catalog = PluginCatalog.scan(dir.resolve("plugins").toString());
    }

    @Test
    void listsEveryVersionInMavenOrder() {
        List<String> versions = catalog.list().stream()
                .filter(e -> e.className().equals(CLASS)).map(PluginCatalog.Entry::version).toList();
        assertEquals(List.of("1.0.0", "1.9.0", "1.10.0"), versions);
    }

    @Test
    void loadsTheVersionAskedForInItsOwnLoader() {
        Connector v1 = catalog.plugins().newConnector(CLASS, PluginVersions.connector(Map.of("connector.plugin.version", "1.0.0")));
        Connector v19 = catalog.plugins().newConnector(CLASS, PluginVersions.connector(Map.of("connector.plugin.version", "[1.1,1.10)")));
        Connector latest = catalog.plugins().newConnector(CLASS, PluginVersions.connector(Map.of("connector.plugin.version", "latest")));
        assertEquals("1.0.0", v1.version());
        assertEquals("1.9.0", v19.version());
        assertEquals("1.10.0", latest.version());
        assertNotSame(v1.getClass().getClassLoader(), v19.getClass().getClassLoader());
        assertNotSame(v1.getClass(), latest.getClass());
    }

    @Test
    void aTaskRunsItsConnectorsVersion() {
        Map<String, String> worker = Map.of("key.converter", "org.apache.kafka.connect.storage.StringConverter",
                "value.converter", "org.apache.kafka.connect.storage.StringConverter");
        for (String version : List.of("1.0.0", "1.9.0", "1.10.0")) {
            Map<String, String> config = Map.of("connector.class", CLASS, "connector.plugin.version", version, "name", "v");
            TaskSetup setup = TaskSetup.build(catalog.plugins(), "v-0", config, Map.of(), worker);
            assertEquals(version, setup.task.version(), "task of version " + version);
        }
        TaskSetup newest = TaskSetup.build(catalog.plugins(), "v-0", Map.of("connector.class", CLASS, "name", "v"), Map.of(), worker);
        assertEquals("1.10.0", newest.task.version());
    }

    @Test
    void aVersionNotThereIsKafkasError() {
        Exception e = assertThrows(Exception.class, () -> catalog.plugins().newConnector(CLASS,
                PluginVersions.connector(Map.of("connector.plugin.version", "2.0"))));
        assertTrue(e.getMessage().contains("not found that matches the version range [2.0,2.0], available versions: [1.0.0, 1.9.0, 1.10.0]"),
                e.getMessage());
    }

    /** Compiles the connector and its task, reporting version, into a plugin jar. */
    private static void buildPlugin(String version, Path jar) throws IOException {
        Path src = Files.createTempDirectory(dir, "src");
        Path out = Files.createTempDirectory(dir, "classes");
        Path pkg = src.resolve("io/example/versioned");
        Files.createDirectories(pkg);
        Files.writeString(pkg.resolve("VersionedSourceConnector.java"), """
                package io.example.versioned;
                import java.util.List;
                import java.util.Map;
                import org.apache.kafka.common.config.ConfigDef;
                import org.apache.kafka.connect.connector.Task;
                import org.apache.kafka.connect.source.SourceConnector;
                public class VersionedSourceConnector extends SourceConnector {
                    private Map<String, String> props;
                    public void start(Map<String, String> props) { this.props = props; }
                    public Class<? extends Task> taskClass() { return VersionedSourceTask.class; }
                    public List<Map<String, String>> taskConfigs(int max) { return List.of(props); }
                    public void stop() { }
                    public ConfigDef config() { return new ConfigDef(); }
                    public String version() { return "%s"; }
                }
                """.formatted(version));
        Files.writeString(pkg.resolve("VersionedSourceTask.java"), """
                package io.example.versioned;
                import java.util.List;
                import java.util.Map;
                import org.apache.kafka.connect.source.SourceRecord;
                import org.apache.kafka.connect.source.SourceTask;
                public class VersionedSourceTask extends SourceTask {
                    public void start(Map<String, String> props) { }
                    public List<SourceRecord> poll() { return null; }
                    public void stop() { }
                    public String version() { return "%s"; }
                }
                """.formatted(version));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> args;
        try (Stream<Path> files = Files.walk(src)) {
            args = Stream.concat(Stream.of("-d", out.toString(), "-cp", System.getProperty("java.class.path")),
                    files.filter(p -> p.toString().endsWith(".java")).map(Path::toString)).toList();
        }
        assertEquals(0, javac.run(null, null, null, args.toArray(String[]::new)), "javac");
        try (JarOutputStream jos = new JarOutputStream(Files.newOutputStream(jar)); Stream<Path> classes = Files.walk(out)) {
            for (Path p : classes.filter(Files::isRegularFile).toList()) {
                jos.putNextEntry(new JarEntry(out.relativize(p).toString().replace('\\', '/')));
                Files.copy(p, jos);
                jos.closeEntry();
            }
            // The service manifest Kafka's service-loader discovery reads.
            jos.putNextEntry(new JarEntry("META-INF/services/org.apache.kafka.connect.source.SourceConnector"));
            OutputStream os = jos;
            os.write((CLASS + "\n").getBytes(StandardCharsets.UTF_8));
            jos.closeEntry();
        }
    }
}
