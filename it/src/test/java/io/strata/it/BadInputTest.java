package io.strata.it;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.Frames;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsRequestData;
import io.strata.protocol.message.ApiVersionsResponseData;
import io.strata.protocol.message.MetadataRequestData;
import io.strata.protocol.message.MetadataResponseData;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile and broken clients on raw sockets: each gets Kafka's behaviour (an error code, or
 * a closed connection), the server stays up, and a well-behaved client keeps working with its
 * data intact.
 */
class BadInputTest {
    @TempDir
    Path dataDir;

    private StrataTestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new StrataTestServer(dataDir);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
        socket.setSoTimeout(10_000);
        return socket;
    }

    /** True if the server closed the connection (EOF) before the read timeout. */
    private static boolean closedByServer(Socket socket) throws IOException {
        try {
            return socket.getInputStream().read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    private static ByteBuffer readFrame(Socket socket) throws IOException {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        int size = in.readInt();
        byte[] frame = new byte[size];
        in.readFully(frame);
        return ByteBuffer.wrap(frame);
    }

    private static void send(Socket socket, ByteBuffer frame) throws IOException {
        byte[] bytes = new byte[frame.remaining()];
        frame.get(bytes);
        OutputStream out = socket.getOutputStream();
        out.write(bytes);
        out.flush();
    }

    /** A produce-and-count round trip with the real Java client: the server is healthy and the data intact. */
    private void assertHealthy(String topic, int records) throws Exception {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrap());
        try (Admin admin = Admin.create(properties)) {
            if (!admin.listTopics().names().get().contains(topic)) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            }
        }
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(topic, "v" + i)).get();
            }
        }
        assertThat(server.server().replicaManager().partition(new io.strata.storage.TopicPartition(topic, 0)).log().logEndOffset())
            .isEqualTo(records);
    }

    @Test
    void aTwoGibibyteLengthPrefixClosesTheConnectionWithoutBuffering() throws Exception {
        try (Socket socket = connect()) {
            socket.getOutputStream().write(new byte[] {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2, 3});
            assertThat(closedByServer(socket)).isTrue();
        }
        try (Socket socket = connect()) {
            socket.getOutputStream().write(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xfe});
            assertThat(closedByServer(socket)).isTrue();
        }
        assertHealthy("after-huge", 10);
    }

    @Test
    void unknownApiKeysAndUnsupportedVersionsCloseTheConnection() throws Exception {
        try (Socket socket = connect()) {
            ByteBuffer frame = ByteBuffer.allocate(14).putInt(10).putShort((short) 999).putShort((short) 0).putInt(1).putShort((short) -1);
            send(socket, frame.flip());
            assertThat(closedByServer(socket)).isTrue();
        }
        try (Socket socket = connect()) {
            send(socket, Frames.encodeRequest(ApiMessageType.METADATA, (short) 13, 1, "bad", new MetadataRequestData()).putShort(6, (short) 99));
            assertThat(closedByServer(socket)).isTrue();
        }
        assertHealthy("after-unknown", 10);
    }

    @Test
    void aTooNewApiVersionsRequestIsAnsweredInVersionZeroWithOurRanges() throws Exception {
        try (Socket socket = connect()) {
            ByteBuffer frame = Frames.encodeRequest(ApiMessageType.API_VERSIONS, (short) 4, 77, "future-client",
                new ApiVersionsRequestData().setClientSoftwareName("x").setClientSoftwareVersion("1"));
            frame.putShort(6, (short) 42); // claim version 42
            send(socket, frame);
            ApiVersionsResponseData response = (ApiVersionsResponseData) Frames.parseResponse(ApiMessageType.API_VERSIONS, (short) 0,
                readFrame(socket), 77);
            assertThat(response.errorCode()).isEqualTo(ErrorCode.UNSUPPORTED_VERSION.code());
            assertThat(response.apiKeys()).anySatisfy(key -> {
                assertThat(key.apiKey()).isEqualTo(ApiMessageType.API_VERSIONS.apiKey);
                assertThat(key.maxVersion()).isEqualTo((short) 5);
            });
            // The connection stays usable: the client retries with a version we support.
            send(socket, Frames.encodeRequest(ApiMessageType.METADATA, (short) 12, 78, "future-client", new MetadataRequestData().setTopics(null)));
            MetadataResponseData metadata = (MetadataResponseData) Frames.parseResponse(ApiMessageType.METADATA, (short) 12, readFrame(socket), 78);
            assertThat(metadata.brokers()).hasSize(1);
        }
    }

    @Test
    void garbageBodiesAndTruncatedFramesDoNotHurtOthers() throws Exception {
        try (Socket socket = connect()) {
            ByteBuffer valid = Frames.encodeRequest(ApiMessageType.METADATA, (short) 12, 5, "garbage", new MetadataRequestData().setTopics(null));
            ByteBuffer garbage = ByteBuffer.allocate(valid.remaining() + 8);
            garbage.put(valid.duplicate());
            // Corrupt the body right after the header: a topics array claiming 2^31 entries.
            int headerEnd = 4 + 2 + 2 + 4 + 2 + "garbage".length() + 1;
            garbage.put(headerEnd, (byte) 0xff).put(headerEnd + 1, (byte) 0xff).put(headerEnd + 2, (byte) 0xff).put(headerEnd + 3, (byte) 0x7f);
            garbage.putInt(0, garbage.capacity() - 4);
            garbage.position(garbage.capacity());
            send(socket, garbage.flip());
            assertThat(closedByServer(socket)).isTrue();
        }
        List<Socket> truncated = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Socket socket = connect();
            socket.getOutputStream().write(new byte[] {0, 0, 1, 0, 0, 3, 0, 1}); // 256-byte frame, 4 bytes sent
            truncated.add(socket);
        }
        assertHealthy("after-garbage", 50);
        for (Socket socket : truncated) {
            socket.close();
        }
        assertHealthy("after-truncated-closed", 100);
    }

    @Test
    void tenThousandIdleConnectionsDoNotStopService() throws Exception {
        // A separate server process: 10,000 connections need 10,000 descriptors on each side.
        ProcessBuilder builder = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"),
            "-Xmx256m", "-cp", System.getProperty("java.class.path"), ServerProcessMain.class.getName(),
            "listeners=PLAINTEXT://127.0.0.1:0", "log.dirs=" + dataDir.resolve("child"), "num.network.threads=2",
            // Kafka's default backlog of 50 makes the kernel drop SYNs during a connection storm; clients then
            // wait for SYN retransmits (1 s, 3 s, ...). Operators expecting such storms raise it, as here.
            "socket.listen.backlog.size=4096");
        builder.redirectErrorStream(true);
        Process child = builder.start();
        List<SocketChannel> idle = new ArrayList<>();
        try {
            int port = awaitPort(child);
            long startNanos = System.nanoTime();
            for (int i = 0; i < 10_000; i++) {
                SocketChannel channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
                idle.add(channel);
            }
            System.out.println("opened 10,000 connections in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos) + " ms");
            Properties properties = new Properties();
            properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
            try (Admin admin = Admin.create(properties)) {
                admin.createTopics(List.of(new NewTopic("busy", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
                assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).contains("busy");
            }
            assertThat(child.isAlive()).isTrue();
        } finally {
            for (SocketChannel channel : idle) {
                channel.close();
            }
            child.getOutputStream().close();
            if (!child.waitFor(20, TimeUnit.SECONDS)) {
                child.destroyForcibly();
            }
        }
    }

    private static int awaitPort(Process child) throws IOException {
        BufferedReader reader = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String line;
        while (System.nanoTime() < deadline && (line = reader.readLine()) != null) {
            if (line.startsWith("PORT ")) {
                int port = Integer.parseInt(line.substring(5).trim());
                Thread drain = new Thread(() -> drainQuietly(child.getInputStream()));
                drain.setDaemon(true);
                drain.start();
                return port;
            }
        }
        throw new EOFException("the server process did not report its port");
    }

    private static void drainQuietly(InputStream in) {
        try {
            in.transferTo(OutputStream.nullOutputStream());
        } catch (IOException ignored) {
            // the child exited
        }
    }

}
