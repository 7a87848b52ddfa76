package io.strata.tools;

import io.strata.protocol.message.ApiMessageType;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** {@code strata version}: the Strata version and the Kafka protocol release it speaks. */
@Command(name = "version", description = "Print the Strata version and the Kafka protocol it implements.")
final class VersionCommand implements Runnable {
    @Override
    public void run() {
        for (String line : new Provider().getVersion()) {
            System.out.println(line);
        }
    }

    /** The Strata version this CLI was built as, or "unknown". */
    static String strataVersion() {
        return properties().getProperty("version", "unknown");
    }

    private static Properties properties() {
        Properties properties = new Properties();
        try (InputStream in = VersionCommand.class.getResourceAsStream("/strata-version.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return properties;
    }

    static final class Provider implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            Properties properties = properties();
            return new String[] {
                "strata " + properties.getProperty("version", "unknown"),
                "Kafka protocol: message schemas of Apache Kafka " + properties.getProperty("kafka.protocol.version", "unknown")
                    + " (" + ApiMessageType.values().length + " APIs)",
                "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")",
            };
        }
    }
}
