package io.strata.protocol;

import java.util.List;

/** Helpers the generated code uses for unknown tagged fields. */
public final class TaggedFields {
    private TaggedFields() {
    }

    /**
     * Writes the raw fields of {@code raw} from {@code index} whose tag is below {@code beforeTag},
     * so that unknown and known fields come out in ascending tag order, and returns the index
     * of the first raw field not written.
     */
    public static int writeRawTagsBefore(Writable writer, List<RawTaggedField> raw, int index, int beforeTag) {
        if (raw == null) {
            return index;
        }
        int next = index;
        while (next < raw.size() && raw.get(next).tag() < beforeTag) {
            RawTaggedField field = raw.get(next);
            writer.writeUnsignedVarint(field.tag());
            writer.writeUnsignedVarint(field.data().length);
            writer.writeByteArray(field.data());
            next++;
        }
        return next;
    }

    public static int rawTaggedFieldsSize(List<RawTaggedField> raw) {
        if (raw == null) {
            return 0;
        }
        int size = 0;
        for (RawTaggedField field : raw) {
            size += Sizes.unsignedVarintSize(field.tag()) + Sizes.unsignedVarintSize(field.data().length) + field.data().length;
        }
        return size;
    }

    public static boolean equalRawTaggedFields(List<RawTaggedField> a, List<RawTaggedField> b) {
        boolean aEmpty = a == null || a.isEmpty();
        boolean bEmpty = b == null || b.isEmpty();
        if (aEmpty || bEmpty) {
            return aEmpty == bEmpty;
        }
        return a.equals(b);
    }
}
