package io.strata.server.metrics;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ExpositionFormatTest {
    private static List<MetricFamily> families() {
        Histogram histogram = new Histogram(new long[] {1_000_000, 5_000_000});
        histogram.record(500_000);
        histogram.record(2_000_000);
        histogram.record(9_000_000);
        return List.of(
            MetricFamily.counter("kafka_server_brokertopicmetrics_bytesin_total", "Bytes in.", "topic").add(42, "orders"),
            MetricFamily.gauge("kafka_log_log_size", "Size \"on disk\".", "topic", "partition").add(1.5, "a\"b\\c\nd", "0"),
            MetricFamily.histogram("kafka_network_requestmetrics_totaltimems", "Total time.", "request", "version")
                .addHistogram(histogram.snapshot(), Histogram.NANOS_PER_MS, "Produce", "9"),
            MetricFamily.gauge("empty_family", "Never written."));
    }

    @Test
    void prometheusTextNamesCountersWithTheirTotalSuffix() {
        String text = ExpositionFormat.PROMETHEUS_TEXT.write(families());
        assertThat(text).contains("# TYPE kafka_server_brokertopicmetrics_bytesin_total counter\n")
            .contains("kafka_server_brokertopicmetrics_bytesin_total{topic=\"orders\"} 42\n")
            .contains("kafka_log_log_size{topic=\"a\\\"b\\\\c\\nd\",partition=\"0\"} 1.5\n")
            .contains("# HELP kafka_log_log_size Size \"on disk\".\n")
            .doesNotContain("empty_family")
            .doesNotContain("# EOF");
    }

    @Test
    void openMetricsDropsTheTotalSuffixFromCounterFamiliesAndEndsWithEof() {
        String text = ExpositionFormat.OPENMETRICS.write(families());
        assertThat(text).contains("# TYPE kafka_server_brokertopicmetrics_bytesin counter\n")
            .contains("kafka_server_brokertopicmetrics_bytesin_total{topic=\"orders\"} 42\n")
            .contains("# HELP kafka_log_log_size Size \\\"on disk\\\".\n")
            .endsWith("# EOF\n");
    }

    @Test
    void histogramsAreCumulativeWithInfAndCountEqualToTheInfBucket() {
        String text = ExpositionFormat.PROMETHEUS_TEXT.write(families());
        assertThat(text).contains("kafka_network_requestmetrics_totaltimems_bucket{request=\"Produce\",version=\"9\",le=\"1\"} 1\n")
            .contains("kafka_network_requestmetrics_totaltimems_bucket{request=\"Produce\",version=\"9\",le=\"5\"} 2\n")
            .contains("kafka_network_requestmetrics_totaltimems_bucket{request=\"Produce\",version=\"9\",le=\"+Inf\"} 3\n")
            .contains("kafka_network_requestmetrics_totaltimems_count{request=\"Produce\",version=\"9\"} 3\n")
            .contains("kafka_network_requestmetrics_totaltimems_sum{request=\"Produce\",version=\"9\"} 11.5\n");
    }

    @Test
    void numbersAreWrittenAsBothFormatsAcceptThem() {
        assertThat(ExpositionFormat.formatNumber(3)).isEqualTo("3");
        assertThat(ExpositionFormat.formatNumber(0.05)).isEqualTo("0.05");
        assertThat(ExpositionFormat.formatNumber(1e-7)).isEqualTo("1.0e-7");
        assertThat(ExpositionFormat.formatNumber(Double.POSITIVE_INFINITY)).isEqualTo("+Inf");
        assertThat(ExpositionFormat.formatNumber(Double.NaN)).isEqualTo("NaN");
    }

    @Test
    void theAcceptHeaderChoosesOpenMetricsOnlyWhenAskedFor() {
        assertThat(ExpositionFormat.forAcceptHeader(null)).isEqualTo(ExpositionFormat.PROMETHEUS_TEXT);
        assertThat(ExpositionFormat.forAcceptHeader("text/plain;version=0.0.4;q=0.5,*/*;q=0.1")).isEqualTo(ExpositionFormat.PROMETHEUS_TEXT);
        assertThat(ExpositionFormat.forAcceptHeader("application/openmetrics-text;version=1.0.0,text/plain;q=0.5"))
            .isEqualTo(ExpositionFormat.OPENMETRICS);
    }

    @Test
    void badNamesAreBugs() {
        assertThatThrownBy(() -> MetricFamily.counter("requests", "no _total")).hasMessageContaining("_total");
        assertThatThrownBy(() -> MetricFamily.gauge("connections_total", "a gauge")).hasMessageContaining("_total");
        assertThatThrownBy(() -> MetricFamily.gauge("connection_count", "lint")).hasMessageContaining("_count");
        assertThatThrownBy(() -> MetricFamily.gauge("a-b", "dash")).hasMessageContaining("invalid metric name");
        assertThatThrownBy(() -> MetricFamily.gauge("ok", "le is reserved", "le")).hasMessageContaining("invalid label");
        assertThatThrownBy(() -> MetricFamily.gauge("ok", "arity", "a").add(1)).hasMessageContaining("labels");
    }

    @Test
    void aRegistryRefusesTwoFamiliesWithTheSameSampleName() {
        MetricsRegistry registry = new MetricsRegistry();
        registry.register(out -> out.add(MetricFamily.counter("x_total", "a").add(1)));
        registry.register(out -> out.add(MetricFamily.gauge("x", "clashes with the counter's OpenMetrics family").add(1)));
        assertThatThrownBy(registry::collect).hasMessageContaining("two metric families");
    }

    @Test
    void aFailingCollectorLosesOnlyItsOwnFamilies() {
        MetricsRegistry registry = new MetricsRegistry();
        registry.register(out -> {
            throw new IllegalStateException("broken");
        });
        registry.register(out -> out.add(MetricFamily.gauge("fine", "still there").add(1)));
        assertThat(registry.scrape(ExpositionFormat.PROMETHEUS_TEXT)).contains("fine 1\n");
    }

    @Test
    void theReaderReadsWhatTheWriterWrites() {
        PrometheusText parsed = PrometheusText.parse(ExpositionFormat.PROMETHEUS_TEXT.write(families()));
        assertThat(parsed.sum("kafka_server_brokertopicmetrics_bytesin_total", "topic", "orders")).isEqualTo(42);
        assertThat(parsed.samples("kafka_log_log_size").get(0).label("topic")).isEqualTo("a\"b\\c\nd");
        assertThat(parsed.types()).containsEntry("kafka_network_requestmetrics_totaltimems", "histogram");
        assertThat(parsed.sum("kafka_network_requestmetrics_totaltimems_count", "request", "Produce")).isEqualTo(3);
    }

    @Test
    void quantilesInterpolateInsideTheBucketLikeHistogramQuantile() {
        java.util.Map<Double, Double> buckets = new java.util.HashMap<>();
        buckets.put(1.0, 50.0);
        buckets.put(2.0, 100.0);
        buckets.put(Double.POSITIVE_INFINITY, 100.0);
        assertThat(PrometheusText.quantile(0.5, buckets)).isEqualTo(1.0);
        assertThat(PrometheusText.quantile(0.75, buckets)).isEqualTo(1.5);
        assertThat(PrometheusText.quantile(0.99, java.util.Map.of(Double.POSITIVE_INFINITY, 0.0))).isNaN();
    }
}
