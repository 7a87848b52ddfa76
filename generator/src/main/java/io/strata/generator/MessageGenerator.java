package io.strata.generator;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.strata.generator.Spec.FieldSpec;
import io.strata.generator.Spec.StructSpec;

import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Build-time generator: reads the Kafka protocol's JSON message schemas (shipped as
 * {@code common/message/*.json} resources inside the kafka-clients artifact, which is on this
 * program's classpath during the build only) and writes one Java class per message plus the
 * {@code ApiMessageType} table.
 *
 * <p>Usage: {@code MessageGenerator <output source dir> <java package>}.
 */
public final class MessageGenerator {
    static final String SCHEMA_DIRECTORY = "common/message/";
    private static final String ANCHOR = SCHEMA_DIRECTORY + "ApiVersionsRequest.json";

    private MessageGenerator() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2 && args.length != 3) {
            throw new IllegalArgumentException("usage: MessageGenerator <output dir> <package> [schema dir]");
        }
        Path output = Path.of(args[0]);
        String packageName = args[1];
        boolean kafkaSchemas = args.length == 2;
        Path packageDirectory = output.resolve(packageName.replace('.', '/'));
        Files.createDirectories(packageDirectory);

        Map<String, JsonNode> schemas = kafkaSchemas ? loadSchemas() : loadSchemas(Path.of(args[2]));
        List<Spec> specs = new ArrayList<>();
        for (Map.Entry<String, JsonNode> entry : schemas.entrySet()) {
            Spec spec = new Spec(entry.getValue());
            if (spec.validVersions.isEmpty()) {
                continue; // removed from the protocol (e.g. the ZooKeeper-era controller APIs)
            }
            specs.add(spec);
            write(packageDirectory.resolve(spec.className() + ".java"), generateClass(spec, packageName));
        }
        if (kafkaSchemas) {
            write(packageDirectory.resolve("ApiMessageType.java"), ApiTableGenerator.generate(specs, packageName));
        } else if (specs.stream().anyMatch(spec -> spec.type.equals("metadata"))) {
            write(packageDirectory.resolve("MetadataRecordType.java"), RecordTableGenerator.generate(specs, packageName));
        }
        System.out.println("Generated " + specs.size() + " message classes into " + packageDirectory);
    }

    static Map<String, JsonNode> loadSchemas() throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        mapper.enable(JsonParser.Feature.ALLOW_COMMENTS);
        URL anchor = MessageGenerator.class.getClassLoader().getResource(ANCHOR);
        if (anchor == null) {
            throw new IllegalStateException("message schemas not on the classpath: " + ANCHOR);
        }
        Map<String, JsonNode> schemas = new TreeMap<>();
        if (anchor.getProtocol().equals("jar")) {
            JarURLConnection connection = (JarURLConnection) anchor.openConnection();
            connection.setUseCaches(false);
            try (JarFile jar = connection.getJarFile()) {
                Enumeration<JarEntry> entries = jar.entries();
                while (entries.hasMoreElements()) {
                    JarEntry entry = entries.nextElement();
                    String name = entry.getName();
                    if (name.startsWith(SCHEMA_DIRECTORY) && name.endsWith(".json") && name.indexOf('/', SCHEMA_DIRECTORY.length()) < 0) {
                        try (InputStream in = jar.getInputStream(entry)) {
                            schemas.put(name.substring(SCHEMA_DIRECTORY.length()), mapper.readTree(in));
                        }
                    }
                }
            }
        } else {
            Path directory;
            try {
                directory = Path.of(anchor.toURI()).getParent();
            } catch (java.net.URISyntaxException e) {
                throw new IOException(e);
            }
            try (var files = Files.list(directory)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    if (file.getFileName().toString().endsWith(".json")) {
                        schemas.put(file.getFileName().toString(), mapper.readTree(file.toFile()));
                    }
                }
            }
        }
        return schemas;
    }

    /** Loads every schema in a directory (our own schemas, such as the metadata records). */
    static Map<String, JsonNode> loadSchemas(Path directory) throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        mapper.enable(JsonParser.Feature.ALLOW_COMMENTS);
        Map<String, JsonNode> schemas = new TreeMap<>();
        try (var files = Files.list(directory)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                if (file.getFileName().toString().endsWith(".json")) {
                    schemas.put(file.getFileName().toString(), mapper.readTree(file.toFile()));
                }
            }
        }
        return schemas;
    }

    static String generateClass(Spec spec, String packageName) {
        Map<String, StructSpec> structs = new LinkedHashMap<>();
        List<StructGenerator> nested = new ArrayList<>();
        Map<String, Versions> contexts = new LinkedHashMap<>();
        collect(spec.root.fields, spec.validVersions, structs, contexts, spec.name);
        for (StructSpec common : spec.commonStructs) {
            if (structs.put(common.name, common) != null) {
                throw new IllegalArgumentException(spec.name + ": struct " + common.name + " defined twice");
            }
            contexts.put(common.name, common.versions.intersect(spec.validVersions));
            collect(common.fields, spec.validVersions, structs, contexts, spec.name);
        }
        for (StructSpec struct : structs.values()) {
            nested.add(new StructGenerator(spec, struct, contexts.get(struct.name), false, structs));
        }
        CodeBuffer b = new CodeBuffer();
        b.line("// Generated by io.strata.generator.MessageGenerator from the %s schema. Do not edit.", spec.name);
        b.line("package %s;", packageName);
        b.blank();
        b.line("@SuppressWarnings({\"unused\", \"PointlessBooleanExpression\", \"ConstantConditions\"})");
        new StructGenerator(spec, spec.root, spec.validVersions, true, structs).generate(b, nested);
        return b.toString();
    }

    private static void collect(List<FieldSpec> fields, Versions parentContext, Map<String, StructSpec> structs,
                                Map<String, Versions> contexts, String specName) {
        for (FieldSpec field : fields) {
            if (field.inlineStruct != null) {
                if (structs.put(field.inlineStruct.name, field.inlineStruct) != null) {
                    throw new IllegalArgumentException(specName + ": struct " + field.inlineStruct.name + " defined twice");
                }
                Versions context = field.versions.intersect(parentContext);
                contexts.put(field.inlineStruct.name, context);
                collect(field.inlineStruct.fields, context, structs, contexts, specName);
            }
        }
    }

    private static void write(Path file, String content) throws IOException {
        byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
        if (Files.exists(file) && java.util.Arrays.equals(Files.readAllBytes(file), bytes)) {
            return; // unchanged: keep the timestamp so incremental compilation stays incremental
        }
        Files.write(file, bytes);
    }
}
