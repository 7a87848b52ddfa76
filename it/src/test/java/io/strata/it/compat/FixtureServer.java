package io.strata.it.compat;

import io.strata.common.Time;
import io.strata.server.StrataServer;
import io.strata.server.config.ServerConfig;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** A Strata node on an ephemeral loopback port over a given data directory, with the fixture's properties and a given clock. */
final class FixtureServer implements AutoCloseable {
    private final StrataServer server;

    FixtureServer(Path dataDir, Map<String, String> serverProperties, Time time) throws Exception {
        Map<String, String> properties = new HashMap<>(serverProperties);
        properties.put(ServerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0");
        properties.put(ServerConfig.LOG_DIRS, dataDir.toString());
        properties.put(ServerConfig.METRICS_ENABLED, "false");
        server = new StrataServer(ServerConfig.fromMap(properties), time);
        try {
            server.startup();
        } catch (Exception e) {
            server.close();
            throw e;
        }
    }

    String bootstrap() {
        return "127.0.0.1:" + server.boundPort();
    }

    StrataServer server() {
        return server;
    }

    /** Controlled shutdown: flush, checkpoints, the clean-shutdown marker. */
    @Override
    public void close() {
        server.close();
    }
}
