package io.strata.it;

import io.strata.common.Time;
import io.strata.server.StrataServer;
import io.strata.server.config.ServerConfig;

import java.util.HashMap;
import java.util.Map;

/**
 * Runs a Strata node in a child JVM for tests that need their own process (file-descriptor
 * heavy tests, kill tests). Args: key=value settings. Prints "PORT <port>" once ready and
 * runs until killed or stdin closes. A failed start prints "Start-up failed: <cause>" and exits 1.
 */
public final class ServerProcessMain {
    private ServerProcessMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> properties = new HashMap<>();
        for (String arg : args) {
            int equals = arg.indexOf('=');
            properties.put(arg.substring(0, equals), arg.substring(equals + 1));
        }
        // Tests run several nodes at once: never the fixed default metrics port.
        properties.putIfAbsent("metrics.listener", "http://127.0.0.1:0");
        StrataServer server = new StrataServer(ServerConfig.fromMap(properties), Time.SYSTEM);
        Runtime.getRuntime().addShutdownHook(new Thread(server::close));
        try {
            server.startup();
        } catch (Exception e) {
            // As the strata command: one line naming the cause, a non-zero exit.
            System.err.println("Start-up failed: " + e.getMessage());
            System.err.flush();
            server.close();
            System.exit(1);
        }
        System.out.println("PORT " + server.boundPort());
        System.out.flush();
        // Exit when the parent goes away (stdin closes), so no test leaves a server behind.
        while (System.in.read() >= 0) {
            Thread.onSpinWait();
        }
        server.close();
        System.exit(0);
    }
}
