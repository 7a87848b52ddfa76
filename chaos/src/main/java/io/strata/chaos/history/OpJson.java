package io.strata.chaos.history;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The JSON form of an {@link Op}: one object on one line, fields in this order:
 *
 * <pre>
 * {"process":0,"type":"ok","f":"send","value":{"partition":"p-0","value":17,"offset":3},"wallMs":1764640000000,"monoNs":81234}
 * {"process":1,"type":"ok","f":"poll","value":{"readCommitted":true,"messages":[["p-0",3,17]]},...}
 * {"process":2,"type":"ok","f":"txn","value":{"readCommitted":true,"ops":[["send","t-0",5,21],["poll","p-0",3,17]]},...}
 * {"process":1,"type":"ok","f":"assign","value":{"group":"g","generation":4,"partitions":["p-0"]},...}
 * {"process":9,"type":"ok","f":"drain","value":{"readCommitted":true,"messages":[["p-0",3,17]],"endOffsets":{"p-0":4}},...}
 * </pre>
 *
 * A message is {@code [partition, offset, value]}; a micro-op is {@code [kind, partition, offset, value]}.
 *
 * <p>Thread-safe (Jackson's factory and mapper are).
 */
final class OpJson {
    private static final JsonFactory FACTORY = new JsonFactory();
    private static final ObjectMapper MAPPER = new ObjectMapper(FACTORY);

    private OpJson() {
    }

    static String encode(Op op) {
        StringWriter out = new StringWriter(128);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.writeStartObject();
            g.writeNumberField("process", op.process());
            g.writeStringField("type", op.type().jsonName());
            g.writeStringField("f", op.function().jsonName());
            g.writeFieldName("value");
            writeValue(g, op.value());
            g.writeNumberField("wallMs", op.wallMs());
            g.writeNumberField("monoNs", op.monotonicNs());
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    private static void writeValue(JsonGenerator g, OpValue value) throws IOException {
        g.writeStartObject();
        if (value instanceof SendValue s) {
            g.writeStringField("partition", s.partition());
            g.writeNumberField("value", s.value());
            g.writeNumberField("offset", s.offset());
        } else if (value instanceof PollValue p) {
            g.writeBooleanField("readCommitted", p.readCommitted());
            writeMessages(g, p.messages());
        } else if (value instanceof TxnValue t) {
            g.writeBooleanField("readCommitted", t.readCommitted());
            g.writeArrayFieldStart("ops");
            for (MicroOp m : t.ops()) {
                g.writeStartArray();
                g.writeString(m.kind().name().toLowerCase(Locale.ROOT));
                g.writeString(m.partition());
                g.writeNumber(m.offset());
                g.writeNumber(m.value());
                g.writeEndArray();
            }
            g.writeEndArray();
        } else if (value instanceof AssignValue a) {
            g.writeStringField("group", a.group());
            g.writeNumberField("generation", a.generation());
            g.writeArrayFieldStart("partitions");
            for (String p : a.partitions()) {
                g.writeString(p);
            }
            g.writeEndArray();
        } else if (value instanceof DrainValue d) {
            g.writeBooleanField("readCommitted", d.readCommitted());
            writeMessages(g, d.messages());
            g.writeObjectFieldStart("endOffsets");
            for (Map.Entry<String, Long> e : new java.util.TreeMap<>(d.endOffsets()).entrySet()) {
                g.writeNumberField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
        } else {
            throw new IllegalArgumentException("unknown value class: " + value.getClass());
        }
        g.writeEndObject();
    }

    private static void writeMessages(JsonGenerator g, List<Message> messages) throws IOException {
        g.writeArrayFieldStart("messages");
        for (Message m : messages) {
            g.writeStartArray();
            g.writeString(m.partition());
            g.writeNumber(m.offset());
            g.writeNumber(m.value());
            g.writeEndArray();
        }
        g.writeEndArray();
    }

    /**
     * Decodes one line.
     *
     * @param strings interns partition names (a history repeats a few names a million times)
     * @throws IllegalArgumentException naming what is wrong with the line
     */
    static Op decode(String line, Map<String, String> strings) {
        JsonNode root;
        try {
            root = MAPPER.readTree(line);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("not a JSON object");
        }
        Op.Type type = enumField(root, "type", Op.Type.class);
        Op.Function function = enumField(root, "f", Op.Function.class);
        JsonNode value = required(root, "value");
        OpValue decoded = switch (function) {
            case SEND -> new SendValue(text(value, "partition", strings), longField(value, "value"), longField(value, "offset"));
            case POLL -> new PollValue(bool(value, "readCommitted"), messages(value, strings));
            case TXN -> new TxnValue(bool(value, "readCommitted"), microOps(value, strings));
            case ASSIGN -> new AssignValue(text(value, "group", strings), (int) longField(value, "generation"),
                    partitions(value, strings));
            case DRAIN -> new DrainValue(bool(value, "readCommitted"), messages(value, strings), endOffsets(value, strings));
        };
        return new Op((int) longField(root, "process"), type, function, decoded, longField(root, "wallMs"),
                longField(root, "monoNs"));
    }

    private static JsonNode required(JsonNode node, String field) {
        JsonNode child = node.get(field);
        if (child == null || child.isNull()) {
            throw new IllegalArgumentException("missing field: " + field);
        }
        return child;
    }

    private static long longField(JsonNode node, String field) {
        JsonNode child = required(node, field);
        if (!child.isIntegralNumber()) {
            throw new IllegalArgumentException("field " + field + " is not an integer: " + child);
        }
        return child.asLong();
    }

    private static boolean bool(JsonNode node, String field) {
        JsonNode child = required(node, field);
        if (!child.isBoolean()) {
            throw new IllegalArgumentException("field " + field + " is not a boolean: " + child);
        }
        return child.asBoolean();
    }

    private static String text(JsonNode node, String field, Map<String, String> strings) {
        return intern(required(node, field), field, strings);
    }

    private static String intern(JsonNode node, String what, Map<String, String> strings) {
        if (!node.isTextual()) {
            throw new IllegalArgumentException(what + " is not a string: " + node);
        }
        return strings.computeIfAbsent(node.asText(), s -> s);
    }

    private static <E extends Enum<E>> E enumField(JsonNode node, String field, Class<E> type) {
        String name = required(node, field).asText();
        try {
            return Enum.valueOf(type, name.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown " + field + ": " + name, e);
        }
    }

    private static JsonNode array(JsonNode node, String field) {
        JsonNode child = required(node, field);
        if (!child.isArray()) {
            throw new IllegalArgumentException("field " + field + " is not an array");
        }
        return child;
    }

    private static long element(JsonNode tuple, int index) {
        JsonNode child = tuple.get(index);
        if (child == null || !child.isIntegralNumber()) {
            throw new IllegalArgumentException("element " + index + " of " + tuple + " is not an integer");
        }
        return child.asLong();
    }

    private static List<Message> messages(JsonNode value, Map<String, String> strings) {
        List<Message> result = new ArrayList<>();
        for (JsonNode m : array(value, "messages")) {
            if (!m.isArray() || m.size() != 3) {
                throw new IllegalArgumentException("a message is [partition, offset, value]: " + m);
            }
            result.add(new Message(intern(m.get(0), "partition", strings), element(m, 1), element(m, 2)));
        }
        return result;
    }

    private static List<MicroOp> microOps(JsonNode value, Map<String, String> strings) {
        List<MicroOp> result = new ArrayList<>();
        for (JsonNode m : array(value, "ops")) {
            if (!m.isArray() || m.size() != 4) {
                throw new IllegalArgumentException("a micro-op is [kind, partition, offset, value]: " + m);
            }
            MicroOp.Kind kind;
            try {
                kind = MicroOp.Kind.valueOf(m.get(0).asText().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown micro-op kind: " + m.get(0), e);
            }
            result.add(new MicroOp(kind, intern(m.get(1), "partition", strings), element(m, 2), element(m, 3)));
        }
        return result;
    }

    private static List<String> partitions(JsonNode value, Map<String, String> strings) {
        List<String> result = new ArrayList<>();
        for (JsonNode p : array(value, "partitions")) {
            result.add(intern(p, "partition", strings));
        }
        return result;
    }

    private static Map<String, Long> endOffsets(JsonNode value, Map<String, String> strings) {
        JsonNode node = required(value, "endOffsets");
        if (!node.isObject()) {
            throw new IllegalArgumentException("endOffsets is not an object");
        }
        Map<String, Long> result = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isIntegralNumber()) {
                throw new IllegalArgumentException("end offset of " + e.getKey() + " is not an integer");
            }
            result.put(strings.computeIfAbsent(e.getKey(), s -> s), e.getValue().asLong());
        }
        return result;
    }

    /** @return a fresh interning table for one reader */
    static Map<String, String> newStringTable() {
        return new HashMap<>();
    }
}
