package io.strata.tools;

import io.strata.common.Time;
import io.strata.protocol.message.ApiMessageType;
import io.strata.server.StrataServer;
import io.strata.server.config.ServerConfig;
import io.strata.tools.client.ClientSettings;
import io.strata.tools.client.ClientVersions;
import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.HostPort;
import io.strata.tools.client.KafkaConnection;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A real Strata server for one test class: started before the class's tests on an ephemeral
 * port in a temporary directory, closed and deleted afterwards. Register it as a static
 * {@code @RegisterExtension} field.
 *
 * <p>It is also the condition behind {@link RequiresBrokerApi}: a test so annotated runs only
 * if the running broker's ApiVersions answer offers the API at a version the CLI implements.
 */
final class TestBroker implements BeforeAllCallback, AfterAllCallback, ExecutionCondition {
    private final Map<String, String> overrides;
    private Path dataDir;
    private StrataServer server;

    TestBroker() {
        this(Map.of());
    }

    /** A broker with these server properties on top of the listener and data directory. */
    TestBroker(Map<String, String> overrides) {
        this.overrides = Map.copyOf(overrides);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        dataDir = Files.createTempDirectory("strata-tools-test");
        Map<String, String> properties = new HashMap<>(overrides);
        properties.put("listeners", "PLAINTEXT://127.0.0.1:0");
        properties.put("metrics.listener", "http://127.0.0.1:0");
        properties.put("log.dirs", dataDir.toString());
        server = new StrataServer(ServerConfig.fromMap(properties), Time.SYSTEM);
        server.startup();
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
        if (server != null) {
            server.close();
        }
        if (dataDir != null) {
            try (Stream<Path> paths = Files.walk(dataDir)) {
                for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(path);
                }
            }
        }
    }

    int port() {
        return server.boundPort();
    }

    /** The {@code --url} of the broker's metrics endpoint. */
    String metricsUrl() {
        return "http://127.0.0.1:" + server.metricsPort();
    }

    /** The {@code --bootstrap-server} value. */
    String bootstrap() {
        return "127.0.0.1:" + port();
    }

    ClusterClient client() {
        return ClusterClient.connect(List.of(new HostPort("127.0.0.1", port())), ClientSettings.defaults("test"), Time.SYSTEM);
    }

    /**
     * Asks the broker, with ApiVersions, whether it offers {@code api} at a version the CLI
     * implements; for an API the CLI does not speak (tests drive it with Kafka's client), whether
     * the broker advertises it at all.
     */
    boolean supports(ApiMessageType api) {
        try (KafkaConnection connection = KafkaConnection.open(new HostPort("127.0.0.1", port()), ClientSettings.defaults("test"), Time.SYSTEM)) {
            return ClientVersions.implemented(api) == null ? connection.versions().advertises(api) : connection.versions().supports(api);
        }
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Optional<RequiresBrokerApi> required = context.getElement().flatMap(element -> AnnotationSupport.findAnnotation(element, RequiresBrokerApi.class));
        if (required.isEmpty() || server == null) {
            return ConditionEvaluationResult.enabled("no broker API requirement to check here");
        }
        for (ApiMessageType api : required.get().value()) {
            if (!supports(api)) {
                return ConditionEvaluationResult.disabled("the broker does not advertise " + api.apiName + " yet");
            }
        }
        return ConditionEvaluationResult.enabled("the broker advertises every required API");
    }
}
