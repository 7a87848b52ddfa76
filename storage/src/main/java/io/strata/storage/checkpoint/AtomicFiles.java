package io.strata.storage.checkpoint;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;

/**
 * Whole-file replace and strict read of the small text files under a log directory.
 *
 * <p>A write goes to {@code <name>.tmp} in the same directory, is forced to disk, renamed over
 * the target with {@link StandardCopyOption#ATOMIC_MOVE} (rename(2), which replaces the target),
 * and then the directory is forced so the rename itself is durable. After a crash the target
 * holds either the old or the new content, never a mix; a stale {@code .tmp} is simply
 * overwritten by the next write.
 */
public final class AtomicFiles {
    static final String TEMP_SUFFIX = ".tmp";

    private AtomicFiles() {
    }

    static Path tempFileFor(Path target) {
        return target.resolveSibling(target.getFileName() + TEMP_SUFFIX);
    }

    public static void write(Path target, String content) throws IOException {
        Path temp = tempFileFor(target);
        try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer bytes = ByteBuffer.wrap(content.getBytes(StandardCharsets.UTF_8));
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
            channel.force(true);
        }
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
        forceDirectory(target.toAbsolutePath().getParent());
    }

    private static void forceDirectory(Path directory) throws IOException {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    /**
     * The file's lines, split on '\n' only. The content must be valid UTF-8, at most
     * {@code maxSizeBytes} long, and either empty or ending in '\n' (a missing final newline means
     * a truncated last line, whose number could look valid yet be wrong).
     *
     * @return empty when the file does not exist
     */
    public static Optional<List<String>> readLines(Path file, long maxSizeBytes) throws IOException {
        byte[] bytes;
        try {
            long sizeBytes = Files.size(file);
            if (sizeBytes > maxSizeBytes) {
                throw new CorruptCheckpointException(file, 0, "file is larger than the limit: sizeBytes=" + sizeBytes
                    + ", maxSizeBytes=" + maxSizeBytes);
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException missing) {
            return Optional.empty();
        }
        String content = decodeUtf8(file, bytes);
        if (content.isEmpty()) {
            return Optional.of(List.of());
        }
        if (content.charAt(content.length() - 1) != '\n') {
            int lastLine = (int) content.chars().filter(c -> c == '\n').count() + 1;
            throw new CorruptCheckpointException(file, lastLine, "last line is not terminated by a newline");
        }
        return Optional.of(List.of(content.substring(0, content.length() - 1).split("\n", -1)));
    }

    private static String decodeUtf8(Path file, byte[] bytes) throws CorruptCheckpointException {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes))
                .toString();
        } catch (CharacterCodingException e) {
            throw new CorruptCheckpointException(file, 0, "content is not valid UTF-8: " + e);
        }
    }
}
