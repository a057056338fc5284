package io.sluice.connect.host;

import java.io.IOException;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.function.Function;

/**
 * The connector host's entry point. {@code --scan --plugin-path DIRS} prints the plugins.list
 * answer and exits; {@code --socket PATH --plugin-path DIRS} connects to the agent's Unix socket
 * and serves docs/plugins.md's protocol until the agent closes it. Logs go to stderr only.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        // The agent reads stdout only for the scan's answer; everything else, plugins' chatter
        // included, goes to stderr.
        PrintStream stdout = System.out;
        System.setOut(System.err);
        int status;
        try {
            status = run(args, stdout);
        } catch (IllegalArgumentException e) {
            System.err.println("sluice-connect-host: " + e.getMessage());
            System.err.println("usage: Main --scan --plugin-path DIR[,DIR...] | --socket PATH --plugin-path DIR[,DIR...]");
            status = 2;
        } catch (Exception e) {
            e.printStackTrace(System.err);
            status = 1;
        }
        stdout.flush();
        // Plugins may leave non-daemon threads behind; the host's life ends with the socket.
        System.exit(status);
    }

    static int run(String[] args, PrintStream stdout) throws IOException {
        return run(args, stdout, PluginCatalog::scan);
    }

    /** run with the plugin scan given, so tests can share one scan (each takes seconds). */
    static int run(String[] args, PrintStream stdout, Function<String, PluginCatalog> scanner) throws IOException {
        boolean scan = false;
        String socket = null;
        String pluginPath = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--scan" -> scan = true;
                case "--socket" -> socket = value(args, ++i, "--socket");
                case "--plugin-path" -> pluginPath = value(args, ++i, "--plugin-path");
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (pluginPath == null) {
            throw new IllegalArgumentException("--plugin-path is required");
        }
        if (scan == (socket != null)) {
            throw new IllegalArgumentException("give exactly one of --scan and --socket");
        }
        PluginCatalog catalog = scanner.apply(pluginPath);
        if (scan) {
            stdout.write(catalog.listJson());
            stdout.write('\n');
            return 0;
        }
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            channel.connect(UnixDomainSocketAddress.of(Path.of(socket)));
            Host host = new Host(catalog, new Connection(channel));
            host.serve();
        }
        return 0;
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[i];
    }

}
