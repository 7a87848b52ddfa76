package io.strata.tools;

import io.strata.server.metrics.PrometheusText;
import io.strata.tools.client.ClientException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code strata metrics}: a one-screen summary of a broker from its metrics endpoint: health,
 * throughput, request latency percentiles per request type, consumer lag (top N), partitions'
 * health and the JVM. Rates and percentiles cover {@code --interval} seconds between two
 * scrapes; with {@code --interval 0}, one scrape and averages since the broker started.
 */
@Command(name = "metrics", description = "Summarise a broker's metrics: throughput, latency p99, consumer lag, health.")
final class MetricsCommand implements Callable<Integer> {
    /** Request types shown in the latency table, at most. */
    static final int LATENCY_ROWS = 8;

    @Option(names = "--url", description = "The broker's metrics endpoint (metrics.listener); default: ${DEFAULT-VALUE}.",
        defaultValue = "http://127.0.0.1:9644")
    String url;

    @Option(names = "--interval", defaultValue = "1",
        description = "Seconds between the two scrapes rates are computed over; 0: averages since start. Default: ${DEFAULT-VALUE}.")
    double intervalSeconds;

    @Option(names = "--top", description = "Consumer lag rows to show; default: ${DEFAULT-VALUE}.", defaultValue = "10")
    int top;

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Override
    public Integer call() throws Exception {
        if (intervalSeconds < 0 || top < 0) {
            System.err.println("strata: --interval and --top must not be negative");
            return 2;
        }
        String base = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
        PrometheusText first = PrometheusText.parse(get(base + "/metrics").body());
        long firstNanos = System.nanoTime();
        PrometheusText last = first;
        double seconds;
        if (intervalSeconds > 0) {
            Thread.sleep(Math.round(intervalSeconds * 1000));
            last = PrometheusText.parse(get(base + "/metrics").body());
            seconds = (System.nanoTime() - firstNanos) / 1e9;
        } else {
            double startSeconds = first.sum("process_start_time_seconds");
            seconds = Math.max(1e-3, System.currentTimeMillis() / 1000.0 - startSeconds);
            first = null;
        }
        HttpResponse<String> ready = get(base + "/health/ready");
        System.out.print(render(base, first, last, seconds, ready.statusCode() == 200 ? "ready" : "NOT READY: " + reason(ready.body())));
        return 0;
    }

