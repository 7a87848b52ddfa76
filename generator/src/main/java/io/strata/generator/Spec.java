package io.strata.generator;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** The parsed form of one JSON message schema. */
final class Spec {
    final String name;
    final String type;
    final Integer apiKey;
    final Versions validVersions;
    final Versions flexibleVersions;
    final boolean latestVersionUnstable;
    final StructSpec root;
    final List<StructSpec> commonStructs;

    Spec(JsonNode json) {
        this.name = json.get("name").asText();
        this.type = json.get("type").asText();
        this.apiKey = json.has("apiKey") ? json.get("apiKey").asInt() : null;
        this.validVersions = Versions.parse(json.get("validVersions").asText(), Versions.NONE);
        this.flexibleVersions = Versions.parse(text(json, "flexibleVersions"), Versions.NONE);
        this.latestVersionUnstable = json.has("latestVersionUnstable") && json.get("latestVersionUnstable").asBoolean();
        this.root = new StructSpec(className(), validVersions, fields(json.get("fields"), validVersions));
        List<StructSpec> common = new ArrayList<>();
        JsonNode commonJson = json.get("commonStructs");
        if (commonJson != null) {
            for (JsonNode struct : commonJson) {
                Versions versions = Versions.parse(text(struct, "versions"), Versions.ALL);
                common.add(new StructSpec(struct.get("name").asText(), versions, fields(struct.get("fields"), versions)));
            }
        }
        this.commonStructs = Collections.unmodifiableList(common);
    }

    /** Requests, responses and headers get a "Data" suffix; other data types keep their name. */
    String className() {
        return type.equals("request") || type.equals("response") || type.equals("header") ? name + "Data" : name;
    }

    static List<FieldSpec> fields(JsonNode array, Versions parentVersions) {
        List<FieldSpec> fields = new ArrayList<>();
        if (array != null) {
            for (JsonNode field : array) {
                fields.add(new FieldSpec(field, parentVersions));
            }
        }
        return fields;
    }

    static String text(JsonNode node, String key) {
        JsonNode value = node.get(key);
        return value == null || value.isNull() ? null : value.asText();
    }

    /** A struct: the message itself, an inline struct, or a common struct. */
    static final class StructSpec {
        final String name;
        final Versions versions;
        final List<FieldSpec> fields;

        StructSpec(String name, Versions versions, List<FieldSpec> fields) {
            this.name = name;
            this.versions = versions;
            this.fields = fields;
        }

        boolean hasTaggedFields() {
            return fields.stream().anyMatch(FieldSpec::isTagged);
        }
    }

    /** One field of a struct. */
    static final class FieldSpec {
        final String name;
        final FieldType type;
        final Versions versions;
        final Versions nullableVersions;
        final Versions taggedVersions;
        final Integer tag;
        /** Overrides the message's flexible versions for this field (only "none" is used in practice). */
        final Versions flexibleVersionsOverride;
        final String defaultValue;
        final boolean ignorable;
        final boolean zeroCopy;
        /** For a struct or struct array field that defines its struct inline. */
        final StructSpec inlineStruct;

        FieldSpec(JsonNode json, Versions parentVersions) {
            this.name = json.get("name").asText();
            this.type = FieldType.parse(json.get("type").asText());
            this.versions = Versions.parse(text(json, "versions"), Versions.NONE);
            this.nullableVersions = Versions.parse(text(json, "nullableVersions"), Versions.NONE);
            this.taggedVersions = Versions.parse(text(json, "taggedVersions"), Versions.NONE);
            this.tag = json.has("tag") ? json.get("tag").asInt() : null;
            this.flexibleVersionsOverride = json.has("flexibleVersions") ? Versions.parse(text(json, "flexibleVersions"), Versions.NONE) : null;
            this.defaultValue = text(json, "default");
            this.ignorable = json.has("ignorable") && json.get("ignorable").asBoolean();
            this.zeroCopy = json.has("zeroCopy") && json.get("zeroCopy").asBoolean();
            if (json.has("fields")) {
                String structName = type.isArray() ? type.element.structName : type.structName;
                if (structName == null) {
                    throw new IllegalArgumentException("field " + name + " has sub-fields but is not a struct type");
                }
                this.inlineStruct = new StructSpec(structName, versions, fields(json.get("fields"), versions));
            } else {
                this.inlineStruct = null;
            }
            if (tag != null && taggedVersions.isEmpty()) {
                throw new IllegalArgumentException("field " + name + " has a tag but no tagged versions");
            }
            if (!nullableVersions.isEmpty() && !type.canBeNullable()) {
                throw new IllegalArgumentException("field " + name + " of type " + type + " cannot be nullable");
            }
        }

        boolean isTagged() {
            return tag != null;
        }

        /** The versions in which this field is written outside the tagged-field section. */
        Versions untaggedVersions() {
            if (!isTagged()) {
                return versions;
            }
            // A tagged field is only ever tagged in the schemas we read.
            return Versions.NONE;
        }

        String camelName() {
            return Character.toLowerCase(name.charAt(0)) + name.substring(1);
        }

        String setterName() {
            return "set" + Character.toUpperCase(name.charAt(0)) + name.substring(1);
        }

        boolean nullDefault() {
            return "null".equals(defaultValue);
        }
    }
}
