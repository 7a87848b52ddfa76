package io.strata.chaos.campaign;

import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;

/**
 * How the drain reads a record value back as the history's long: the value as a decimal string in ASCII (what
 * {@code StringSerializer} or kcat writes), or else 8 bytes big-endian (what {@code LongSerializer} writes). A
 * long serialized as 8 bytes that are all ASCII digits would be at least {@code 0x3030303030303030} ≈ 3.5e18,
 * far beyond any run's values, so the two never collide. Anything else (null, other lengths) is undecodable.
 * Stateless.
 */
final class ValueCodec {
    private static final int DECIMAL_DIGITS_MAX = 19;

    private ValueCodec() {
    }

    static OptionalLong decode(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            return OptionalLong.empty();
        }
        if (isDecimal(bytes)) {
            return OptionalLong.of(Long.parseLong(new String(bytes, StandardCharsets.US_ASCII)));
        }
        if (bytes.length == Long.BYTES) {
            long value = 0;
            for (byte b : bytes) {
                value = (value << 8) | (b & 0xff);
            }
            return OptionalLong.of(value);
        }
        return OptionalLong.empty();
    }

    private static boolean isDecimal(byte[] bytes) {
        int start = bytes[0] == '-' ? 1 : 0;
        if (bytes.length == start || bytes.length - start > DECIMAL_DIGITS_MAX) {
            return false;
        }
        for (int i = start; i < bytes.length; i++) {
            if (bytes[i] < '0' || bytes[i] > '9') {
                return false;
            }
        }
        return true;
    }
}
