package io.strata.raft;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Snapshot files in a log directory, named as Kafka names them:
 * {@code <20-digit end offset>-<10-digit epoch>.checkpoint}, e.g.
 * {@code 00000000000000001000-0000000003.checkpoint} for the snapshot of every entry below 1000
 * whose last entry has epoch 3. The file holds the snapshot's record batches and nothing else.
 *
 * <p>Crash safety (KAFKA-15312): a snapshot is written to {@code <name>.checkpoint.part}, fsynced,
 * renamed atomically to {@code <name>.checkpoint}, and the directory fsynced. A crash therefore
 * leaves either no {@code .checkpoint} file or a complete one; {@code .part} files left by a
 * crash are deleted by {@link #load}. Files are not checksummed beyond the batches' own CRCs.
 *
 * <p>Not thread-safe.
 */
final class FileSnapshots {
    static final String SUFFIX = ".checkpoint";
    static final String PART_SUFFIX = ".checkpoint.part";
    private static final Pattern NAME = Pattern.compile("(\\d{20})-(\\d{10})" + Pattern.quote(SUFFIX));

    private FileSnapshots() {
    }

    static String fileName(OffsetAndEpoch snapshotId) {
        return String.format("%020d-%010d%s", snapshotId.offset(), snapshotId.epoch(), SUFFIX);
    }

    static Optional<OffsetAndEpoch> parse(String fileName) {
        Matcher matcher = NAME.matcher(fileName);
        if (!matcher.matches()) {
            return Optional.empty();
        }
        return Optional.of(new OffsetAndEpoch(Long.parseLong(matcher.group(1)), Integer.parseInt(matcher.group(2))));
    }

    /** The frozen snapshots in {@code dir} by end offset; deletes the {@code .part} files a crash left. */
    static TreeMap<Long, OffsetAndEpoch> load(Path dir) throws IOException {
        TreeMap<Long, OffsetAndEpoch> found = new TreeMap<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                if (name.endsWith(PART_SUFFIX)) {
                    Files.deleteIfExists(file);
                } else {
                    parse(name).ifPresent(id -> found.merge(id.offset(), id, (a, b) -> a.epoch() >= b.epoch() ? a : b));
                }
            }
        }
        return found;
    }

    static void delete(Path dir, OffsetAndEpoch snapshotId) throws IOException {
        Files.deleteIfExists(dir.resolve(fileName(snapshotId)));
    }

    /** Writes {@code <name>.checkpoint.part}; {@link #freeze()} makes it {@code <name>.checkpoint}. */
    static final class Writer implements SnapshotWriter {
        private final Path dir;
        private final OffsetAndEpoch snapshotId;
        private final Path partFile;
        private final FileChannel channel;
        private final Runnable onFreeze;
        private long size;
        private boolean frozen;
        private boolean closed;

        Writer(Path dir, OffsetAndEpoch snapshotId, Runnable onFreeze) {
            this.dir = dir;
            this.snapshotId = snapshotId;
            this.onFreeze = onFreeze;
            this.partFile = dir.resolve(fileName(snapshotId).replace(SUFFIX, PART_SUFFIX));
            try {
                this.channel = FileChannel.open(partFile, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create snapshot file " + partFile, e);
            }
        }

        @Override
        public OffsetAndEpoch snapshotId() {
            return snapshotId;
        }

        @Override
        public long sizeInBytes() {
            return size;
        }

        @Override
        public void append(ByteBuffer bytes) {
            if (frozen || closed) {
                throw new IllegalStateException("snapshot " + snapshotId + " is " + (closed ? "closed" : "frozen") + ": cannot append");
            }
            ByteBuffer data = bytes.duplicate();
            try {
                while (data.hasRemaining()) {
                    size += channel.write(data);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write snapshot file " + partFile, e);
            }
        }

        @Override
        public void freeze() {
            if (closed) {
                throw new IllegalStateException("snapshot " + snapshotId + " was abandoned: cannot freeze");
            }
            if (frozen) {
                return;
            }
            Path target = dir.resolve(fileName(snapshotId));
            try {
                channel.force(true);
                channel.close();
                try {
                    Files.move(partFile, target, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(partFile, target, StandardCopyOption.REPLACE_EXISTING);
                }
                fsyncDirectory(dir);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot freeze snapshot " + target, e);
            }
            frozen = true;
            onFreeze.run();
        }

        @Override
        public void close() {
            if (frozen || closed) {
                return;
            }
            closed = true;
            try {
                channel.close();
                Files.deleteIfExists(partFile);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot abandon snapshot file " + partFile, e);
            }
        }
    }

    /** Reads a frozen {@code .checkpoint} file by position. */
    static final class Reader implements SnapshotReader {
        private final OffsetAndEpoch snapshotId;
        private final Path file;

        Reader(Path dir, OffsetAndEpoch snapshotId) {
            this.snapshotId = snapshotId;
            this.file = dir.resolve(fileName(snapshotId));
        }

        @Override
        public OffsetAndEpoch snapshotId() {
            return snapshotId;
        }

        @Override
        public long sizeInBytes() {
            try {
                return Files.size(file);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the size of " + file, e);
            }
        }

        @Override
        public ByteBuffer read(long position, int maxBytes) {
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
                long available = Math.max(0, channel.size() - position);
                ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(maxBytes, available));
                while (buffer.hasRemaining()) {
                    if (channel.read(buffer, position + buffer.position()) < 0) {
                        break;
                    }
                }
                return buffer.flip();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + file, e);
            }
        }
    }

    static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException e) {
            if (!System.getProperty("os.name", "").toLowerCase().contains("win")) {
                throw e;
            }
        }
    }
}
