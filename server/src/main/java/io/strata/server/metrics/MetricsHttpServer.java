package io.strata.server.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.strata.common.config.ConfigException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;

/**
 * The broker's HTTP endpoint ({@code metrics.listener}, default {@code http://127.0.0.1:9644}),
 * served by the JDK's built-in HTTP server on {@value #THREADS} threads of its own:
 *
 * <ul>
 *   <li>{@code GET /metrics}: the Prometheus text format, or OpenMetrics when the
 *       {@code Accept} header asks for it; gzip when the client accepts it.</li>
 *   <li>{@code GET /health/live}: 200 {@code {"status":"live",...}}, or 503 with the reason.</li>
 *   <li>{@code GET /health/ready}: 200 {@code {"status":"ready",...}}, or 503
 *       {@code {"status":"not ready","reason":...}}.</li>
 * </ul>
 *
 * Two threads: a scrape takes milliseconds (at most {@link ServerMetrics#GROUP_STATISTICS_TIMEOUT_MS}
 * when the group coordinator is slow to answer), and the second keeps health probes answered
 * meanwhile; few threads keep a flood of scrapes from taking CPU from the request path, and the
 * listen backlog bounds what waits.
 */
public final class MetricsHttpServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MetricsHttpServer.class);
    /** Pending connections the endpoint queues before refusing more. */
    private static final int BACKLOG = 16;
    /** Serving threads. */
    static final int THREADS = 2;

    private final HttpServer http;
    private final ExecutorService executor;

    /** A parsed {@code metrics.listener}: {@code http://host:port}; an empty or 0.0.0.0 host binds every interface. */
    public record Listener(String host, int port) {
        public static Listener parse(String value) {
            URI uri;
            try {
                uri = new URI(value.trim());
            } catch (URISyntaxException e) {
                throw new ConfigException("metrics.listener must look like http://host:port: " + value);
            }
            if (!"http".equalsIgnoreCase(uri.getScheme()) || uri.getPort() < 0 || uri.getPort() > 65535
                || (uri.getPath() != null && !uri.getPath().isEmpty() && !uri.getPath().equals("/"))) {
                throw new ConfigException("metrics.listener must look like http://host:port (port 0 picks a free one): " + value);
            }
            return new Listener(uri.getHost() == null ? "" : uri.getHost(), uri.getPort());
        }

        InetSocketAddress address() {
            return host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
        }
    }

    private MetricsHttpServer(HttpServer http, ExecutorService executor) {
        this.http = http;
        this.executor = executor;
    }

    /**
     * Binds and starts serving.
     *
     * @throws IOException if the address cannot be bound (in use, or not local)
     */
    public static MetricsHttpServer start(Listener listener, MetricsRegistry registry, HealthChecks health) throws IOException {
        HttpServer http;
        try {
            http = HttpServer.create(listener.address(), BACKLOG);
        } catch (BindException e) {
            throw new IOException("cannot bind metrics.listener http://" + listener.host() + ":" + listener.port() + " (" + e.getMessage()
                + "); set metrics.listener to a free port, or metrics.enabled=false", e);
        }
        java.util.concurrent.atomic.AtomicInteger threads = new java.util.concurrent.atomic.AtomicInteger();
        ExecutorService executor = Executors.newFixedThreadPool(THREADS, task -> {
            Thread thread = new Thread(task, "strata-metrics-http-" + threads.getAndIncrement());
            thread.setDaemon(true);
            return thread;
        });
        http.setExecutor(executor);
        http.createContext("/metrics", exchange -> serve(exchange, () -> {
            ExpositionFormat format = ExpositionFormat.forAcceptHeader(exchange.getRequestHeaders().getFirst("Accept"));
            return new Response(200, format.contentType(), registry.scrape(format));
        }));
        http.createContext("/health/live", exchange -> serve(exchange, () -> health(health.liveness(), "live", "not live")));
        http.createContext("/health/ready", exchange -> serve(exchange, () -> health(health.readiness(), "ready", "not ready")));
        http.createContext("/", exchange -> serve(exchange, () -> new Response(404, "text/plain; charset=utf-8",
            "not found; try /metrics, /health/live or /health/ready\n")));
        http.start();
        LOG.info("Serving /metrics and /health on http://{}:{}", http.getAddress().getHostString(), http.getAddress().getPort());
        return new MetricsHttpServer(http, executor);
    }

    private record Response(int status, String contentType, String body) {
    }

    @FunctionalInterface
    private interface Handler {
        Response handle() throws IOException;
    }

    private static Response health(HealthChecks.Status status, String healthy, String unhealthy) {
        return new Response(status.healthy() ? 200 : 503, "application/json", status.toJson(healthy, unhealthy) + "\n");
    }

    private static void serve(HttpExchange exchange, Handler handler) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            Response response;
            try {
                response = handler.handle();
            } catch (RuntimeException e) {
                LOG.error("Serving {} failed", exchange.getRequestURI(), e);
                response = new Response(500, "text/plain; charset=utf-8", "internal error: " + e + "\n");
            }
            byte[] body = response.body().getBytes(StandardCharsets.UTF_8);
            String acceptEncoding = exchange.getRequestHeaders().getFirst("Accept-Encoding");
            if (acceptEncoding != null && acceptEncoding.contains("gzip") && body.length > 1024) {
                ByteArrayOutputStream compressed = new ByteArrayOutputStream(body.length / 4);
                try (GZIPOutputStream gzip = new GZIPOutputStream(compressed)) {
                    gzip.write(body);
                }
                body = compressed.toByteArray();
                exchange.getResponseHeaders().set("Content-Encoding", "gzip");
            }
            exchange.getResponseHeaders().set("Content-Type", response.contentType());
            if (method.equals("HEAD")) {
                exchange.sendResponseHeaders(response.status(), -1);
                return;
            }
            exchange.sendResponseHeaders(response.status(), body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    /** The bound port (useful with port 0). */
    public int port() {
        return http.getAddress().getPort();
    }

    @Override
    public void close() {
        http.stop(0);
        executor.shutdownNow();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
