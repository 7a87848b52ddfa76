package io.strata.it;

import io.strata.server.metrics.PrometheusText;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Predicate;

/** Scrapes a broker's metrics endpoint over HTTP, as Prometheus would, and waits for conditions on scrapes. */
final class MetricsScrape {
    static final String OPENMETRICS_ACCEPT = "application/openmetrics-text; version=1.0.0; charset=utf-8";

    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private MetricsScrape() {
    }

    static HttpResponse<String> get(int port, String path, String accept) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(10));
        if (accept != null) {
            request.header("Accept", accept);
        }
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static String text(int port) throws IOException, InterruptedException {
        HttpResponse<String> response = get(port, "/metrics", null);
        if (response.statusCode() != 200) {
            throw new AssertionError("GET /metrics answered " + response.statusCode() + ": " + response.body());
        }
        return response.body();
    }

    static PrometheusText parsed(int port) throws IOException, InterruptedException {
        return PrometheusText.parse(text(port));
    }

    /** Scrapes until {@code condition} holds, failing with the last scrape's values after {@code timeoutMs}. */
    static PrometheusText awaitScrape(int port, long timeoutMs, String description, Predicate<PrometheusText> condition) throws Exception {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        PrometheusText last;
        while (true) {
            last = parsed(port);
            if (condition.test(last)) {
                return last;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeoutMs + " ms waiting for " + description);
            }
            // Poll, not sleep-then-assert: the deadline bounds the wait, the pause spares the CPU.
            java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L);
        }
    }
}
