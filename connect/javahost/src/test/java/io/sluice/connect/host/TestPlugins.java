package io.sluice.connect.host;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A plugin.path laid out as a user installs plugins: Kafka's FileStream connectors in a directory
 * of their own and Kafka's transformations in another, scanned once for all tests (a scan takes
 * seconds).
 */
final class TestPlugins {
    private static PluginCatalog catalog;
    private static Path pluginPath;

    private TestPlugins() {
    }

    static synchronized Path pluginPath() {
        if (pluginPath == null) {
            try {
                Path dir = Files.createTempDirectory("sluice-plugin-path");
                install(dir.resolve("connect-file"), System.getProperty("connect.file.jar"));
                install(dir.resolve("connect-transforms"), System.getProperty("connect.transforms.jar"));
                pluginPath = dir;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return pluginPath;
    }

    static synchronized PluginCatalog catalog() {
        if (catalog == null) {
            catalog = PluginCatalog.scan(pluginPath().toString());
        }
        return catalog;
    }

    private static void install(Path pluginDir, String jar) throws IOException {
        if (jar == null) {
            throw new IllegalStateException("run the tests with Maven: it tells them where the plugin jars are");
        }
        Files.createDirectories(pluginDir);
        Path source = Path.of(jar);
        Files.copy(source, pluginDir.resolve(source.getFileName()));
    }
}
