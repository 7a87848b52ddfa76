package io.strata.protocol.message;

import io.strata.protocol.ByteBufferWriter;
import io.strata.protocol.Message;
import io.strata.protocol.RawTaggedField;
import io.strata.protocol.Reader;
import io.strata.protocol.records.MemoryRecords;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * For every message schema in kafka-clients and every version it defines: random instances
 * are built into kafka-clients' own message classes and into ours from the same random value
 * tree; both must serialise to identical bytes, and each side must parse the other's bytes
 * and write them back unchanged (unknown tagged fields included).
 */
class MessageRoundTripTest {
    private static final int INSTANCES_PER_VERSION = 25;
    private static final String KAFKA_PACKAGE = "org.apache.kafka.common.message.";
    private static final String STRATA_PACKAGE = "io.strata.protocol.message.";

    @TestFactory
    List<DynamicNode> everyMessageEveryVersionIsByteIdenticalToKafkaClients() throws Exception {
        List<DynamicNode> containers = new ArrayList<>();
        for (SchemaRandomizer.Schema schema : SchemaRandomizer.loadSchemas().values()) {
            List<DynamicNode> versions = new ArrayList<>();
            for (short version = schema.lowest(); version <= schema.highest(); version++) {
                short v = version;
                versions.add(DynamicTest.dynamicTest("v" + v, () -> roundTrip(schema, v)));
            }
            containers.add(DynamicContainer.dynamicContainer(schema.className(), versions));
        }
        return containers;
    }

    @Test
    void everySchemaHasAGeneratedClass() throws Exception {
        Map<String, SchemaRandomizer.Schema> schemas = SchemaRandomizer.loadSchemas();
        assertThat(schemas).hasSizeGreaterThan(180);
        for (String name : schemas.keySet()) {
            assertThat(Class.forName(STRATA_PACKAGE + name)).isNotNull();
        }
    }

    private static void roundTrip(SchemaRandomizer.Schema schema, short version) throws Exception {
        long seed = schema.className().hashCode() * 31L + version;
        Random random = new Random(seed);
        ReflectiveLoader kafkaLoader = new ReflectiveLoader(KAFKA_PACKAGE + schema.className(),
            u -> new Uuid(u.most(), u.least()),
            bytes -> org.apache.kafka.common.record.internal.MemoryRecords.readableRecords(ByteBuffer.wrap(bytes)),
            (message, tag, data) -> ((org.apache.kafka.common.protocol.Message) message).unknownTaggedFields()
                .add(new org.apache.kafka.common.protocol.types.RawTaggedField(tag, data)));
        ReflectiveLoader strataLoader = new ReflectiveLoader(STRATA_PACKAGE + schema.className(),
            u -> new UUID(u.most(), u.least()),
            bytes -> MemoryRecords.readableRecords(ByteBuffer.wrap(bytes)),
            (message, tag, data) -> ((Message) message).unknownTaggedFields().add(new RawTaggedField(tag, data)));
        Class<?> strataClass = Class.forName(STRATA_PACKAGE + schema.className());
        Class<?> kafkaClass = Class.forName(KAFKA_PACKAGE + schema.className());

        for (int i = 0; i < INSTANCES_PER_VERSION; i++) {
            SchemaRandomizer.StructValue value = new SchemaRandomizer(schema, random).randomMessage(version, i % 2 == 1);
            org.apache.kafka.common.protocol.Message kafka = (org.apache.kafka.common.protocol.Message) kafkaLoader.load(value);
            Message strata = (Message) strataLoader.load(value);
            String context = schema.className() + " v" + version + " instance " + i + " (seed " + seed + "): " + value;

            byte[] kafkaBytes = kafkaWrite(kafka, version);
            byte[] strataBytes = strataWrite(strata, version);
            assertThat(HexFormat.of().formatHex(strataBytes)).as("Strata vs kafka-clients bytes for %s", context)
                .isEqualTo(HexFormat.of().formatHex(kafkaBytes));

            Message parsedByStrata = (Message) strataClass.getConstructor(Reader.class, short.class)
                .newInstance(new Reader(ByteBuffer.wrap(kafkaBytes)), version);
            assertThat(strataWrite(parsedByStrata, version)).as("Strata re-encoding of Kafka's bytes for %s", context)
                .isEqualTo(kafkaBytes);
            assertThat(parsedByStrata).as("Strata parse equals the original for %s", context).isEqualTo(strata);
            assertThat(parsedByStrata.hashCode()).isEqualTo(strata.hashCode());

            org.apache.kafka.common.protocol.Message parsedByKafka = (org.apache.kafka.common.protocol.Message) kafkaClass
                .getConstructor(org.apache.kafka.common.protocol.Readable.class, short.class)
                .newInstance(new ByteBufferAccessor(ByteBuffer.wrap(strataBytes)), version);
            assertThat(kafkaWrite(parsedByKafka, version)).as("Kafka re-encoding of Strata's bytes for %s", context)
                .isEqualTo(strataBytes);
        }
    }

    static byte[] kafkaWrite(org.apache.kafka.common.protocol.Message message, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = message.size(cache, version);
        ByteBuffer buffer = ByteBuffer.allocate(size);
        message.write(new ByteBufferAccessor(buffer), cache, version);
        assertThat(buffer.remaining()).isZero();
        return buffer.array();
    }

    static byte[] strataWrite(Message message, short version) {
        int size = message.size(version);
        ByteBuffer buffer = ByteBuffer.allocate(size);
        message.write(new ByteBufferWriter(buffer), version);
        assertThat(buffer.remaining()).as("size() matches bytes written").isZero();
        return buffer.array();
    }
}
