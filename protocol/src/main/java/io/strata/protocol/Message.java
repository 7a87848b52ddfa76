package io.strata.protocol;

import java.util.List;

/**
 * A protocol struct generated from a schema. One instance represents the message in every
 * version; the version is chosen when reading or writing.
 *
 * <p>Not thread-safe: a message has one owner at a time.
 */
public interface Message {
    /** Replaces every field with what {@code reader} holds for {@code version}. */
    void read(Reader reader, short version);

    /** Writes exactly {@link #size(short)} bytes. */
    void write(Writable writer, short version);

    /** The encoded size in bytes at {@code version}. */
    int size(short version);

    /** Tagged fields that were read but are not in the schema; preserved on write. */
    List<RawTaggedField> unknownTaggedFields();
}
