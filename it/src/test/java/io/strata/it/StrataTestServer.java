package io.strata.it;

import io.strata.common.Time;
import io.strata.server.StrataServer;
import io.strata.server.config.ServerConfig;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** A real Strata node on an ephemeral loopback port with its data in a test's temp dir; restartable on the same data. */
final class StrataTestServer implements AutoCloseable {
    private final Path dataDir;
    private final Map<String, String> overrides;
    private StrataServer server;

    StrataTestServer(Path dataDir, Map<String, String> overrides) throws Exception {
        this.dataDir = dataDir;
        this.overrides = overrides;
        start(0);
    }

    StrataTestServer(Path dataDir) throws Exception {
        this(dataDir, Map.of());
    }

    private void start(int port) throws Exception {
        Map<String, String> properties = new HashMap<>();
        properties.put("listeners", "PLAINTEXT://127.0.0.1:" + port);
        properties.put("log.dirs", dataDir.toString());
        properties.put("num.io.threads", "4");
        properties.put("num.network.threads", "2");
        properties.put("metrics.listener", "http://127.0.0.1:0");
        properties.putAll(overrides);
        server = new StrataServer(ServerConfig.fromMap(properties), Time.SYSTEM);
        server.startup();
    }

    String bootstrap() {
        return "127.0.0.1:" + server.boundPort();
    }

    int port() {
        return server.boundPort();
    }

    StrataServer server() {
        return server;
    }

    /** Controlled shutdown and start again on the same data directory and port. */
    void restart() throws Exception {
        int port = server.boundPort();
        server.close();
        start(port);
    }

    @Override
    public void close() {
        if (server != null) {
            server.close();
        }
    }
}
