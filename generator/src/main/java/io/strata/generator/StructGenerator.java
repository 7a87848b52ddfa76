package io.strata.generator;

import io.strata.generator.FieldType.Kind;
import io.strata.generator.Spec.FieldSpec;
import io.strata.generator.Spec.StructSpec;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Emits one Java class for a struct of a message schema: fields with their defaults, a reader,
 * a writer, a size calculation, accessors, equals/hashCode/toString.
 *
 * <p>Wire rules implemented here (the Kafka protocol guide's): fields appear in schema order,
 * each only in its versions; in flexible versions strings, bytes, records and arrays use the
 * compact (unsigned-varint length + 1) forms and every struct ends with a tagged-field section
 * that lists, in ascending tag order, each tagged field whose value differs from its default,
 * interleaved with unknown tagged fields preserved from the input.
 */
final class StructGenerator {
    private static final String READER = "io.strata.protocol.Reader";
    private static final String WRITER = "io.strata.protocol.Writable";
    private static final String RAW = "io.strata.protocol.RawTaggedField";
    private static final String TAGS = "io.strata.protocol.TaggedFields";
    private static final String SIZES = "io.strata.protocol.Sizes";
    private static final String PROTOCOL_EXCEPTION = "io.strata.protocol.ProtocolException";
    private static final String UNSUPPORTED = "io.strata.protocol.UnsupportedVersionException";

    private final Spec spec;
    private final StructSpec struct;
    /** The versions in which this struct can be read or written. */
    private final Versions context;
    private final boolean topLevel;
    private final Map<String, StructSpec> structsByName;
    private int localCounter;

    StructGenerator(Spec spec, StructSpec struct, Versions context, boolean topLevel, Map<String, StructSpec> structsByName) {
        this.spec = spec;
        this.struct = struct;
        this.context = context;
        this.topLevel = topLevel;
        this.structsByName = structsByName;
    }

    void generate(CodeBuffer b, List<StructGenerator> nested) {
        String interfaces = topLevel && spec.apiKey != null ? "io.strata.protocol.ApiMessage" : "io.strata.protocol.Message";
        b.open("public %sfinal class %s implements %s", topLevel ? "" : "static ", struct.name, interfaces);
        if (topLevel) {
            if (spec.apiKey != null) {
                b.line("public static final short API_KEY = %d;", spec.apiKey);
            }
            b.line("public static final short LOWEST_SUPPORTED_VERSION = %d;", spec.validVersions.lowest());
            b.line("public static final short HIGHEST_SUPPORTED_VERSION = %d;", spec.validVersions.highest());
            b.blank();
        }
        for (FieldSpec field : struct.fields) {
            b.line("private %s %s;", field.type.javaType(field.zeroCopy), field.camelName());
        }
        b.line("private java.util.List<%s> _unknownTaggedFields;", RAW);
        b.blank();
        generateConstructors(b);
        generateRead(b);
        generateWrite(b);
        generateSize(b);
        generateAccessors(b);
        generateEquals(b);
        generateToString(b);
        for (StructGenerator generator : nested) {
            b.blank();
            generator.generate(b, List.of());
        }
        b.close();
    }

    // ---------------------------------------------------------------- constructors and defaults

    private void generateConstructors(CodeBuffer b) {
        b.open("public %s()", struct.name);
        for (FieldSpec field : struct.fields) {
            b.line("this.%s = %s;", field.camelName(), defaultExpression(field));
        }
        b.close().blank();
        b.open("public %s(%s _reader, short _version)", struct.name, READER);
        b.line("read(_reader, _version);");
        b.close().blank();
        if (topLevel) {
            if (spec.apiKey != null) {
                b.line("@Override public short apiKey() { return API_KEY; }");
            }
            String override = spec.apiKey != null ? "@Override " : "";
            b.line("%spublic short lowestSupportedVersion() { return LOWEST_SUPPORTED_VERSION; }", override);
            b.line("%spublic short highestSupportedVersion() { return HIGHEST_SUPPORTED_VERSION; }", override);
            b.blank();
        }
    }

    private String defaultExpression(FieldSpec field) {
        FieldType type = field.type;
        String value = field.defaultValue;
        if (field.nullDefault()) {
            if (!field.nullableVersions.containsAll(field.versions)) {
                throw new IllegalArgumentException("field " + field.name + " defaults to null but is not nullable in all its versions");
            }
            return "null";
        }
        switch (type.kind) {
            case BOOL:
                return value == null ? "false" : Boolean.toString(Boolean.parseBoolean(value));
            case INT8: return "(byte) " + parseInteger(value, Byte.MIN_VALUE, Byte.MAX_VALUE);
            case INT16: return "(short) " + parseInteger(value, Short.MIN_VALUE, Short.MAX_VALUE);
            case UINT16: return Long.toString(parseInteger(value, 0, 65535));
            case INT32: return Long.toString(parseInteger(value, Integer.MIN_VALUE, Integer.MAX_VALUE));
            case UINT32: return parseInteger(value, 0, 4294967295L) + "L";
            case INT64: return parseInteger(value, Long.MIN_VALUE, Long.MAX_VALUE) + "L";
            case FLOAT64: return value == null ? "0.0" : Double.toString(Double.parseDouble(value));
            case STRING: return value == null ? "\"\"" : "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
            case UUID: return "io.strata.protocol.Uuids.ZERO";
            case BYTES: return field.zeroCopy ? "java.nio.ByteBuffer.allocate(0)" : "io.strata.protocol.Sizes.EMPTY_BYTES";
            case RECORDS: return "null";
            case STRUCT: return "new " + type.structName + "()";
            case ARRAY: return "new java.util.ArrayList<>(0)";
            default: throw new IllegalStateException();
        }
    }

    private static long parseInteger(String value, long min, long max) {
        if (value == null || value.isEmpty()) {
            return 0;
        }
        long parsed;
        String text = value.trim();
        boolean negative = text.startsWith("-");
        String digits = negative ? text.substring(1) : text;
        if (digits.startsWith("0x") || digits.startsWith("0X")) {
            parsed = Long.parseLong(digits.substring(2), 16);
        } else {
            parsed = Long.parseLong(digits);
        }
        parsed = negative ? -parsed : parsed;
        if (parsed < min || parsed > max) {
            throw new IllegalArgumentException("default " + value + " out of range [" + min + ", " + max + "]");
        }
        return parsed;
    }

    /** An expression that is true when the field holds something other than its default. */
    private String nonDefaultExpression(FieldSpec field, String value) {
        FieldType type = field.type;
        if (field.nullDefault()) {
            return value + " != null";
        }
        switch (type.kind) {
            case BOOL: case INT8: case INT16: case UINT16: case INT32: case UINT32: case INT64:
                return value + " != " + defaultExpression(field);
            case FLOAT64: return "Double.compare(" + value + ", " + defaultExpression(field) + ") != 0";
            case STRING: return "!java.util.Objects.equals(" + value + ", " + defaultExpression(field) + ")";
            case UUID: return "!io.strata.protocol.Uuids.ZERO.equals(" + value + ")";
            case BYTES:
                return field.zeroCopy ? "(" + value + " == null || " + value + ".hasRemaining())"
                        : "(" + value + " == null || " + value + ".length != 0)";
            case RECORDS: return value + " != null";
            case ARRAY: return "(" + value + " == null || !" + value + ".isEmpty())";
            case STRUCT: return "!" + defaultExpression(field) + ".equals(" + value + ")";
            default: throw new IllegalStateException();
        }
    }

    private Versions flexibleFor(FieldSpec field) {
        return field.flexibleVersionsOverride != null ? field.flexibleVersionsOverride : spec.flexibleVersions;
    }

    private List<FieldSpec> taggedFieldsByTag() {
        return struct.fields.stream().filter(FieldSpec::isTagged)
                .sorted(Comparator.comparingInt(f -> f.tag)).collect(Collectors.toList());
    }

    // ---------------------------------------------------------------- read

    private void generateRead(CodeBuffer b) {
        b.line("@Override");
        b.open("public void read(%s _reader, short _version)", READER);
        if (topLevel) {
            b.open("if (_version < LOWEST_SUPPORTED_VERSION || _version > HIGHEST_SUPPORTED_VERSION)");
            b.line("throw new %s(\"%s does not support version \" + _version);", UNSUPPORTED, struct.name);
            b.close();
        }
        for (FieldSpec field : struct.fields) {
            String target = "this." + field.camelName();
            if (field.isTagged()) {
                b.line("%s = %s;", target, defaultExpression(field));
                continue;
            }
            String present = field.versions.condition("_version", context);
            if (present.equals("false")) {
                b.line("%s = %s;", target, defaultExpression(field));
                continue;
            }
            Versions fieldContext = field.versions.intersect(context);
            if (!present.equals("true")) {
                b.open("if %s", present);
            }
            emitFlexibleSplit(b, field.type, flexibleFor(field), fieldContext,
                compact -> emitReadValue(b, field, field.type, target, compact, field.nullableVersions.condition("_version", fieldContext)));
            if (!present.equals("true")) {
                b.reopen("else");
                b.line("%s = %s;", target, defaultExpression(field));
                b.close();
            }
        }
        b.line("this._unknownTaggedFields = null;");
        String flexible = spec.flexibleVersions.condition("_version", context);
        if (!flexible.equals("false")) {
            b.open("if (%s)", flexible);
            b.line("int _numTaggedFields = _reader.readUnsignedVarint();");
            b.open("for (int _i = 0; _i < _numTaggedFields; _i++)");
            b.line("int _tag = _reader.readUnsignedVarint();");
            b.line("int _size = _reader.readUnsignedVarint();");
            b.open("switch (_tag)");
            for (FieldSpec field : taggedFieldsByTag()) {
                Versions taggedContext = field.taggedVersions.intersect(field.versions).intersect(context);
                String tagged = taggedContext.condition("_version", context);
                if (tagged.equals("false")) {
                    continue;
                }
                b.open("case %d:", field.tag);
                b.open("if (%s)", tagged);
                emitReadValue(b, field, field.type, "this." + field.camelName(), true,
                        field.nullableVersions.condition("_version", taggedContext));
                b.line("break;");
                b.close();
                b.line("this._unknownTaggedFields = _reader.readUnknownTaggedField(this._unknownTaggedFields, _tag, _size);");
                b.line("break;");
                b.close();
            }
            b.line("default:");
            b.line("    this._unknownTaggedFields = _reader.readUnknownTaggedField(this._unknownTaggedFields, _tag, _size);");
            b.line("    break;");
            b.close();
            b.close();
            b.close();
        }
        b.close().blank();
    }

    private interface CompactEmitter {
        void emit(boolean compact);
    }

    /** Emits {@code body} once per encoding the field can have in {@code fieldContext}. */
    private static void emitFlexibleSplit(CodeBuffer b, FieldType type, Versions flexible, Versions fieldContext, CompactEmitter body) {
        if (type.fixedSize() > 0 || type.isStruct()) {
            body.emit(false); // same encoding in flexible and non-flexible versions
            return;
        }
        String condition = flexible.condition("_version", fieldContext);
        if (condition.equals("true")) {
            body.emit(true);
        } else if (condition.equals("false")) {
            body.emit(false);
        } else {
            b.open("if (%s)", condition);
            body.emit(true);
            b.reopen("else");
            body.emit(false);
            b.close();
        }
    }

    private void emitNullOrThrow(CodeBuffer b, FieldSpec field, String target, String nullable) {
        if (nullable.equals("true")) {
            b.line("%s = null;", target);
        } else if (nullable.equals("false")) {
            b.line("throw new %s(\"non-nullable field %s was serialized as null\");", PROTOCOL_EXCEPTION, field.name);
        } else {
            b.open("if (%s)", nullable);
            b.line("%s = null;", target);
            b.reopen("else");
            b.line("throw new %s(\"non-nullable field %s was serialized as null\");", PROTOCOL_EXCEPTION, field.name);
            b.close();
        }
    }

    private void emitReadValue(CodeBuffer b, FieldSpec field, FieldType type, String target, boolean compact, String nullable) {
        String lengthRead = compact ? "_reader.readUnsignedVarint() - 1" : (type.kind == Kind.STRING ? "_reader.readShort()" : "_reader.readInt()");
        switch (type.kind) {
            case BOOL: b.line("%s = _reader.readByte() != 0;", target); return;
            case INT8: b.line("%s = _reader.readByte();", target); return;
            case INT16: b.line("%s = _reader.readShort();", target); return;
            case UINT16: b.line("%s = _reader.readUnsignedShort();", target); return;
            case INT32: b.line("%s = _reader.readInt();", target); return;
            case UINT32: b.line("%s = _reader.readUnsignedInt();", target); return;
            case INT64: b.line("%s = _reader.readLong();", target); return;
            case FLOAT64: b.line("%s = _reader.readDouble();", target); return;
            case UUID: b.line("%s = _reader.readUuid();", target); return;
            case STRING:
            case BYTES:
            case RECORDS: {
                String length = "_length" + (localCounter++);
                b.open("");
                b.line("int %s = %s;", length, lengthRead);
                b.open("if (%s < 0)", length);
                emitNullOrThrow(b, field, target, nullable);
                b.reopen("else");
                if (type.kind == Kind.STRING) {
                    b.line("%s = _reader.readString(%s);", target, length);
                } else if (type.kind == Kind.RECORDS) {
                    b.line("%s = _reader.readRecords(%s);", target, length);
                } else if (field.zeroCopy) {
                    b.line("%s = _reader.readByteBuffer(%s);", target, length);
                } else {
                    b.line("%s = _reader.readBytes(%s);", target, length);
                }
                b.close();
                b.close();
                return;
            }
            case STRUCT:
                if (nullable.equals("false")) {
                    b.line("%s = new %s(_reader, _version);", target, type.structName);
                } else {
                    b.open("if (_reader.readByte() < 0)");
                    emitNullOrThrow(b, field, target, nullable);
                    b.reopen("else");
                    b.line("%s = new %s(_reader, _version);", target, type.structName);
                    b.close();
                }
                return;
            case ARRAY: {
                String count = "_count" + (localCounter++);
                String list = "_list" + (localCounter++);
                String element = "_element" + (localCounter++);
                b.open("");
                b.line("int %s = %s;", count, lengthRead);
                b.open("if (%s < 0)", count);
                emitNullOrThrow(b, field, target, nullable);
                b.reopen("else");
                b.line("_reader.checkArrayLength(%s);", count);
                b.line("java.util.ArrayList<%s> %s = new java.util.ArrayList<>(%s);", type.element.boxedType(), list, count);
                String index = "_i" + (localCounter++);
                b.open("for (int %s = 0; %s < %s; %s++)", index, index, count, index);
                if (type.element.kind == Kind.STRUCT) {
                    b.line("%s.add(new %s(_reader, _version));", list, type.element.structName);
                } else {
                    b.line("%s %s;", type.element.javaType(false), element);
                    emitReadValue(b, field, type.element, element, compact, "false");
                    b.line("%s.add(%s);", list, element);
                }
                b.close();
                b.line("%s = %s;", target, list);
                b.close();
                b.close();
                return;
            }
            default:
                throw new IllegalStateException();
        }
    }

    // ---------------------------------------------------------------- write

    private void generateWrite(CodeBuffer b) {
        b.line("@Override");
        b.open("public void write(%s _writer, short _version)", WRITER);
        for (FieldSpec field : struct.fields) {
            String value = "this." + field.camelName();
            Versions fieldContext = field.versions.intersect(context);
            String present = field.isTagged() ? "false" : field.versions.condition("_version", context);
            if (!present.equals("false")) {
                if (!present.equals("true")) {
                    b.open("if %s", present);
                }
                emitFlexibleSplit(b, field.type, flexibleFor(field), fieldContext,
                    compact -> emitWriteValue(b, field, field.type, value, compact, field.nullableVersions.condition("_version", fieldContext)));
                if (!present.equals("true")) {
                    b.reopen("else");
                    emitUnsupportedCheck(b, field, value);
                    b.close();
                }
            } else if (!field.isTagged()) {
                emitUnsupportedCheck(b, field, value);
            } else {
                Versions taggedContext = field.taggedVersions.intersect(field.versions).intersect(context);
                String tagged = taggedContext.condition("_version", context);
                if (!tagged.equals("true")) {
                    b.open("if (!%s)", tagged.equals("false") ? "false" : tagged);
                    emitUnsupportedCheck(b, field, value);
                    b.close();
                }
            }
        }
        String flexible = spec.flexibleVersions.condition("_version", context);
        if (!flexible.equals("false")) {
            b.open("if (%s)", flexible);
            b.line("int _numTaggedFields = _unknownTaggedFields == null ? 0 : _unknownTaggedFields.size();");
            for (FieldSpec field : taggedFieldsByTag()) {
                String tagged = field.taggedVersions.intersect(field.versions).intersect(context).condition("_version", context);
                if (!tagged.equals("false")) {
                    b.line("if (%s && %s) _numTaggedFields++;", tagged, nonDefaultExpression(field, "this." + field.camelName()));
                }
            }
            b.line("_writer.writeUnsignedVarint(_numTaggedFields);");
            b.line("int _rawIndex = 0;");
            for (FieldSpec field : taggedFieldsByTag()) {
                Versions taggedContext = field.taggedVersions.intersect(field.versions).intersect(context);
                String tagged = taggedContext.condition("_version", context);
                if (tagged.equals("false")) {
                    continue;
                }
                String value = "this." + field.camelName();
                b.line("_rawIndex = %s.writeRawTagsBefore(_writer, _unknownTaggedFields, _rawIndex, %d);", TAGS, field.tag);
                b.open("if (%s && %s)", tagged, nonDefaultExpression(field, value));
                b.line("_writer.writeUnsignedVarint(%d);", field.tag);
                String size = "_tagSize" + (localCounter++);
                b.line("int %s = 0;", size);
                emitSizeValue(b, field, field.type, value, true, size);
                b.line("_writer.writeUnsignedVarint(%s);", size);
                emitWriteValue(b, field, field.type, value, true, field.nullableVersions.condition("_version", taggedContext));
                b.close();
            }
            b.line("%s.writeRawTagsBefore(_writer, _unknownTaggedFields, _rawIndex, Integer.MAX_VALUE);", TAGS);
            b.reopen("else");
            b.open("if (_unknownTaggedFields != null && !_unknownTaggedFields.isEmpty())");
            b.line("throw new %s(\"Tagged fields were set, but version \" + _version + \" of %s does not support them.\");", UNSUPPORTED, struct.name);
            b.close();
            b.close();
        }
        b.close().blank();
    }

    private void emitUnsupportedCheck(CodeBuffer b, FieldSpec field, String value) {
        if (field.ignorable) {
            return;
        }
        b.open("if (%s)", nonDefaultExpression(field, value));
        b.line("throw new %s(\"Attempted to write a non-default %s at version \" + _version);", UNSUPPORTED, field.camelName());
        b.close();
    }

    private void emitNullCheckForWrite(CodeBuffer b, FieldSpec field, String nullable, String nullWrite) {
        if (nullable.equals("true")) {
            b.line(nullWrite);
        } else if (nullable.equals("false")) {
            b.line("throw new IllegalArgumentException(\"non-nullable field %s was null\");", field.name);
        } else {
            b.open("if (%s)", nullable);
            b.line(nullWrite);
            b.reopen("else");
            b.line("throw new IllegalArgumentException(\"non-nullable field %s was null\");", field.name);
            b.close();
        }
    }

    private void emitWriteLength(CodeBuffer b, boolean compact, Kind kind, String length) {
        if (compact) {
            b.line("_writer.writeUnsignedVarint(%s + 1);", length);
        } else if (kind == Kind.STRING) {
            b.line("_writer.writeShort((short) %s);", length);
        } else {
            b.line("_writer.writeInt(%s);", length);
        }
    }

    private void emitWriteValue(CodeBuffer b, FieldSpec field, FieldType type, String value, boolean compact, String nullable) {
        String nullWrite = compact ? "_writer.writeUnsignedVarint(0);" : (type.kind == Kind.STRING ? "_writer.writeShort((short) -1);" : "_writer.writeInt(-1);");
        switch (type.kind) {
            case BOOL: b.line("_writer.writeByte(%s ? (byte) 1 : (byte) 0);", value); return;
            case INT8: b.line("_writer.writeByte(%s);", value); return;
            case INT16: b.line("_writer.writeShort(%s);", value); return;
            case UINT16: b.line("_writer.writeShort((short) %s);", value); return;
            case INT32: b.line("_writer.writeInt(%s);", value); return;
            case UINT32: b.line("_writer.writeInt((int) %s);", value); return;
            case INT64: b.line("_writer.writeLong(%s);", value); return;
            case FLOAT64: b.line("_writer.writeDouble(%s);", value); return;
            case UUID: b.line("_writer.writeUuid(%s);", value); return;
            case STRING: {
                String bytes = "_bytes" + (localCounter++);
                b.open("if (%s == null)", value);
                emitNullCheckForWrite(b, field, nullable, nullWrite);
                b.reopen("else");
                b.line("byte[] %s = %s.utf8(%s);", bytes, SIZES, value);
                emitWriteLength(b, compact, Kind.STRING, bytes + ".length");
                b.line("_writer.writeByteArray(%s);", bytes);
                b.close();
                return;
            }
            case BYTES:
                b.open("if (%s == null)", value);
                emitNullCheckForWrite(b, field, nullable, nullWrite);
                b.reopen("else");
                if (field.zeroCopy) {
                    emitWriteLength(b, compact, Kind.BYTES, value + ".remaining()");
                    b.line("_writer.writeByteBuffer(%s);", value);
                } else {
                    emitWriteLength(b, compact, Kind.BYTES, value + ".length");
                    b.line("_writer.writeByteArray(%s);", value);
                }
                b.close();
                return;
            case RECORDS:
                b.open("if (%s == null)", value);
                emitNullCheckForWrite(b, field, nullable, nullWrite);
                b.reopen("else");
                emitWriteLength(b, compact, Kind.RECORDS, value + ".sizeInBytes()");
                b.line("_writer.writeRecords(%s);", value);
                b.close();
                return;
            case STRUCT:
                if (nullable.equals("false")) {
                    b.line("%s.write(_writer, _version);", value);
                } else {
                    b.open("if (%s == null)", value);
                    emitNullCheckForWrite(b, field, nullable, "_writer.writeByte((byte) -1);");
                    b.reopen("else");
                    b.line("_writer.writeByte((byte) 1);");
                    b.line("%s.write(_writer, _version);", value);
                    b.close();
                }
                return;
            case ARRAY: {
                b.open("if (%s == null)", value);
                emitNullCheckForWrite(b, field, nullable, nullWrite);
                b.reopen("else");
                emitWriteLength(b, compact, Kind.ARRAY, value + ".size()");
                String element = "_element" + (localCounter++);
                b.open("for (%s %s : %s)", type.element.boxedType(), element, value);
                if (type.element.kind == Kind.STRUCT) {
                    b.line("%s.write(_writer, _version);", element);
                } else {
                    emitWriteValue(b, field, type.element, element, compact, "false");
                }
                b.close();
                b.close();
                return;
            }
            default:
                throw new IllegalStateException();
        }
    }

    // ---------------------------------------------------------------- size

    private void generateSize(CodeBuffer b) {
        b.line("@Override");
        b.open("public int size(short _version)");
        b.line("int _size = 0;");
        for (FieldSpec field : struct.fields) {
            if (field.isTagged()) {
                continue;
            }
            String present = field.versions.condition("_version", context);
            if (present.equals("false")) {
                continue;
            }
            Versions fieldContext = field.versions.intersect(context);
            if (!present.equals("true")) {
                b.open("if %s", present);
            }
            emitFlexibleSplit(b, field.type, flexibleFor(field), fieldContext,
                compact -> emitSizeValue(b, field, field.type, "this." + field.camelName(), compact, "_size"));
            if (!present.equals("true")) {
                b.close();
            }
        }
        String flexible = spec.flexibleVersions.condition("_version", context);
        if (!flexible.equals("false")) {
            b.open("if (%s)", flexible);
            b.line("int _numTaggedFields = _unknownTaggedFields == null ? 0 : _unknownTaggedFields.size();");
            b.line("_size += %s.rawTaggedFieldsSize(_unknownTaggedFields);", TAGS);
            for (FieldSpec field : taggedFieldsByTag()) {
                String tagged = field.taggedVersions.intersect(field.versions).intersect(context).condition("_version", context);
                if (tagged.equals("false")) {
                    continue;
                }
                String value = "this." + field.camelName();
                b.open("if (%s && %s)", tagged, nonDefaultExpression(field, value));
                b.line("_numTaggedFields++;");
                String size = "_tagSize" + (localCounter++);
                b.line("int %s = 0;", size);
                emitSizeValue(b, field, field.type, value, true, size);
                b.line("_size += %s.unsignedVarintSize(%d) + %s.unsignedVarintSize(%s) + %s;", SIZES, field.tag, SIZES, size, size);
                b.close();
            }
            b.line("_size += %s.unsignedVarintSize(_numTaggedFields);", SIZES);
            b.close();
        }
        b.line("return _size;");
        b.close().blank();
    }

    private void emitSizeLength(CodeBuffer b, boolean compact, Kind kind, String length, String accumulator) {
        if (compact) {
            b.line("%s += %s.unsignedVarintSize(%s + 1);", accumulator, SIZES, length);
        } else {
            b.line("%s += %d;", accumulator, kind == Kind.STRING ? 2 : 4);
        }
    }

    private void emitSizeValue(CodeBuffer b, FieldSpec field, FieldType type, String value, boolean compact, String accumulator) {
        int fixed = type.fixedSize();
        if (fixed > 0) {
            b.line("%s += %d;", accumulator, fixed);
            return;
        }
        String nullSize = compact ? "1" : (type.kind == Kind.STRING ? "2" : "4");
        switch (type.kind) {
            case STRING: {
                String length = "_utf8Length" + (localCounter++);
                b.open("if (%s == null)", value);
                b.line("%s += %s;", accumulator, nullSize);
                b.reopen("else");
                b.line("int %s = %s.utf8Length(%s);", length, SIZES, value);
                emitSizeLength(b, compact, Kind.STRING, length, accumulator);
                b.line("%s += %s;", accumulator, length);
                b.close();
                return;
            }
            case BYTES:
            case RECORDS: {
                String length = type.kind == Kind.RECORDS ? value + ".sizeInBytes()" : field.zeroCopy ? value + ".remaining()" : value + ".length";
                b.open("if (%s == null)", value);
                b.line("%s += %s;", accumulator, nullSize);
                b.reopen("else");
                emitSizeLength(b, compact, Kind.BYTES, length, accumulator);
                b.line("%s += %s;", accumulator, length);
                b.close();
                return;
            }
            case STRUCT:
                if (field.nullableVersions.isEmpty()) {
                    b.line("%s += %s.size(_version);", accumulator, value);
                } else {
                    b.line("%s += %s == null ? 1 : 1 + %s.size(_version);", accumulator, value, value);
                }
                return;
            case ARRAY: {
                b.open("if (%s == null)", value);
                b.line("%s += %s;", accumulator, nullSize);
                b.reopen("else");
                emitSizeLength(b, compact, Kind.ARRAY, value + ".size()", accumulator);
                int elementFixed = type.element.fixedSize();
                if (elementFixed > 0) {
                    b.line("%s += %s.size() * %d;", accumulator, value, elementFixed);
                } else {
                    String element = "_element" + (localCounter++);
                    b.open("for (%s %s : %s)", type.element.boxedType(), element, value);
                    if (type.element.kind == Kind.STRUCT) {
                        b.line("%s += %s.size(_version);", accumulator, element);
                    } else {
                        emitSizeValue(b, field, type.element, element, compact, accumulator);
                    }
                    b.close();
                }
                b.close();
                return;
            }
            default:
                throw new IllegalStateException();
        }
    }

    // ---------------------------------------------------------------- accessors, equals, toString

    private void generateAccessors(CodeBuffer b) {
        for (FieldSpec field : struct.fields) {
            b.line("public %s %s() { return this.%s; }", field.type.javaType(field.zeroCopy), field.camelName(), field.camelName());
        }
        b.blank();
        for (FieldSpec field : struct.fields) {
            b.open("public %s %s(%s v)", struct.name, field.setterName(), field.type.javaType(field.zeroCopy));
            b.line("this.%s = v;", field.camelName());
            b.line("return this;");
            b.close();
        }
        b.blank();
        b.line("@Override");
        b.open("public java.util.List<%s> unknownTaggedFields()", RAW);
        b.line("if (_unknownTaggedFields == null) _unknownTaggedFields = new java.util.ArrayList<>(0);");
        b.line("return _unknownTaggedFields;");
        b.close().blank();
    }

    private void generateEquals(CodeBuffer b) {
        b.line("@Override");
        b.open("public boolean equals(Object _other)");
        b.line("if (this == _other) return true;");
        b.line("if (!(_other instanceof %s)) return false;", struct.name);
        b.line("%s _that = (%s) _other;", struct.name, struct.name);
        for (FieldSpec field : struct.fields) {
            String name = field.camelName();
            switch (field.type.kind) {
                case BOOL: case INT8: case INT16: case UINT16: case INT32: case UINT32: case INT64:
                    b.line("if (this.%s != _that.%s) return false;", name, name);
                    break;
                case FLOAT64:
                    b.line("if (Double.compare(this.%s, _that.%s) != 0) return false;", name, name);
                    break;
                case BYTES:
                    if (!field.zeroCopy) {
                        b.line("if (!java.util.Arrays.equals(this.%s, _that.%s)) return false;", name, name);
                        break;
                    }
                    // fall through: ByteBuffer compares its remaining content
                default:
                    b.line("if (!java.util.Objects.equals(this.%s, _that.%s)) return false;", name, name);
            }
        }
        b.line("return %s.equalRawTaggedFields(_unknownTaggedFields, _that._unknownTaggedFields);", TAGS);
        b.close().blank();

        b.line("@Override");
        b.open("public int hashCode()");
        b.line("int _hash = 0;");
        for (FieldSpec field : struct.fields) {
            String name = field.camelName();
            String hash;
            switch (field.type.kind) {
                case BOOL: hash = "Boolean.hashCode(" + name + ")"; break;
                case INT8: case INT16: case UINT16: case INT32: hash = name; break;
                case UINT32: case INT64: hash = "Long.hashCode(" + name + ")"; break;
                case FLOAT64: hash = "Double.hashCode(" + name + ")"; break;
                case BYTES: hash = field.zeroCopy ? "java.util.Objects.hashCode(" + name + ")" : "java.util.Arrays.hashCode(" + name + ")"; break;
                default: hash = "java.util.Objects.hashCode(" + name + ")";
            }
            b.line("_hash = 31 * _hash + %s;", hash);
        }
        b.line("return _hash;");
        b.close().blank();
    }

    private void generateToString(CodeBuffer b) {
        b.line("@Override");
        b.open("public String toString()");
        StringBuilder expression = new StringBuilder("\"" + struct.name + "(\"");
        boolean first = true;
        for (FieldSpec field : struct.fields) {
            String name = field.camelName();
            String value;
            if (field.type.kind == Kind.BYTES) {
                value = field.zeroCopy ? "(" + name + " == null ? \"null\" : " + name + ".remaining() + \" bytes\")"
                        : "(" + name + " == null ? \"null\" : " + name + ".length + \" bytes\")";
            } else if (field.type.kind == Kind.STRING) {
                value = "(" + name + " == null ? \"null\" : \"'\" + " + name + " + \"'\")";
            } else {
                value = name;
            }
            expression.append(" + \"").append(first ? "" : ", ").append(name).append("=\" + ").append(value);
            first = false;
        }
        expression.append(" + \")\"");
        b.line("return %s;", expression);
        b.close();
    }

    Map<String, StructSpec> structsByName() {
        return structsByName;
    }
}