    private HttpResponse<String> get(String target) throws IOException, InterruptedException {
        try {
            return client.send(HttpRequest.newBuilder(URI.create(target)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException e) {
            throw new ClientException("cannot reach the metrics endpoint " + target + ": connection refused (is metrics.listener there?)", e);
        } catch (HttpTimeoutException e) {
            throw new ClientException("the metrics endpoint " + target + " did not answer in time", e);
        } catch (IllegalArgumentException e) {
            throw new ClientException("not a usable URL: " + target, e);
        }
    }

    /** The "reason" of a /health/ready JSON body, without a JSON library. */
    static String reason(String json) {
        int key = json.indexOf("\"reason\":\"");
        if (key < 0) {
            return json.strip();
        }
        int start = key + "\"reason\":\"".length();
        StringBuilder reason = new StringBuilder();
        for (int i = start; i < json.length(); i++) {
            char c = json.charAt(i);
            if (c == '\\' && i + 1 < json.length()) {
                reason.append(json.charAt(++i));
            } else if (c == '"') {
                break;
            } else {
                reason.append(c);
            }
        }
        return reason.toString();
    }

    /** The summary text; {@code first} is null when rates are averages since start. */
    String render(String base, PrometheusText first, PrometheusText last, double seconds, String health) {
        StringBuilder out = new StringBuilder();
        String window = first == null ? String.format(Locale.ROOT, "averages since start, %s ago", duration(seconds))
            : String.format(Locale.ROOT, "rates over %.1f s", seconds);
        out.append("Strata broker at ").append(base).append(" (").append(window).append(")\n");
        out.append(String.format(Locale.ROOT, "Health      %s%n", health));
        out.append(String.format(Locale.ROOT, "Partitions  %d (under-replicated %d, offline %d) · connections %d · request queue %d%n",
            (long) last.sum("kafka_server_replicamanager_partitioncount"), (long) last.sum("kafka_server_replicamanager_underreplicatedpartitions"),
            (long) last.sum("kafka_controller_kafkacontroller_offlinepartitionscount"),
            (long) last.sum("kafka_server_socketservermetrics_connections"),
            (long) last.sum("kafka_network_requestchannel_requestqueuesize")));
        out.append(String.format(Locale.ROOT, "Throughput  in %s/s (%s msg/s) · out %s/s · %s requests/s%n",
            bytes(rate(first, last, "kafka_server_brokertopicmetrics_bytesin_total", seconds)),
            number(rate(first, last, "kafka_server_brokertopicmetrics_messagesin_total", seconds)),
            bytes(rate(first, last, "kafka_server_brokertopicmetrics_bytesout_total", seconds)),
            number(rate(first, last, "kafka_network_requestmetrics_requests_total", seconds, "request", MetricsCommand::isRequestType))));
        out.append(String.format(Locale.ROOT, "Threads     request handlers idle %s · network idle %s%n",
            percent(last.sum("kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent")),
            percent(last.sum("kafka_network_socketserver_networkprocessoravgidlepercent"))));
        double cpu = rate(first, last, "process_cpu_seconds_total", seconds);
        out.append(String.format(Locale.ROOT, "JVM         heap %s of %s · GC %s of the time · %d threads · %d/%d fds · CPU %.2f cores%n",
            bytes(last.sum("jvm_memory_used_bytes", "area", "heap")), bytes(last.sum("jvm_memory_max_bytes", "area", "heap")),
            percent(rate(first, last, "jvm_gc_collection_seconds_sum", seconds)), (long) last.sum("jvm_threads_current"),
            (long) last.sum("process_open_fds"), (long) last.sum("process_max_fds"), cpu));
        renderLatency(first, last, seconds, out);
        renderLag(last, out);
        return out.toString();
    }

    /** False for FetchConsumer and FetchFollower, which count Fetch requests a second time (as Kafka does). */
    private static boolean isRequestType(String request) {
        return !request.equals("FetchConsumer") && !request.equals("FetchFollower");
    }

    private static void renderLatency(PrometheusText first, PrometheusText last, double seconds, StringBuilder out) {
        Map<String, Double> rates = new HashMap<>();
        for (PrometheusText.Sample sample : last.samples("kafka_network_requestmetrics_requests_total")) {
            String request = sample.label("request");
            if (!request.equals("Fetch")) { // shown as FetchConsumer / FetchFollower, as Kafka dashboards do
                rates.merge(request, 0.0, Double::sum);
            }
        }
        rates.replaceAll((request, zero) -> rate(first, last, "kafka_network_requestmetrics_requests_total", seconds, "request", request::equals));
        List<String> requests = new ArrayList<>(rates.keySet());
        // Busiest first; among equally busy ones (an idle window), those with the most requests since start.
        requests.sort(Comparator.comparing((String request) -> -rates.get(request))
            .thenComparing(request -> -total(last, "kafka_network_requestmetrics_requests_total", "request", request::equals))
            .thenComparing(Comparator.naturalOrder()));
        out.append(String.format(Locale.ROOT, "%nLatency, ms (total time)  %12s %9s %9s %9s%n", "requests/s", "p50", "p99", "p99.9"));
        int rows = 0;
        for (String request : requests) {
            if (rows++ == LATENCY_ROWS) {
                break;
            }
            Map<Double, Double> buckets = buckets(first, last, request);
            out.append(String.format(Locale.ROOT, "  %-24s %12s %9s %9s %9s%n", request, number(rates.get(request)),
                millis(PrometheusText.quantile(0.5, buckets)), millis(PrometheusText.quantile(0.99, buckets)),
                millis(PrometheusText.quantile(0.999, buckets))));
        }
        if (requests.isEmpty()) {
            out.append("  (no requests yet)\n");
        }
    }

    /** Cumulative buckets of a request type's total time over the window (or since start), summed over versions. */
    private static Map<Double, Double> buckets(PrometheusText first, PrometheusText last, String request) {
        Map<Double, Double> buckets = bucketsOf(last, request);
        if (first != null) {
            Map<Double, Double> before = bucketsOf(first, request);
            Map<Double, Double> delta = new HashMap<>();
            buckets.forEach((le, count) -> delta.put(le, count - before.getOrDefault(le, 0.0)));
            boolean any = delta.values().stream().anyMatch(count -> count > 0);
            return any ? delta : buckets; // nothing in the window: percentiles since start
        }
        return buckets;
    }

    private static Map<Double, Double> bucketsOf(PrometheusText text, String request) {
        Map<Double, Double> buckets = new HashMap<>();
        for (PrometheusText.Sample sample : text.samples("kafka_network_requestmetrics_totaltimems_bucket",
            s -> request.equals(s.label("request")))) {
            String le = sample.label("le");
            double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
            buckets.merge(bound, sample.value(), Double::sum);
        }
        return buckets;
    }

    private void renderLag(PrometheusText last, StringBuilder out) {
        List<PrometheusText.Sample> lags = new ArrayList<>(last.samples("kafka_consumergroup_lag"));
        lags.sort(Comparator.comparingDouble((PrometheusText.Sample s) -> -s.value()).thenComparing(s -> s.label("consumergroup"))
            .thenComparing(s -> s.label("topic")).thenComparing(s -> Integer.parseInt(s.label("partition"))));
        Map<String, Double> committed = new LinkedHashMap<>();
        for (PrometheusText.Sample sample : last.samples("kafka_consumergroup_current_offset")) {
            committed.put(key(sample), sample.value());
        }
        out.append(String.format(Locale.ROOT, "%nConsumer lag (top %d of %d)%n", Math.min(top, lags.size()), lags.size()));
        if (lags.isEmpty()) {
            out.append("  (no committed offsets)\n");
            return;
        }
        out.append(String.format(Locale.ROOT, "  %-28s %-28s %9s %12s %12s%n", "GROUP", "TOPIC", "PARTITION", "COMMITTED", "LAG"));
        for (PrometheusText.Sample lag : lags.subList(0, Math.min(top, lags.size()))) {
            out.append(String.format(Locale.ROOT, "  %-28s %-28s %9s %12d %12d%n", lag.label("consumergroup"), lag.label("topic"),
                lag.label("partition"), committed.getOrDefault(key(lag), -1.0).longValue(), (long) lag.value()));
        }
    }

    private static String key(PrometheusText.Sample sample) {
        return sample.label("consumergroup") + '\0' + sample.label("topic") + '\0' + sample.label("partition");
    }

    private static double rate(PrometheusText first, PrometheusText last, String name, double seconds) {
        return rate(first, last, name, seconds, null, null);
    }

    /** The per-second increase of the sum of {@code name} (optionally only samples whose {@code label} passes {@code filter}). */
    private static double rate(PrometheusText first, PrometheusText last, String name, double seconds, String label,
                               java.util.function.Predicate<String> filter) {
        double now = total(last, name, label, filter);
        double before = first == null ? 0 : total(first, name, label, filter);
        return Math.max(0, now - before) / seconds;
    }

    private static double total(PrometheusText text, String name, String label, java.util.function.Predicate<String> filter) {
        double sum = 0;
        for (PrometheusText.Sample sample : text.samples(name)) {
            if (label == null || (sample.label(label) != null && filter.test(sample.label(label)))) {
                sum += sample.value();
            }
        }
        return sum;
    }

    static String bytes(double value) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        int unit = 0;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return unit == 0 ? String.format(Locale.ROOT, "%.0f %s", value, units[unit]) : String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
    }

    static String number(double value) {
        return value >= 100 ? String.format(Locale.ROOT, "%,.0f", value) : String.format(Locale.ROOT, "%.1f", value);
    }

    private static String percent(double fraction) {
        return String.format(Locale.ROOT, "%.0f%%", fraction * 100);
    }

    private static String millis(double value) {
        if (Double.isNaN(value)) {
            return "-";
        }
        return value >= 100 ? String.format(Locale.ROOT, "%.0f", value) : String.format(Locale.ROOT, "%.2f", value);
    }

    private static String duration(double seconds) {
        long total = Math.round(seconds);
        return total >= 3600 ? String.format(Locale.ROOT, "%dh%02dm", total / 3600, total % 3600 / 60)
            : total >= 60 ? String.format(Locale.ROOT, "%dm%02ds", total / 60, total % 60) : total + "s";
    }
}
