package io.strata.tools.client;

import io.strata.protocol.records.Header;
import io.strata.protocol.records.TimestampType;

import java.util.List;

/**
 * A record as the consumer hands it out, with its position. Key and value are copies (null
 * when the record has none); header values are read-only views.
 */
public record ConsumedRecord(String topic, int partition, long offset, long timestamp, TimestampType timestampType,
                             byte[] key, byte[] value, List<Header> headers) {
}
