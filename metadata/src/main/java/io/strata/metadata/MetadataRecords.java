package io.strata.metadata;

import io.strata.metadata.record.MetadataRecordType;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ByteBufferWriter;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.Reader;
import io.strata.protocol.Sizes;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * How a metadata record is stored as the value of a record of {@code __cluster_metadata}, as
 * KRaft frames them: {@code frame version (unsigned varint, 1) | record type id (unsigned varint)
 * | record version (unsigned varint) | record body}; keys are null. One controller operation is
 * one batch, so it is applied all or nothing.
 */
public final class MetadataRecords {
    /** The metadata log's topic. */
    public static final String TOPIC = io.strata.storage.LogManager.METADATA_TOPIC;
    static final int FRAME_VERSION = 1;

    private MetadataRecords() {
    }

    public static byte[] encode(ApiMessage record) {
        MetadataRecordType type = MetadataRecordType.fromId(record.apiKey());
        short version = type.highestVersion;
        int size = Sizes.unsignedVarintSize(FRAME_VERSION) + Sizes.unsignedVarintSize(type.id)
            + Sizes.unsignedVarintSize(version) + record.size(version);
        ByteBuffer buffer = ByteBuffer.allocate(size);
        ByteBufferWriter writer = new ByteBufferWriter(buffer);
        writer.writeUnsignedVarint(FRAME_VERSION);
        writer.writeUnsignedVarint(type.id);
        writer.writeUnsignedVarint(version);
        record.write(writer, version);
        return buffer.array();
    }

    public static List<byte[]> encode(List<ApiMessage> records) {
        List<byte[]> values = new ArrayList<>(records.size());
        for (ApiMessage record : records) {
            values.add(encode(record));
        }
        return values;
    }

    /** @throws ProtocolException for an unknown frame version, record type or a record version newer than this software */
    public static ApiMessage decode(ByteBuffer value) {
        Reader reader = new Reader(value);
        int frameVersion = reader.readUnsignedVarint();
        if (frameVersion != FRAME_VERSION) {
            throw new ProtocolException("unknown metadata frame version " + frameVersion);
        }
        int typeId = reader.readUnsignedVarint();
        MetadataRecordType type = MetadataRecordType.fromId(typeId);
        if (type == null) {
            throw new ProtocolException("unknown metadata record type " + typeId);
        }
        short version = (short) reader.readUnsignedVarint();
        if (version > type.highestVersion) {
            throw new ProtocolException("metadata record type " + type + " version " + version + " is newer than this software");
        }
        return type.read(reader, version);
    }

    public static List<ApiMessage> decode(List<byte[]> values) {
        List<ApiMessage> records = new ArrayList<>(values.size());
        for (byte[] value : values) {
            records.add(decode(ByteBuffer.wrap(value)));
        }
        return records;
    }
}
