package io.strata.server.network.client;

import io.strata.common.Time;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsRequestData;
import io.strata.protocol.message.ApiVersionsResponseData;
import io.strata.protocol.message.MetadataRequestData;
import io.strata.protocol.message.MetadataResponseData;
import io.strata.server.StrataServer;
import io.strata.server.config.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link InterBrokerClient} against a real node and against peers that misbehave. */
class InterBrokerClientTest {
    @TempDir
    Path dir;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    private InterBrokerClient client(int requestTimeoutMs) {
        return client(requestTimeoutMs, 1_024);
    }

    private InterBrokerClient client(int requestTimeoutMs, int maxQueuedPerNode) {
        InterBrokerClient client = new InterBrokerClient(new InterBrokerClient.Settings("test", 2_000, requestTimeoutMs, 50, 1_000, 1024 * 1024,
            maxQueuedPerNode),
            1, Time.SYSTEM, new Random(1));
        toClose.add(client);
        return client;
    }

    @Test
    void pipelinedRequestsToARealNodeAreAnsweredInOrder() throws Exception {
        StrataServer server = new StrataServer(ServerConfig.fromMap(Map.of("listeners", "PLAINTEXT://127.0.0.1:0", "log.dirs", dir.toString(),
            "metrics.enabled", "false", "num.io.threads", "2")), Time.SYSTEM);
        toClose.add(server);
        server.startup();
        InterBrokerClient client = client(10_000);
        InterBrokerClient.Endpoint node = new InterBrokerClient.Endpoint(1, "127.0.0.1", server.boundPort());
        List<CompletableFuture<ApiMessage>> answers = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            answers.add(i % 2 == 0
                ? client.send(node, ApiMessageType.API_VERSIONS, (short) 3, new ApiVersionsRequestData().setClientSoftwareName("t").setClientSoftwareVersion("1"))
                : client.send(node, ApiMessageType.METADATA, (short) 12, new MetadataRequestData().setTopics(null)));
        }
        for (int i = 0; i < answers.size(); i++) {
            ApiMessage answer = answers.get(i).get(10, TimeUnit.SECONDS);
            if (i % 2 == 0) {
                assertThat(((ApiVersionsResponseData) answer).errorCode()).isEqualTo(ErrorCode.NONE.code());
            } else {
                assertThat(((MetadataResponseData) answer).brokers()).hasSize(1);
            }
        }
    }

    @Test
    void aPeerThatNeverAnswersTimesOutAndIsDisconnected() throws Exception {
        try (ServerSocket silent = new ServerSocket(0)) {
            List<Socket> accepted = new CopyOnWriteArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        accepted.add(silent.accept());
                    }
                } catch (Exception e) {
                    // closed
                }
            });
            acceptor.start();
            InterBrokerClient client = client(300);
            CompletableFuture<ApiMessage> answer = client.send(new InterBrokerClient.Endpoint(7, "127.0.0.1", silent.getLocalPort()),
                ApiMessageType.API_VERSIONS, (short) 3, new ApiVersionsRequestData().setClientSoftwareName("t").setClientSoftwareVersion("1"));
            assertThatThrownBy(() -> answer.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(TimeoutException.class);
            // The client closed its end: the peer reads end of stream.
            InputStream in = accepted.get(0).getInputStream();
            accepted.get(0).setSoTimeout(5_000);
            byte[] buffer = new byte[4096];
            int read;
            do {
                read = in.read(buffer);
            } while (read > 0);
            assertThat(read).isEqualTo(-1);
            silent.close();
            acceptor.join(5_000);
            for (Socket socket : accepted) {
                socket.close();
            }
        }
    }

    @Test
    void lostConnectionsFailTheirRequestsAndReconnectsBackOff() throws Exception {
        try (ServerSocket closer = new ServerSocket(0)) {
            List<Long> acceptedAtMs = new CopyOnWriteArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        Socket socket = closer.accept();
                        acceptedAtMs.add(System.nanoTime() / 1_000_000);
                        socket.getInputStream().read();
                        socket.close();
                    }
                } catch (Exception e) {
                    // closed
                }
            });
            acceptor.start();
            InterBrokerClient client = client(10_000);
            InterBrokerClient.Endpoint node = new InterBrokerClient.Endpoint(3, "127.0.0.1", closer.getLocalPort());
            for (int i = 0; i < 5; i++) {
                CompletableFuture<ApiMessage> answer = client.send(node, ApiMessageType.API_VERSIONS, (short) 3,
                    new ApiVersionsRequestData().setClientSoftwareName("t").setClientSoftwareVersion("1"));
                assertThatThrownBy(() -> answer.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(InterBrokerClient.RequestFailedException.class);
            }
            assertThat(acceptedAtMs).hasSize(5);
            // Back-off after each loss: 50, 100, 200, 400 ms (+-20%) between attempts.
            for (int i = 1; i < acceptedAtMs.size(); i++) {
                long expectedMs = 50L << (i - 1);
                assertThat(acceptedAtMs.get(i) - acceptedAtMs.get(i - 1)).as("gap before attempt %d", i).isGreaterThanOrEqualTo(expectedMs * 8 / 10);
            }
            closer.close();
            acceptor.join(5_000);
        }
    }

    @Test
    void anOversizedAnswerClosesTheConnectionBeforeItIsBuffered() throws Exception {
        try (ServerSocket liar = new ServerSocket(0)) {
            Thread peer = new Thread(() -> {
                try (Socket socket = liar.accept()) {
                    socket.getInputStream().read(new byte[64]);
                    OutputStream out = socket.getOutputStream();
                    out.write(new byte[] {0x7f, 0, 0, 0, 0, 0, 0, 0}); // a 2 GiB frame
                    out.flush();
                    socket.getInputStream().read();
                } catch (Exception e) {
                    // closed by the client
                }
            });
            peer.start();
            InterBrokerClient client = client(10_000);
            CompletableFuture<ApiMessage> answer = client.send(new InterBrokerClient.Endpoint(4, "127.0.0.1", liar.getLocalPort()),
                ApiMessageType.API_VERSIONS, (short) 3, new ApiVersionsRequestData().setClientSoftwareName("t").setClientSoftwareVersion("1"));
            assertThatThrownBy(() -> answer.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(InterBrokerClient.RequestFailedException.class);
            peer.join(5_000);
        }
    }

    @Test
    void requestsWaitingForAConnectionAreBoundedAndFailAsSoonAsItCannotBeMade() throws Exception {
        int port;
        try (ServerSocket unused = new ServerSocket(0)) {
            port = unused.getLocalPort(); // nothing listens there once closed
        }
        InterBrokerClient client = client(2_000, 16);
        InterBrokerClient.Endpoint node = new InterBrokerClient.Endpoint(5, "127.0.0.1", port);
        List<CompletableFuture<ApiMessage>> waiting = new ArrayList<>();
        for (int i = 0; i < 17; i++) {
            waiting.add(client.send(node, ApiMessageType.API_VERSIONS, (short) 3,
                new ApiVersionsRequestData().setClientSoftwareName("t").setClientSoftwareVersion("1")));
        }
        // The 17th is refused at once if 16 still wait (or fails with them if the refused connection came first).
        assertThatThrownBy(() -> waiting.get(16).get(1, TimeUnit.SECONDS)).hasCauseInstanceOf(InterBrokerClient.RequestFailedException.class);
        // The others fail as soon as the connection is refused, well before their 2 s request timeout (callers retry elsewhere).
        long startNanos = System.nanoTime();
        assertThatThrownBy(() -> waiting.get(0).get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(InterBrokerClient.RequestFailedException.class)
            .hasMessageContaining("cannot connect");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos)).isLessThan(1_500);
    }
}
