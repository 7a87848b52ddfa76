package io.strata.server.metrics;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * Kafka's {@code kafka.server:type=BrokerTopicMetrics} per topic: bytes in and out, messages
 * in, produce and fetch requests (one per partition of a request, as Kafka counts them) and
 * the failed ones. Broker-wide totals are the sum over topics ({@code sum(rate(...))}).
 *
 * <p>Replication traffic is counted apart, broker-wide as Kafka counts it (its {@code allTopics}
 * meters only): {@code ReplicationBytesInPerSec}, the record bytes this node appended as a follower,
 * and {@code ReplicationBytesOutPerSec}, the record bytes it answered followers' fetches with. A
 * follower's fetch counts as a fetch request of its topic (Kafka's TotalFetchRequestsPerSec counts
 * every fetch) but its bytes are not consumer bytes out. The part of that traffic that moves a
 * partition to a replica being added by a reassignment (KIP-455) is also counted as
 * {@code ReassignmentBytesInPerSec} (appended here while this node is an adding replica) and
 * {@code ReassignmentBytesOutPerSec} (answered to an adding replica), broker-wide as in Kafka.
 *
 * <p>Hot path: a topic's counters are created on its first use and found with one
 * {@link ConcurrentHashMap#get} afterwards; recording is {@link LongAdder} increments. Only
 * partitions this broker hosts are recorded (the caller checks), so a client naming made-up
 * topics cannot grow the map; series of deleted topics are dropped at the next scrape.
 *
 * <p>Thread-safe. {@link #DISABLED} records nothing (metrics.enabled=false).
 */
public final class BrokerTopicMetrics implements MetricsCollector {
    /** Records nothing. */
    public static final BrokerTopicMetrics DISABLED = new BrokerTopicMetrics(false, () -> null);

    private final boolean enabled;
    private final Supplier<Set<String>> hostedTopics;
    private final ConcurrentHashMap<String, TopicCounters> topics = new ConcurrentHashMap<>();
    private final LongAdder replicationBytesIn = new LongAdder();
    private final LongAdder replicationBytesOut = new LongAdder();
    private final LongAdder reassignmentBytesIn = new LongAdder();
    private final LongAdder reassignmentBytesOut = new LongAdder();

    /** The counters of one topic. */
    static final class TopicCounters {
        final LongAdder bytesIn = new LongAdder();
        final LongAdder bytesOut = new LongAdder();
        final LongAdder messagesIn = new LongAdder();
        final LongAdder produceRequests = new LongAdder();
        final LongAdder fetchRequests = new LongAdder();
        final LongAdder failedProduceRequests = new LongAdder();
        final LongAdder failedFetchRequests = new LongAdder();
    }

    /**
     * @param hostedTopics the topics this broker hosts now (null: keep every topic); series of
     *                     other topics are dropped at scrape time
     */
    public BrokerTopicMetrics(Supplier<Set<String>> hostedTopics) {
        this(true, hostedTopics);
    }

    private BrokerTopicMetrics(boolean enabled, Supplier<Set<String>> hostedTopics) {
        this.enabled = enabled;
        this.hostedTopics = hostedTopics;
    }

    private TopicCounters topic(String topic) {
        TopicCounters counters = topics.get(topic);
        return counters != null ? counters : topics.computeIfAbsent(topic, name -> new TopicCounters());
    }

    /** One partition of a produce request was appended ({@code failed} false) or refused. */
    public void recordProduce(String topic, int bytes, int messages, boolean failed) {
        if (!enabled) {
            return;
        }
        TopicCounters counters = topic(topic);
        counters.produceRequests.increment();
        if (failed) {
            counters.failedProduceRequests.increment();
        } else {
            counters.bytesIn.add(bytes);
            counters.messagesIn.add(messages);
        }
    }

    /** One partition of a fetch request was answered with {@code bytes} of records, or an error. */
    public void recordFetch(String topic, int bytes, boolean failed) {
        recordFetch(topic, bytes, failed, false);
    }

    /**
     * One partition of a fetch request was answered with {@code bytes} of records, or an error; a
     * follower's bytes count as replication bytes out only (Kafka's BrokerTopicStats.updateBytesOut).
     */
    public void recordFetch(String topic, int bytes, boolean failed, boolean fromFollower) {
        recordFetch(topic, bytes, failed, fromFollower, false);
    }

    /**
     * As {@link #recordFetch(String, int, boolean, boolean)}; {@code toAddingReplica} (meaningful
     * for a follower's fetch only) says the follower is an adding replica of a running
     * reassignment, so its bytes also count as reassignment bytes out (Kafka's isReassignmentFetch).
     */
    public void recordFetch(String topic, int bytes, boolean failed, boolean fromFollower, boolean toAddingReplica) {
        if (!enabled) {
            return;
        }
        TopicCounters counters = topic(topic);
        counters.fetchRequests.increment();
        if (failed) {
            counters.failedFetchRequests.increment();
        } else if (fromFollower) {
            replicationBytesOut.add(bytes);
            if (toAddingReplica) {
                reassignmentBytesOut.add(bytes);
            }
        } else {
            counters.bytesOut.add(bytes);
        }
    }

    /** This node appended {@code bytes} of record batches as a follower. */
    public void recordReplicationBytesIn(long bytes) {
        if (enabled) {
            replicationBytesIn.add(bytes);
        }
    }

    /** This node appended {@code bytes} of record batches as an adding replica of a running reassignment (also replication bytes in). */
    public void recordReassignmentBytesIn(long bytes) {
        if (enabled) {
            reassignmentBytesIn.add(bytes);
        }
    }

    public boolean isEnabled() {
        return enabled;
    }

    @Override
    public void collect(List<MetricFamily> out) {
        Set<String> hosted = hostedTopics.get();
        if (hosted != null) {
            topics.keySet().removeIf(topic -> !hosted.contains(topic));
        }
        MetricFamily bytesIn = family("bytesin", "Bytes of record batches appended, by topic.");
        MetricFamily bytesOut = family("bytesout", "Bytes of records sent in fetch responses, by topic.");
        MetricFamily messagesIn = family("messagesin", "Records appended, by topic.");
        MetricFamily produce = family("totalproducerequests", "Produce requests, counted once per partition, by topic.");
        MetricFamily fetch = family("totalfetchrequests", "Fetch requests, counted once per partition, by topic.");
        MetricFamily failedProduce = family("failedproducerequests", "Produce requests that failed for a partition, by topic.");
        MetricFamily failedFetch = family("failedfetchrequests", "Fetch requests that failed for a partition, by topic.");
        for (Map.Entry<String, TopicCounters> entry : new TreeMap<>(topics).entrySet()) {
            String topic = entry.getKey();
            TopicCounters counters = entry.getValue();
            bytesIn.add(counters.bytesIn.sum(), topic);
            bytesOut.add(counters.bytesOut.sum(), topic);
            messagesIn.add(counters.messagesIn.sum(), topic);
            produce.add(counters.produceRequests.sum(), topic);
            fetch.add(counters.fetchRequests.sum(), topic);
            failedProduce.add(counters.failedProduceRequests.sum(), topic);
            failedFetch.add(counters.failedFetchRequests.sum(), topic);
        }
        out.addAll(List.of(bytesIn, bytesOut, messagesIn, produce, fetch, failedProduce, failedFetch));
        out.add(MetricFamily.counter("kafka_server_brokertopicmetrics_replicationbytesin_total",
            "Record batch bytes appended as a follower (broker-wide, as Kafka counts it).").add(replicationBytesIn.sum()));
        out.add(MetricFamily.counter("kafka_server_brokertopicmetrics_replicationbytesout_total",
            "Record bytes sent in answers to followers' fetches (broker-wide, as Kafka counts it).").add(replicationBytesOut.sum()));
        out.add(MetricFamily.counter("kafka_server_brokertopicmetrics_reassignmentbytesin_total",
            "Record batch bytes appended as an adding replica of a partition reassignment (part of the replication bytes in).")
            .add(reassignmentBytesIn.sum()));
        out.add(MetricFamily.counter("kafka_server_brokertopicmetrics_reassignmentbytesout_total",
            "Record bytes sent in answers to the fetches of adding replicas of a partition reassignment (part of the replication bytes out).")
            .add(reassignmentBytesOut.sum()));
    }

    private static MetricFamily family(String kafkaName, String help) {
        return MetricFamily.counter("kafka_server_brokertopicmetrics_" + kafkaName + "_total", help, "topic");
    }
}
