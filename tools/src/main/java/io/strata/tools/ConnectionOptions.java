package io.strata.tools;

import io.strata.common.Time;
import io.strata.tools.client.ClientLimits;
import io.strata.tools.client.ClientSettings;
import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.HostPort;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.util.List;

/** The options every client command takes to reach the cluster (a picocli mixin). */
final class ConnectionOptions {
    static final String DEFAULT_BOOTSTRAP_SERVER = "127.0.0.1:9092";

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--bootstrap-server", paramLabel = "HOST:PORT", split = ",", defaultValue = DEFAULT_BOOTSTRAP_SERVER,
        converter = HostPortConverter.class,
        description = "Broker(s) to bootstrap from, comma-separated (default: ${DEFAULT-VALUE}).")
    List<HostPort> bootstrapServers;

    @Option(names = "--request-timeout-ms", paramLabel = "MS", defaultValue = "" + ClientLimits.DEFAULT_REQUEST_TIMEOUT_MS,
        description = "How long to wait for each response (default: ${DEFAULT-VALUE}).")
    int requestTimeoutMs;

    /**
     * Connects to the cluster.
     *
     * @throws CommandLine.ParameterException for a timeout the client cannot work with
     * @throws io.strata.tools.client.ClientException if no bootstrap server is reachable
     */
    ClusterClient connect() {
        ClientSettings settings;
        try {
            settings = ClientSettings.defaults(VersionCommand.strataVersion()).withRequestTimeoutMs(requestTimeoutMs);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(mixee.commandLine(), "--request-timeout-ms: " + e.getMessage());
        }
        return ClusterClient.connect(bootstrapServers, settings, Time.SYSTEM);
    }

    /** Parses one host:port, reporting bad input as a usage error. */
    static final class HostPortConverter implements CommandLine.ITypeConverter<HostPort> {
        @Override
        public HostPort convert(String value) {
            try {
                return HostPort.parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
