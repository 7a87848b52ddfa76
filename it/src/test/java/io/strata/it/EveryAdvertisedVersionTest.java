package io.strata.it;

import io.strata.protocol.ApiMessage;
import io.strata.protocol.ApiVersionsTable;
import io.strata.protocol.Frames;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsRequestData;
import io.strata.protocol.message.CreateTopicsRequestData;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.MetadataRequestData;
import io.strata.protocol.message.ProduceRequestData;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.RecordBatchBuilder;
import io.strata.protocol.records.TimestampType;
import io.strata.server.StrataServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Every API the broker advertises, at every advertised version, gets a response that parses
 * at that version (requests carry real content where it matters: topics, partitions,
 * records). Catches handlers that set a field the client's version cannot carry.
 */
class EveryAdvertisedVersionTest {
    @TempDir
    Path dataDir;

    private StrataTestServer server;
    private int topicCounter;

    @BeforeEach
    void start() throws Exception {
        server = new StrataTestServer(dataDir);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void everyAdvertisedVersionAnswers() throws Exception {
        ApiVersionsTable table = StrataServer.apiVersions();
        int checked = 0;
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
            socket.setSoTimeout(15_000);
            // A topic with data for the read APIs.
            exchange(socket, ApiMessageType.CREATE_TOPICS, (short) 7, createTopics("data"), 1);
            exchange(socket, ApiMessageType.PRODUCE, (short) 9, produce("data"), 2);
            int correlationId = 10;
            for (Map.Entry<ApiMessageType, ApiVersionsTable.Range> entry : table.ranges().entrySet()) {
                ApiMessageType api = entry.getKey();
                for (short version = entry.getValue().min(); version <= entry.getValue().max(); version++) {
                    if (!api.hasSchemaVersion(version)) {
                        continue; // advertised for compatibility only (Produce v0-v2); checked elsewhere
                    }
                    ApiMessage request = request(api, version);
                    ApiMessage response = exchange(socket, api, version, request, correlationId++);
                    assertThat(response).as("%s v%d", api.apiName, version).isNotNull();
                    checked++;
                }
            }
        }
        assertThat(checked).isGreaterThan(40);
    }

    private ApiMessage request(ApiMessageType api, short version) {
        switch (api) {
            case API_VERSIONS:
                return new ApiVersionsRequestData().setClientSoftwareName("strata-test").setClientSoftwareVersion("1.0");
            case METADATA:
                return new MetadataRequestData().setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName("data")))
                    .setAllowAutoTopicCreation(true);
            case CREATE_TOPICS:
                return createTopics("created-" + (topicCounter++));
            case PRODUCE:
                return produce("data");
            case FETCH: {
                var image = server.server().controller().image();
                FetchRequestData fetch = new FetchRequestData().setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20)
                    .setSessionEpoch(-1).setReplicaId(-1);
                fetch.topics().add(new FetchRequestData.FetchTopic().setTopic("data").setTopicId(image.topic("data").id())
                    .setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0)
                        .setPartitionMaxBytes(1 << 20).setCurrentLeaderEpoch(-1).setLastFetchedEpoch(-1).setLogStartOffset(-1))));
                return fetch;
            }
            case LIST_OFFSETS: {
                ListOffsetsRequestData listOffsets = new ListOffsetsRequestData().setReplicaId(-1);
                listOffsets.topics().add(new ListOffsetsRequestData.ListOffsetsTopic().setName("data").setPartitions(List.of(
                    new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1L).setCurrentLeaderEpoch(-1))));
                return listOffsets;
            }
            default:
                return api.newRequest();
        }
    }

    private static CreateTopicsRequestData createTopics(String name) {
        return new CreateTopicsRequestData().setTimeoutMs(10_000).setTopics(List.of(
            new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(1).setReplicationFactor((short) 1)));
    }

    private static ProduceRequestData produce(String topic) {
        ProduceRequestData produce = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(10_000);
        produce.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(
                new RecordBatchBuilder(CompressionType.NONE, TimestampType.CREATE_TIME, 0)
                    .append(System.currentTimeMillis(), "k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8))
                    .build()))));
        return produce;
    }

    private static ApiMessage exchange(Socket socket, ApiMessageType api, short version, ApiMessage request, int correlationId)
            throws IOException {
        ByteBuffer frame = Frames.encodeRequest(api, version, correlationId, "every-version", request);
        byte[] bytes = new byte[frame.remaining()];
        frame.get(bytes);
        socket.getOutputStream().write(bytes);
        DataInputStream in = new DataInputStream(socket.getInputStream());
        int size;
        try {
            size = in.readInt();
        } catch (IOException e) {
            fail("the server closed the connection on " + api.apiName + " v" + version + ": " + e);
            return null;
        }
        byte[] response = new byte[size];
        in.readFully(response);
        return Frames.parseResponse(api, version, ByteBuffer.wrap(response), correlationId);
    }
}
