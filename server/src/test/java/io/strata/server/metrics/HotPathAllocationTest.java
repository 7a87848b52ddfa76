package io.strata.server.metrics;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ProduceResponseData;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Recording on the produce and fetch paths allocates nothing once a series exists: measured
 * with the JVM's per-thread allocation counter over many recordings, after a warm-up that
 * creates the series (and lets the JIT compile the recorders).
 */
class HotPathAllocationTest {
    private static final int CALLS = 200_000;
    /** What reading the allocation counter itself may cost, with room to spare. */
    private static final long SLACK_BYTES = 4_096;

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    private static long allocationOf(Runnable recording) {
        for (int i = 0; i < CALLS; i++) {
            recording.run();
        }
        long before = allocatedBytes();
        for (int i = 0; i < CALLS; i++) {
            recording.run();
        }
        return allocatedBytes() - before;
    }

    private static void assumeAllocationCounting() {
        Assumptions.assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean bean
            && bean.isThreadAllocatedMemorySupported() && bean.isThreadAllocatedMemoryEnabled(), "no per-thread allocation counter");
    }

    @Test
    void recordingARequestAllocatesNothing() {
        assumeAllocationCounting();
        RequestMetrics metrics = new RequestMetrics();
        long[] clock = {0};
        long allocated = allocationOf(() -> {
            long t = clock[0] += 1_000;
            metrics.record(ApiMessageType.PRODUCE, 9, false, t, t + 10, t + 500, t + 600, t + 700);
        });
        assertThat(allocated).isLessThan(SLACK_BYTES);
    }

    @Test
    void countingTheErrorsOfAProduceResponseAllocatesNothing() {
        assumeAllocationCounting();
        RequestMetrics metrics = new RequestMetrics();
        ProduceResponseData response = new ProduceResponseData();
        ProduceResponseData.TopicProduceResponse topic = new ProduceResponseData.TopicProduceResponse().setName("t");
        topic.partitionResponses().add(new ProduceResponseData.PartitionProduceResponse().setErrorCode(ErrorCode.NONE.code()));
        response.responses().add(topic);
        long allocated = allocationOf(() -> ErrorCounts.count(response, ApiMessageType.PRODUCE.apiKey, metrics));
        assertThat(allocated).isLessThan(SLACK_BYTES);
    }

    @Test
    void countingTopicBytesAllocatesNothing() {
        assumeAllocationCounting();
        BrokerTopicMetrics metrics = new BrokerTopicMetrics(() -> Set.of("orders"));
        long allocated = allocationOf(() -> {
            metrics.recordProduce("orders", 1024, 10, false);
            metrics.recordFetch("orders", 1024, false);
            metrics.recordFetch("orders", 1024, false, true);
            metrics.recordReplicationBytesIn(1024);
        });
        assertThat(allocated).isLessThan(SLACK_BYTES);
    }

    @Test
    void recordingAHistogramAllocatesNothing() {
        assumeAllocationCounting();
        Histogram histogram = Histogram.latency();
        long[] value = {0};
        long allocated = allocationOf(() -> histogram.record(value[0] += 7_919));
        assertThat(allocated).isLessThan(SLACK_BYTES);
    }
}
