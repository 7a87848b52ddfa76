package io.strata.server.metrics;

import io.strata.common.config.ConfigException;
import io.strata.server.config.ServerConfig;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MetricsHttpServerTest {
    private final HttpClient client = HttpClient.newHttpClient();

    private HttpResponse<String> get(int port, String path, String accept) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
        if (accept != null) {
            request.header("Accept", accept);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theListenerIsAnHttpUrlWithAPort() {
        assertThat(MetricsHttpServer.Listener.parse("http://127.0.0.1:9644")).isEqualTo(new MetricsHttpServer.Listener("127.0.0.1", 9644));
        assertThat(MetricsHttpServer.Listener.parse("http://0.0.0.0:0").port()).isZero();
        assertThatThrownBy(() -> MetricsHttpServer.Listener.parse("https://127.0.0.1:9644")).isInstanceOf(ConfigException.class);
        assertThatThrownBy(() -> MetricsHttpServer.Listener.parse("127.0.0.1:9644")).isInstanceOf(ConfigException.class);
        assertThatThrownBy(() -> MetricsHttpServer.Listener.parse("http://127.0.0.1")).isInstanceOf(ConfigException.class);
        assertThatThrownBy(() -> ServerConfig.fromMap(Map.of("metrics.listener", "http://x:99999"))).isInstanceOf(ConfigException.class);
    }

    @Test
    void servesMetricsInEitherFormatAndHealthAsJson() throws Exception {
        // A broker that was never started: live, but not ready, and the reason says why.
        HealthChecks.Sources neverStarted = new HealthChecks.Sources(() -> false, () -> false, () -> false, () -> false, () -> null, () -> null,
            () -> null);
        MetricsRegistry registry = new MetricsRegistry();
        registry.register(out -> out.add(MetricFamily.counter("test_requests_total", "Test.").add(3)));
        try (MetricsHttpServer http = MetricsHttpServer.start(new MetricsHttpServer.Listener("127.0.0.1", 0), registry, new HealthChecks(neverStarted))) {
            int port = http.port();
            HttpResponse<String> text = get(port, "/metrics", null);
            assertThat(text.statusCode()).isEqualTo(200);
            assertThat(text.headers().firstValue("Content-Type")).hasValue("text/plain; version=0.0.4; charset=utf-8");
            assertThat(text.body()).contains("# TYPE test_requests_total counter\ntest_requests_total 3\n");

            HttpResponse<String> openMetrics = get(port, "/metrics", "application/openmetrics-text; version=1.0.0");
            assertThat(openMetrics.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("application/openmetrics-text"));
            assertThat(openMetrics.body()).contains("# TYPE test_requests counter\n").endsWith("# EOF\n");

            HttpResponse<String> live = get(port, "/health/live", null);
            assertThat(live.statusCode()).isEqualTo(200);
            assertThat(live.body()).startsWith("{\"status\":\"live\"");

            HttpResponse<String> ready = get(port, "/health/ready", null);
            assertThat(ready.statusCode()).isEqualTo(503);
            assertThat(ready.headers().firstValue("Content-Type")).hasValue("application/json");
            assertThat(ready.body()).startsWith("{\"status\":\"not ready\",\"reason\":\"metadata: replaying the metadata log\"")
                .contains("\"logs\":\"log manager not created\"");

            assertThat(get(port, "/nothing", null).statusCode()).isEqualTo(404);
        }
    }

    @Test
    void aTakenPortFailsWithAMessageNamingTheSetting() throws Exception {
        MetricsRegistry registry = new MetricsRegistry();
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThatThrownBy(() -> MetricsHttpServer.start(new MetricsHttpServer.Listener("127.0.0.1", taken.getLocalPort()), registry, null))
                .hasMessageContaining("metrics.listener");
        }
    }
}
