package io.strata.it.compat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What a data-directory fixture holds, exactly, as the release that wrote it showed it to
 * kafka-clients just before its clean shutdown. {@link MakeCompatFixture} writes it next to the
 * archive ({@code strata-<commit>-manifest.json}); {@link DataDirectoryCompatibilityTest} checks
 * the current code shows the same. Every list is in a fixed order (topics and groups by name,
 * partitions by number, records by offset), so the file is stable and diffable.
 */
record CompatManifest(
    /** The commit whose server wrote the directory. */
    String strataCommit,
    /** The generating server's wall clock when the last write was acknowledged. */
    long writtenAtMs,
    String clusterId,
    int nodeId,
    /** The server properties the directory was written with; a server started on it must use them too (partition counts of the internal topics). */
    Map<String, String> serverProperties,
    List<Topic> topics,
    List<Group> groups,
    List<Transaction> transactions,
    /** Dynamic broker configs by broker id ("" is the cluster-wide default). */
    Map<String, Map<String, String>> brokerConfigs) {

    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
        .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

    static CompatManifest read(Path file) throws IOException {
        return JSON.readValue(file.toFile(), CompatManifest.class);
    }

    void write(Path file) throws IOException {
        JSON.writeValue(file.toFile(), this);
    }

    /** A user topic: its id, its dynamic (non-default) configs and every partition's content. */
    record Topic(String name, String topicId, Map<String, String> configs, List<Partition> partitions) {
    }

    /**
     * One partition: log start offset (ListOffsets earliest), end offset (the high watermark),
     * every record read_uncommitted returns, in offset order, and the producers DescribeProducers
     * lists (idempotent and transactional state: what deduplication and fencing go by), by id.
     * Control records (transaction markers) are not listed; they take offsets, so offsets have gaps.
     */
    record Partition(int partition, long logStartOffset, long endOffset, List<RecordEntry> records, List<Producer> producers) {
    }

    record Producer(long producerId, int producerEpoch, int lastSequence, long lastTimestamp) {
    }

    /**
     * A record by CRC32 (hex) of its key, value and each header value; null for a null key or
     * value (a tombstone). {@code aborted}: written by an aborted transaction, so invisible to
     * read_committed.
     */
    record RecordEntry(long offset, long timestamp, String keyCrc, String valueCrc, List<Header> headers, boolean aborted) {
    }

    record Header(String key, String valueCrc) {
    }

    /** A group's type (CLASSIC or CONSUMER, as Admin describes it) and committed offsets by "topic-partition". */
    record Group(String groupId, String type, Map<String, CommittedOffset> offsets) {
    }

    record CommittedOffset(long offset, String metadata) {
    }

    /** A transactional id's state as DescribeTransactions answered, and the records its committed transactions wrote ("topic-partition@offset"). */
    record Transaction(String transactionalId, long producerId, int producerEpoch, String state, List<String> committedRecords,
                       List<String> abortedRecords) {
    }
}
