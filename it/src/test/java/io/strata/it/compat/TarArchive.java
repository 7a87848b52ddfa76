package io.strata.it.compat;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/**
 * Unpacks a gzipped POSIX ustar archive (what {@code tar --format=ustar} writes) with JDK code
 * only. Header block layout (512 bytes, fields NUL- or space-terminated ASCII):
 *
 * <pre>
 *   offset  size  field
 *        0   100  name
 *      124    12  size (octal)
 *      156     1  typeflag ('0' or NUL: file, '5': directory)
 *      257     6  magic "ustar"
 *      345   155  prefix (joined to name with '/')
 * </pre>
 *
 * File data follows its header, padded to 512 bytes; two zero blocks end the archive. Only
 * regular files and directories are accepted, every entry must stay inside the target, and
 * an entry is at most {@link #ENTRY_BYTES_MAX}: a fixture is small, anything else is a bug.
 */
final class TarArchive {
    static final int BLOCK_BYTES = 512;
    static final long ENTRY_BYTES_MAX = 64L * 1024 * 1024;

    private TarArchive() {
    }

    static void unpack(InputStream gzipped, Path target) throws IOException {
        Path root = target.toAbsolutePath().normalize();
        try (DataInputStream in = new DataInputStream(new GZIPInputStream(gzipped))) {
            byte[] header = new byte[BLOCK_BYTES];
            while (true) {
                in.readFully(header);
                if (isZero(header)) {
                    return;
                }
                if (!field(header, 257, 5).equals("ustar")) {
                    throw new IOException("not a ustar header: magic=" + field(header, 257, 6));
                }
                String prefix = field(header, 345, 155);
                String name = prefix.isEmpty() ? field(header, 0, 100) : prefix + "/" + field(header, 0, 100);
                long sizeBytes = Long.parseLong(field(header, 124, 12).trim(), 8);
                if (sizeBytes < 0 || sizeBytes > ENTRY_BYTES_MAX) {
                    throw new IOException("entry too large: name=" + name + " sizeBytes=" + sizeBytes);
                }
                Path path = root.resolve(name).normalize();
                if (!path.startsWith(root)) {
                    throw new IOException("entry outside the target: name=" + name);
                }
                char type = (char) header[156];
                if (type == '5') {
                    Files.createDirectories(path);
                } else if (type == '0' || type == 0) {
                    Files.createDirectories(path.getParent());
                    try (OutputStream out = Files.newOutputStream(path)) {
                        copy(in, out, sizeBytes);
                    }
                    in.skipNBytes((BLOCK_BYTES - sizeBytes % BLOCK_BYTES) % BLOCK_BYTES);
                } else {
                    throw new IOException("unsupported entry type '" + type + "': name=" + name);
                }
            }
        } catch (EOFException e) {
            throw new IOException("archive ends inside an entry", e);
        }
    }

    private static void copy(InputStream in, OutputStream out, long sizeBytes) throws IOException {
        byte[] buffer = new byte[8192];
        long remaining = sizeBytes;
        while (remaining > 0) {
            int read = in.read(buffer, 0, (int) Math.min(buffer.length, remaining));
            if (read < 0) {
                throw new EOFException();
            }
            out.write(buffer, 0, read);
            remaining -= read;
        }
    }

    private static String field(byte[] header, int offset, int length) {
        int end = offset;
        while (end < offset + length && header[end] != 0) {
            end++;
        }
        return new String(header, offset, end - offset, StandardCharsets.US_ASCII);
    }

    private static boolean isZero(byte[] block) {
        for (byte b : block) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }
}
