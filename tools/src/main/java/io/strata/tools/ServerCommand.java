package io.strata.tools;

import io.strata.common.Time;
import io.strata.common.config.ConfigException;
import io.strata.server.StrataServer;
import io.strata.server.config.ServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code strata server}: runs a node (broker and controller) until SIGTERM or Ctrl-C, then
 * shuts down cleanly. With no arguments: 127.0.0.1:9092, data in ./data, formatted on first start.
 */
@Command(name = "server", description = "Run a Strata node (broker and controller) until interrupted.")
final class ServerCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(ServerCommand.class);

    @Option(names = {"-c", "--config"}, description = "A properties file with Kafka-style settings.")
    Path configFile;

    @Option(names = {"-o", "--override"}, description = "A setting that overrides the file, as key=value (repeatable).")
    List<String> overrides = List.of();

    @Override
    public Integer call() throws Exception {
        Map<String, String> overrideMap = new LinkedHashMap<>();
        for (String override : overrides) {
            int equals = override.indexOf('=');
            if (equals <= 0) {
                System.err.println("strata: --override needs key=value, got: " + override);
                return 2;
            }
            overrideMap.put(override.substring(0, equals).trim(), override.substring(equals + 1).trim());
        }
        ServerConfig config;
        try {
            config = ServerConfig.load(configFile, overrideMap);
        } catch (ConfigException e) {
            System.err.println("strata: invalid configuration: " + e.getMessage());
            return 2;
        }
        for (String unknown : config.unknownKeys()) {
            LOG.warn("Unknown configuration key {} (ignored)", unknown);
        }
        StrataServer server = new StrataServer(config, Time.SYSTEM);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "strata-shutdown"));
        try {
            server.startup();
        } catch (Exception e) {
            LOG.error("Start-up failed: {}", e.toString(), e);
            server.close();
            return 1;
        }
        System.out.println("Strata is ready on " + config.listeners() + " (cluster " + server.clusterId() + ")");
        stopped.await();
        return 0;
    }
}
