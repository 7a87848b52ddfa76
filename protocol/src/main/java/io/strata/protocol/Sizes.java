package io.strata.protocol;

import java.nio.charset.StandardCharsets;

/** Encoded sizes of the protocol's variable-length primitives. */
public final class Sizes {
    public static final byte[] EMPTY_BYTES = new byte[0];

    private Sizes() {
    }

    public static int unsignedVarintSize(int value) {
        // 7 payload bits per byte; value 0 still takes one byte.
        int leadingZeros = Integer.numberOfLeadingZeros(value);
        return leadingZeros == 32 ? 1 : (38 - leadingZeros) / 7;
    }

    public static int varintSize(int value) {
        return unsignedVarintSize((value << 1) ^ (value >> 31));
    }

    public static int varlongSize(long value) {
        long zigzag = (value << 1) ^ (value >> 63);
        int leadingZeros = Long.numberOfLeadingZeros(zigzag);
        return leadingZeros == 64 ? 1 : (70 - leadingZeros) / 7;
    }

    /** The UTF-8 length of {@code text}, without encoding it. Unpaired surrogates count as '?' (1 byte), as the encoder writes them. */
    public static int utf8Length(String text) {
        int length = text.length();
        int bytes = length;
        for (int i = 0; i < length; i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                continue;
            }
            if (c < 0x800) {
                bytes += 1;
            } else if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(text.charAt(i + 1))) {
                bytes += 2; // 4 bytes for the pair, 2 chars already counted
                i++;
            } else if (Character.isSurrogate(c)) {
                continue; // replaced by '?'
            } else {
                bytes += 2;
            }
        }
        return bytes;
    }

    public static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
