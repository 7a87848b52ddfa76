package io.strata.tools;

import io.strata.protocol.ApiMessage;
import io.strata.protocol.ApiVersionsTable;
import io.strata.protocol.Frames;
import io.strata.protocol.RequestHeader;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsResponseData;
import io.strata.protocol.message.MetadataRequestData;
import io.strata.protocol.message.MetadataResponseData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The CLI against a broker that knows only ApiVersions v0-3 and Metadata, like a broker whose
 * admin handlers have not landed: commands that need a missing API say so, exit 1 and send
 * nothing that could change the cluster, and ApiVersions falls back from the CLI's version
 * to the broker's.
 */
class OldBrokerTest {
    private static final ApiVersionsTable ADVERTISED = ApiVersionsTable.builder()
        .add(ApiMessageType.API_VERSIONS, 0, 3)
        .add(ApiMessageType.METADATA, 0, 12)
        .add(ApiMessageType.CREATE_TOPICS, 2, 7)
        .build();

    private ServerSocket server;
    private Thread acceptor;
    private final List<ApiMessageType> received = new CopyOnWriteArrayList<>();

    @BeforeEach
    void startFakeBroker() throws IOException {
        server = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
        acceptor = new Thread(this::acceptConnections, "old-broker");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void stopFakeBroker() throws Exception {
        server.close();
        acceptor.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(acceptor.isAlive()).isFalse();
    }

    private void acceptConnections() {
        while (!server.isClosed()) {
            try (Socket socket = server.accept()) {
                serve(socket);
            } catch (IOException e) {
                // Closed by the test, or the client hung up: next connection.
            }
        }
    }

    /** Answers requests one at a time until the client hangs up. */
    private void serve(Socket socket) throws IOException {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        OutputStream out = socket.getOutputStream();
        while (true) {
            byte[] frame;
            try {
                frame = new byte[in.readInt()];
            } catch (EOFException e) {
                return;
            }
            in.readFully(frame);
            ByteBuffer buffer = ByteBuffer.wrap(frame);
            RequestHeader header = Frames.parseRequestHeader(buffer);
            received.add(header.api());
            ByteBuffer response = switch (header.api()) {
                case API_VERSIONS -> apiVersions(header);
                case METADATA -> Frames.encodeResponse(header, metadata((MetadataRequestData) Frames.parseRequestBody(header, buffer)),
                    header.apiVersion());
                default -> throw new IOException("the old broker would close the connection on " + header.api().apiName);
            };
            out.write(response.array(), 0, response.remaining());
            out.flush();
        }
    }

    private static ByteBuffer apiVersions(RequestHeader header) {
        if (!ADVERTISED.isAdvertised(ApiMessageType.API_VERSIONS, header.apiVersion())) {
            return Frames.encodeResponse(header, ADVERTISED.unsupportedApiVersionsResponse(), (short) 0);
        }
        ApiVersionsResponseData response = new ApiVersionsResponseData();
        ADVERTISED.addTo(response);
        return Frames.encodeResponse(header, response, header.apiVersion());
    }

    private ApiMessage metadata(MetadataRequestData request) {
        MetadataResponseData response = new MetadataResponseData().setClusterId("old-cluster").setControllerId(1);
        response.brokers().add(new MetadataResponseData.MetadataResponseBroker().setNodeId(1).setHost("127.0.0.1").setPort(server.getLocalPort()));
        List<String> names = new ArrayList<>();
        if (request.topics() == null) {
            names.add("legacy");
        } else {
            request.topics().forEach(topic -> names.add(topic.name()));
        }
        for (String name : names) {
            MetadataResponseData.MetadataResponseTopic topic = new MetadataResponseData.MetadataResponseTopic()
                .setName(name).setTopicId(Uuids.randomTopicId());
            topic.partitions().add(new MetadataResponseData.MetadataResponsePartition()
                .setPartitionIndex(0).setLeaderId(1).setLeaderEpoch(0)
                .setReplicaNodes(new ArrayList<>(List.of(1))).setIsrNodes(new ArrayList<>(List.of(1))));
            response.topics().add(topic);
        }
        return response;
    }

    private CliRunner.Result topics(String... args) {
        List<String> full = new ArrayList<>(List.of("topics"));
        full.addAll(List.of(args));
        full.addAll(List.of("--bootstrap-server", "127.0.0.1:" + server.getLocalPort()));
        return CliRunner.run(full.toArray(String[]::new));
    }

    private void assertOnlyReadRequestsReceived() {
        assertThat(received).isNotEmpty().allMatch(api -> api == ApiMessageType.API_VERSIONS || api == ApiMessageType.METADATA);
    }

    @Test
    void deleteSaysTheBrokerDoesNotSupportDeleteTopics() {
        CliRunner.Result result = topics("delete", "legacy");

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.out()).isEmpty();
        assertThat(result.err()).isEqualTo("strata: the broker does not support DeleteTopics\n");
        assertOnlyReadRequestsReceived();
    }

    @Test
    void alterChecksEveryApiBeforeChangingAnything() {
        CliRunner.Result partitions = topics("alter", "legacy", "--partitions", "3");
        CliRunner.Result configs = topics("alter", "legacy", "--config", "retention.ms=1");

        assertThat(partitions.exitCode()).isEqualTo(1);
        assertThat(partitions.err()).isEqualTo("strata: the broker does not support CreatePartitions\n");
        assertThat(configs.exitCode()).isEqualTo(1);
        assertThat(configs.err()).isEqualTo("strata: the broker does not support IncrementalAlterConfigs\n");
        assertOnlyReadRequestsReceived();
    }

    @Test
    void describeShowsTheLayoutAndSaysConfigsAreUnavailable() {
        CliRunner.Result result = topics("describe", "legacy");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.lines()).hasSize(2);
        assertThat(result.lines().get(0)).startsWith("Topic: legacy\tTopicId: ").endsWith("\tPartitionCount: 1\tReplicationFactor: 1");
        assertThat(result.err()).isEqualTo("strata: the broker does not support DescribeConfigs; configs are not shown\n");
    }

    @Test
    void apiVersionsFallsBackToTheBrokersHighestVersion() {
        assertThat(topics("list").lines()).containsExactly("legacy");
        // The CLI asked at its own highest version first, got UNSUPPORTED_VERSION with the ranges, and asked again.
        assertThat(received.subList(0, 3)).containsExactly(ApiMessageType.API_VERSIONS, ApiMessageType.API_VERSIONS, ApiMessageType.METADATA);
    }
}
