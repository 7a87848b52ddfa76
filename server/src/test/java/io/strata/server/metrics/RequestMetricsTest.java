package io.strata.server.metrics;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.ProduceResponseData;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class RequestMetricsTest {
    private static final long MS = 1_000_000;

    private static PrometheusText scrape(MetricsCollector... collectors) {
        List<MetricFamily> families = new ArrayList<>();
        for (MetricsCollector collector : collectors) {
            collector.collect(families);
        }
        return PrometheusText.parse(ExpositionFormat.PROMETHEUS_TEXT.write(families));
    }

    @Test
    void eachStageOfTheRequestPipelineGetsItsOwnHistogram() {
        RequestMetrics metrics = new RequestMetrics();
        // received 0, dequeued 2 ms, handler returned 3 ms, answered from the purgatory at 10 ms, written at 10.5 ms
        metrics.record(ApiMessageType.PRODUCE, 9, false, 0, 2 * MS, 3 * MS, 10 * MS, 10 * MS + MS / 2);
        PrometheusText text = scrape(metrics);
        assertThat(text.sum("kafka_network_requestmetrics_requests_total", "request", "Produce", "version", "9")).isEqualTo(1);
        assertThat(text.sum("kafka_network_requestmetrics_requestqueuetimems_sum", "request", "Produce")).isEqualTo(2);
        assertThat(text.sum("kafka_network_requestmetrics_localtimems_sum", "request", "Produce")).isEqualTo(1);
        assertThat(text.sum("kafka_network_requestmetrics_remotetimems_sum", "request", "Produce")).isEqualTo(7);
        assertThat(text.sum("kafka_network_requestmetrics_responsesendtimems_sum", "request", "Produce")).isEqualTo(0.5);
        assertThat(text.sum("kafka_network_requestmetrics_totaltimems_sum", "request", "Produce")).isEqualTo(10.5);
        assertThat(text.sum("kafka_network_requestmetrics_totaltimems_count", "request", "Produce")).isEqualTo(1);
    }

    @Test
    void fetchesAreAlsoCountedAsConsumerOrFollowerFetchesAsKafkaDoes() {
        RequestMetrics metrics = new RequestMetrics();
        metrics.record(ApiMessageType.FETCH, 17, false, 0, 1, 2, 3, 4);
        metrics.record(ApiMessageType.FETCH, 17, true, 0, 1, 2, 3, 4);
        PrometheusText text = scrape(metrics);
        assertThat(text.sum("kafka_network_requestmetrics_requests_total", "request", "Fetch")).isEqualTo(2);
        assertThat(text.sum("kafka_network_requestmetrics_requests_total", "request", "FetchConsumer")).isEqualTo(1);
        assertThat(text.sum("kafka_network_requestmetrics_requests_total", "request", "FetchFollower")).isEqualTo(1);
    }

    @Test
    void errorCodesAreCountedAtEveryLevelOfTheResponse() {
        RequestMetrics metrics = new RequestMetrics();
        ProduceResponseData produce = new ProduceResponseData();
        ProduceResponseData.TopicProduceResponse topic = new ProduceResponseData.TopicProduceResponse().setName("t");
        topic.partitionResponses().add(new ProduceResponseData.PartitionProduceResponse().setIndex(0).setErrorCode(ErrorCode.NONE.code()));
        topic.partitionResponses().add(new ProduceResponseData.PartitionProduceResponse().setIndex(1)
            .setErrorCode(ErrorCode.NOT_LEADER_OR_FOLLOWER.code()));
        produce.responses().add(topic);
        ErrorCounts.count(produce, ApiMessageType.PRODUCE.apiKey, metrics);

        FetchResponseData fetch = new FetchResponseData().setErrorCode(ErrorCode.NONE.code());
        FetchResponseData.FetchableTopicResponse fetched = new FetchResponseData.FetchableTopicResponse().setTopic("t");
        fetched.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(0).setErrorCode(ErrorCode.OFFSET_OUT_OF_RANGE.code()));
        fetch.responses().add(fetched);
        ErrorCounts.count(fetch, ApiMessageType.FETCH.apiKey, metrics);

        PrometheusText text = scrape(metrics);
        assertThat(text.sum("kafka_network_requestmetrics_errors_total", "request", "Produce", "error", "NONE")).isEqualTo(1);
        assertThat(text.sum("kafka_network_requestmetrics_errors_total", "request", "Produce", "error", "NOT_LEADER_OR_FOLLOWER")).isEqualTo(1);
        assertThat(text.sum("kafka_network_requestmetrics_errors_total", "request", "Fetch", "error", "NONE")).isEqualTo(1);
        assertThat(text.sum("kafka_network_requestmetrics_errors_total", "request", "Fetch", "error", "OFFSET_OUT_OF_RANGE")).isEqualTo(1);
    }

    @Test
    void connectionsAreCountedPerListener() {
        RequestMetrics metrics = new RequestMetrics();
        metrics.registerListener("INTERNAL");
        metrics.connectionOpened("PLAINTEXT");
        metrics.connectionOpened("PLAINTEXT");
        metrics.connectionClosed("PLAINTEXT");
        PrometheusText text = scrape(metrics);
        assertThat(text.sum("kafka_server_socketservermetrics_connections", "listener", "PLAINTEXT")).isEqualTo(1);
        assertThat(text.sum("kafka_server_socketservermetrics_connection_creation_total", "listener", "PLAINTEXT")).isEqualTo(2);
        assertThat(text.sum("kafka_server_socketservermetrics_connection_close_total", "listener", "PLAINTEXT")).isEqualTo(1);
        assertThat(text.samples("kafka_server_socketservermetrics_connections", s -> "INTERNAL".equals(s.label("listener")))).hasSize(1);
    }

    @Test
    void topicCountersOnlyKeepTopicsTheBrokerStillHosts() {
        Set<String>[] hosted = new Set[] {Set.of("a", "b")};
        BrokerTopicMetrics metrics = new BrokerTopicMetrics(() -> hosted[0]);
        metrics.recordProduce("a", 100, 3, false);
        metrics.recordProduce("a", 0, 0, true);
        metrics.recordFetch("a", 70, false);
        metrics.recordFetch("b", 0, true);
        PrometheusText text = scrape(metrics);
        assertThat(text.sum("kafka_server_brokertopicmetrics_bytesin_total", "topic", "a")).isEqualTo(100);
        assertThat(text.sum("kafka_server_brokertopicmetrics_messagesin_total", "topic", "a")).isEqualTo(3);
        assertThat(text.sum("kafka_server_brokertopicmetrics_totalproducerequests_total", "topic", "a")).isEqualTo(2);
        assertThat(text.sum("kafka_server_brokertopicmetrics_failedproducerequests_total", "topic", "a")).isEqualTo(1);
        assertThat(text.sum("kafka_server_brokertopicmetrics_bytesout_total", "topic", "a")).isEqualTo(70);
        assertThat(text.sum("kafka_server_brokertopicmetrics_failedfetchrequests_total", "topic", "b")).isEqualTo(1);
        hosted[0] = Set.of("a");
        assertThat(scrape(metrics).samples("kafka_server_brokertopicmetrics_bytesin_total")).extracting(s -> s.label("topic"))
            .containsExactly("a");
    }

    @Test
    void disabledTopicMetricsRecordNothing() {
        BrokerTopicMetrics.DISABLED.recordProduce("a", 1, 1, false);
        assertThat(BrokerTopicMetrics.DISABLED.isEnabled()).isFalse();
    }
}
