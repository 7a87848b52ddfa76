package io.strata.metadata;

import io.strata.metadata.record.MetadataRecordType;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.Reader;
import io.strata.protocol.records.DefaultRecordBatch;
import io.strata.protocol.records.MemoryRecords;
import io.strata.protocol.records.Record;
import io.strata.protocol.records.RecordBatch;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The metadata log of every released data-directory fixture (it/src/test/resources/compat) still
 * decodes with the current record classes, applies to an image, and that image survives its own
 * snapshot (toRecords). Reads the log bytes directly, without MetadataLog or a server.
 */
class ReleaseMetadataLogCompatibilityTest {
    private static final Path FIXTURES = Path.of("..", "it", "src", "test", "resources", "compat");
    private static final String METADATA_SEGMENT = "__cluster_metadata-0/00000000000000000000.log";
    /** The metadata frame: unsigned varints frame version (1), record type id, record version; then the record. */
    private static final int FRAME_VERSION = 1;

    @Test
    void everyReleasedMetadataLogLoadsAndSurvivesItsSnapshot() throws IOException {
        List<Path> fixtures = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(FIXTURES, "*-datadir.tar.gz")) {
            stream.forEach(fixtures::add);
        }
        assertThat(fixtures).as("fixtures in %s", FIXTURES.toAbsolutePath()).isNotEmpty();
        for (Path fixture : fixtures) {
            MetadataImage image = MetadataImage.EMPTY;
            for (RecordBatch entry : MemoryRecords.readableRecords(ByteBuffer.wrap(untar(fixture, METADATA_SEGMENT))).batches()) {
                DefaultRecordBatch batch = (DefaultRecordBatch) entry;
                if (batch.isControlBatch()) {
                    continue;
                }
                List<ApiMessage> records = new ArrayList<>();
                for (Record record : batch.records()) {
                    records.add(decode(record.value()));
                }
                image = image.apply(records, batch.lastOffset());
            }
            assertThat(image.brokers()).as("%s: registered brokers", fixture).isNotEmpty();
            assertThat(image.topicsByName()).as("%s: topics", fixture).isNotEmpty();
            assertThat(MetadataImage.EMPTY.apply(image.toRecords(), image.offset())).as("%s: snapshot round trip", fixture).isEqualTo(image);
        }
    }

    private static ApiMessage decode(ByteBuffer value) {
        Reader reader = new Reader(value);
        assertThat(reader.readUnsignedVarint()).isEqualTo(FRAME_VERSION);
        MetadataRecordType type = MetadataRecordType.fromId(reader.readUnsignedVarint());
        assertThat(type).isNotNull();
        short version = (short) reader.readUnsignedVarint();
        assertThat(version).isLessThanOrEqualTo(type.highestVersion);
        return type.read(reader, version);
    }

    /** One regular file's bytes from a gzipped ustar archive (512-byte headers, size in octal at 124). */
    private static byte[] untar(Path archive, String wanted) throws IOException {
        try (InputStream in = new GZIPInputStream(Files.newInputStream(archive))) {
            byte[] header = new byte[512];
            while (in.readNBytes(header, 0, 512) == 512 && header[0] != 0) {
                String name = field(header, 0, 100);
                String prefix = field(header, 345, 155);
                String path = prefix.isEmpty() ? name : prefix + "/" + name;
                long size = Long.parseLong(field(header, 124, 12).trim().isEmpty() ? "0" : field(header, 124, 12).trim(), 8);
                byte[] body = in.readNBytes((int) size);
                in.readNBytes((int) ((512 - size % 512) % 512));
                if (path.startsWith("./")) {
                    path = path.substring(2);
                }
                if (path.equals(wanted)) {
                    return body;
                }
            }
        }
        throw new IOException(wanted + " not found in " + archive);
    }

    private static String field(byte[] header, int offset, int length) {
        int end = offset;
        while (end < offset + length && header[end] != 0) {
            end++;
        }
        return new String(header, offset, end - offset, StandardCharsets.US_ASCII);
    }
}
