package io.strata.protocol.records;

import io.strata.protocol.Writable;

/**
 * A record set as it travels in a Produce request or Fetch response: a sequence of record
 * batches, kept as bytes. Implementations: {@link MemoryRecords} (a buffer) and, in the
 * storage module, a slice of a segment file that the network layer sends without copying.
 */
public interface Records {
    int sizeInBytes();

    /** Writes all {@link #sizeInBytes()} bytes to {@code writer}. */
    void writeTo(Writable writer);
}
