package io.strata.generator;

/** A field's type as written in the schema: a primitive, a struct name, or {@code []Element}. */
final class FieldType {
    enum Kind { BOOL, INT8, INT16, UINT16, INT32, UINT32, INT64, FLOAT64, STRING, UUID, BYTES, RECORDS, STRUCT, ARRAY }

    final Kind kind;
    /** For STRUCT: the struct's name. */
    final String structName;
    /** For ARRAY: the element type. */
    final FieldType element;

    private FieldType(Kind kind, String structName, FieldType element) {
        this.kind = kind;
        this.structName = structName;
        this.element = element;
    }

    static FieldType parse(String text) {
        if (text.startsWith("[]")) {
            FieldType element = parse(text.substring(2));
            if (element.kind == Kind.ARRAY) {
                throw new IllegalArgumentException("nested arrays are not supported: " + text);
            }
            return new FieldType(Kind.ARRAY, null, element);
        }
        switch (text) {
            case "bool": return new FieldType(Kind.BOOL, null, null);
            case "int8": return new FieldType(Kind.INT8, null, null);
            case "int16": return new FieldType(Kind.INT16, null, null);
            case "uint16": return new FieldType(Kind.UINT16, null, null);
            case "int32": return new FieldType(Kind.INT32, null, null);
            case "uint32": return new FieldType(Kind.UINT32, null, null);
            case "int64": return new FieldType(Kind.INT64, null, null);
            case "float64": return new FieldType(Kind.FLOAT64, null, null);
            case "string": return new FieldType(Kind.STRING, null, null);
            case "uuid": return new FieldType(Kind.UUID, null, null);
            case "bytes": return new FieldType(Kind.BYTES, null, null);
            case "records": return new FieldType(Kind.RECORDS, null, null);
            default:
                if (text.isEmpty() || !Character.isUpperCase(text.charAt(0))) {
                    throw new IllegalArgumentException("unknown field type: " + text);
                }
                return new FieldType(Kind.STRUCT, text, null);
        }
    }

    boolean isArray() {
        return kind == Kind.ARRAY;
    }

    boolean isStruct() {
        return kind == Kind.STRUCT;
    }

    boolean isStructArray() {
        return kind == Kind.ARRAY && element.kind == Kind.STRUCT;
    }

    /** Types whose values may be null on the wire when the schema allows it. */
    boolean canBeNullable() {
        return kind == Kind.STRING || kind == Kind.BYTES || kind == Kind.RECORDS || kind == Kind.ARRAY || kind == Kind.STRUCT;
    }

    /** Fixed encoded width in bytes, or -1 for variable-length types. */
    int fixedSize() {
        switch (kind) {
            case BOOL: case INT8: return 1;
            case INT16: case UINT16: return 2;
            case INT32: case UINT32: return 4;
            case INT64: case FLOAT64: return 8;
            case UUID: return 16;
            default: return -1;
        }
    }

    /** The Java type used for a field of this type; {@code zeroCopy} bytes are a ByteBuffer. */
    String javaType(boolean zeroCopy) {
        switch (kind) {
            case BOOL: return "boolean";
            case INT8: return "byte";
            case INT16: return "short";
            case UINT16: case INT32: return "int";
            case UINT32: case INT64: return "long";
            case FLOAT64: return "double";
            case STRING: return "String";
            case UUID: return "java.util.UUID";
            case BYTES: return zeroCopy ? "java.nio.ByteBuffer" : "byte[]";
            case RECORDS: return "io.strata.protocol.records.Records";
            case STRUCT: return structName;
            case ARRAY: return "java.util.List<" + element.boxedType() + ">";
            default: throw new IllegalStateException("unexpected kind " + kind);
        }
    }

    String boxedType() {
        switch (kind) {
            case BOOL: return "Boolean";
            case INT8: return "Byte";
            case INT16: return "Short";
            case UINT16: case INT32: return "Integer";
            case UINT32: case INT64: return "Long";
            case FLOAT64: return "Double";
            default: return javaType(false);
        }
    }

    boolean isJavaPrimitive() {
        return fixedSize() > 0 && kind != Kind.UUID;
    }

    @Override
    public String toString() {
        return kind == Kind.ARRAY ? "[]" + element : kind == Kind.STRUCT ? structName : kind.name().toLowerCase();
    }
}
