package io.strata.protocol.message;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Builds random message values from the JSON schemas, independent of either implementation:
 * a value tree (struct = ordered map of field name to value) that tests then load into
 * kafka-clients' message classes and into ours.
 */
final class SchemaRandomizer {
    /** A struct value: the struct's type name and its field values (absent fields keep defaults). */
    record StructValue(String structName, Map<String, Object> fields, List<int[]> unknownTagSizes) {
    }

    /** A uuid value as two longs, so that each side builds its own type. */
    record UuidValue(long most, long least) {
    }

    /** A records field value: opaque bytes. */
    record RecordsValue(byte[] bytes) {
    }

    record Schema(String fileName, JsonNode json, String className, short lowest, short highest, String flexible,
                  Map<String, JsonNode> commonStructs) {
        boolean isFlexible(short version) {
            return contains(flexible, version);
        }
    }

    static Map<String, Schema> loadSchemas() throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        mapper.enable(JsonParser.Feature.ALLOW_COMMENTS);
        URL anchor = SchemaRandomizer.class.getClassLoader().getResource("common/message/ApiVersionsRequest.json");
        JarURLConnection connection = (JarURLConnection) anchor.openConnection();
        connection.setUseCaches(false);
        Map<String, Schema> schemas = new TreeMap<>();
        try (JarFile jar = connection.getJarFile()) {
            Enumeration<JarEntry> entries = jar.entries();
            while (entries.hasMoreElements()) {
                JarEntry entry = entries.nextElement();
                String name = entry.getName();
                if (!name.startsWith("common/message/") || !name.endsWith(".json")) {
                    continue;
                }
                JsonNode json;
                try (InputStream in = jar.getInputStream(entry)) {
                    json = mapper.readTree(in);
                }
                String valid = json.get("validVersions").asText();
                if (valid.equals("none")) {
                    continue;
                }
                String type = json.get("type").asText();
                String specName = json.get("name").asText();
                String className = type.equals("request") || type.equals("response") || type.equals("header") ? specName + "Data" : specName;
                short[] range = range(valid);
                Map<String, JsonNode> common = new HashMap<>();
                if (json.has("commonStructs")) {
                    for (JsonNode struct : json.get("commonStructs")) {
                        common.put(struct.get("name").asText(), struct);
                    }
                }
                String flexible = json.has("flexibleVersions") ? json.get("flexibleVersions").asText() : "none";
                schemas.put(className, new Schema(name, json, className, range[0], range[1], flexible, common));
            }
        }
        return schemas;
    }

    static short[] range(String versions) {
        if (versions.equals("none")) {
            return new short[] {1, 0};
        }
        if (versions.endsWith("+")) {
            return new short[] {Short.parseShort(versions.substring(0, versions.length() - 1)), Short.MAX_VALUE};
        }
        int dash = versions.indexOf('-');
        if (dash > 0) {
            return new short[] {Short.parseShort(versions.substring(0, dash)), Short.parseShort(versions.substring(dash + 1))};
        }
        short single = Short.parseShort(versions);
        return new short[] {single, single};
    }

    static boolean contains(String versions, short version) {
        if (versions == null) {
            return false;
        }
        short[] r = range(versions);
        return version >= r[0] && version <= r[1];
    }

    private final Schema schema;
    private final Random random;

    SchemaRandomizer(Schema schema, Random random) {
        this.schema = schema;
        this.random = random;
    }

    StructValue randomMessage(short version, boolean withUnknownTags) {
        return randomStruct(schema.className(), schema.json().get("fields"), version, withUnknownTags, 0);
    }

    private StructValue randomStruct(String structName, JsonNode fields, short version, boolean withUnknownTags, int depth) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (JsonNode field : fields) {
            String name = field.get("name").asText();
            boolean present = contains(text(field, "versions"), version);
            if (field.has("tag")) {
                present = present && contains(text(field, "taggedVersions"), version);
                // Leave tagged fields at their defaults half of the time: defaults are not written.
                if (random.nextBoolean()) {
                    continue;
                }
            }
            if (!present) {
                continue;
            }
            boolean flexible = schema.isFlexible(version) && !"none".equals(text(field, "flexibleVersions"));
            values.put(name, randomValue(field, field.get("type").asText(), version, flexible, depth));
        }
        List<int[]> unknown = new ArrayList<>();
        if (withUnknownTags && schema.isFlexible(version) && random.nextInt(4) == 0) {
            int count = 1 + random.nextInt(2);
            for (int i = 0; i < count; i++) {
                unknown.add(new int[] {1000 + i * 7, random.nextInt(5)});
            }
        }
        return new StructValue(structName, values, unknown);
    }

    private Object randomValue(JsonNode field, String type, short version, boolean flexible, int depth) {
        boolean nullable = contains(text(field, "nullableVersions"), version);
        if (type.startsWith("[]")) {
            if (nullable && random.nextInt(5) == 0) {
                return null;
            }
            String elementType = type.substring(2);
            int count = depth > 3 ? 0 : random.nextInt(4);
            List<Object> list = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                list.add(randomElement(field, elementType, version, depth + 1));
            }
            return list;
        }
        switch (type) {
            case "bool": return random.nextBoolean();
            case "int8": return (byte) randomInteger(Byte.MIN_VALUE, Byte.MAX_VALUE);
            case "int16": return (short) randomInteger(Short.MIN_VALUE, Short.MAX_VALUE);
            case "uint16": return (int) randomInteger(0, 65535);
            case "int32": return (int) randomInteger(Integer.MIN_VALUE, Integer.MAX_VALUE);
            case "uint32": return randomInteger(0, 4294967295L);
            case "int64": return randomInteger(Long.MIN_VALUE, Long.MAX_VALUE);
            case "float64": return random.nextInt(4) == 0 ? 0.0 : random.nextGaussian() * 1e6;
            case "string":
                return nullable && random.nextInt(5) == 0 ? null : randomString();
            case "bytes":
                return nullable && random.nextInt(5) == 0 ? null : randomBytes();
            case "records":
                return nullable && random.nextInt(5) == 0 ? null : new RecordsValue(randomBytes());
            case "uuid":
                return random.nextInt(4) == 0 ? new UuidValue(0, 0) : new UuidValue(random.nextLong(), random.nextLong());
            default: {
                if (nullable && random.nextInt(4) == 0) {
                    return null;
                }
                return randomStruct(type, structFields(field, type), version, true, depth + 1);
            }
        }
    }

    private Object randomElement(JsonNode field, String elementType, short version, int depth) {
        switch (elementType) {
            case "bool": case "int8": case "int16": case "uint16": case "int32": case "uint32": case "int64":
            case "float64": case "uuid":
                return randomValue(field, elementType, version, false, depth);
            case "string":
                return randomString();
            default:
                return randomStruct(elementType, structFields(field, elementType), version, true, depth);
        }
    }

    private JsonNode structFields(JsonNode field, String type) {
        if (field.has("fields")) {
            return field.get("fields");
        }
        JsonNode common = schema.commonStructs().get(type);
        if (common == null) {
            throw new IllegalStateException("no struct " + type + " in " + schema.fileName());
        }
        return common.get("fields");
    }

    private long randomInteger(long min, long max) {
        switch (random.nextInt(6)) {
            case 0: return min;
            case 1: return max;
            case 2: return 0;
            case 3: return -1 >= min ? -1 : 1;
            default: {
                long span = max - min;
                if (span <= 0 || span == Long.MAX_VALUE) {
                    return random.nextLong();
                }
                return min + (long) (random.nextDouble() * span);
            }
        }
    }

    private String randomString() {
        int length = random.nextInt(12);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < length; i++) {
            switch (random.nextInt(8)) {
                case 0: text.appendCodePoint(0x80 + random.nextInt(0x780)); break;      // 2-byte UTF-8
                case 1: text.appendCodePoint(0x800 + random.nextInt(0xD000 - 0x800)); break; // 3-byte
                case 2: text.appendCodePoint(0x10000 + random.nextInt(0x1000)); break;   // 4-byte, surrogate pair
                default: text.append((char) ('a' + random.nextInt(26)));
            }
        }
        return text.toString();
    }

    private byte[] randomBytes() {
        byte[] bytes = new byte[random.nextInt(24)];
        random.nextBytes(bytes);
        return bytes;
    }

    static String text(JsonNode node, String key) {
        JsonNode value = node.get(key);
        return value == null ? null : value.asText();
    }
}
