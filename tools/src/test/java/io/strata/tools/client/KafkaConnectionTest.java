package io.strata.tools.client;

import io.strata.common.Time;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The connection against fake brokers that misbehave in one way each; negotiation against a
 * real broker is covered by {@link NegotiationTest}.
 */
class KafkaConnectionTest {
    private static final ClientSettings SHORT_TIMEOUT = new ClientSettings("test", "0", 5_000, 1_000);

    /** A server that accepts one connection and hands it to {@code behaviour} on its own thread. */
    private static final class FakeBroker implements AutoCloseable {
        final ServerSocket server = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
        final List<Socket> accepted = new ArrayList<>();
        final CountDownLatch done = new CountDownLatch(1);
        final Thread thread;

        FakeBroker(SocketBehaviour behaviour) throws IOException {
            thread = new Thread(() -> {
                try (Socket socket = server.accept()) {
                    synchronized (accepted) {
                        accepted.add(socket);
                    }
                    behaviour.serve(socket);
                } catch (IOException ignored) {
                    // The test closed the server.
                } finally {
                    done.countDown();
                }
            }, "fake-broker");
            thread.setDaemon(true);
            thread.start();
        }

        HostPort address() {
            return new HostPort("127.0.0.1", server.getLocalPort());
        }

        @Override
        public void close() throws Exception {
            server.close();
            synchronized (accepted) {
                for (Socket socket : accepted) {
                    socket.close();
                }
            }
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    private interface SocketBehaviour {
        void serve(Socket socket) throws IOException;
    }

    /** Reads one whole request frame, so closing afterwards is a clean FIN rather than a reset. */
    private static void readRequest(Socket socket) throws IOException {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        in.readFully(new byte[in.readInt()]);
    }

    private static void readUntilClosed(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[1024];
        while (in.read(buffer) >= 0) {
            // Swallow requests; never answer.
        }
    }

    @Test
    void aBrokerThatNeverAnswersTimesOutWithTheRequestTimeout() throws Exception {
        try (FakeBroker broker = new FakeBroker(KafkaConnectionTest::readUntilClosed)) {
            long startNanos = System.nanoTime();

            assertThatThrownBy(() -> KafkaConnection.open(broker.address(), SHORT_TIMEOUT, Time.SYSTEM))
                .isInstanceOf(ClientException.class)
                .hasMessage("ApiVersions request to " + broker.address() + " timed out after 1000 ms");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos)).isGreaterThanOrEqualTo(1_000);
        }
    }

    @Test
    void aBrokerThatHangsUpIsALostConnection() throws Exception {
        try (FakeBroker broker = new FakeBroker(KafkaConnectionTest::readRequest)) {
            assertThatThrownBy(() -> KafkaConnection.open(broker.address(), SHORT_TIMEOUT, Time.SYSTEM))
                .isInstanceOf(ClientException.class)
                .hasMessage("lost the connection to " + broker.address() + " while waiting for ApiVersions: the broker closed the connection");
        }
    }

    @Test
    void anOversizedResponseIsRefusedBeforeAllocation() throws Exception {
        try (FakeBroker broker = new FakeBroker(socket -> {
            readRequest(socket);
            new DataOutputStream(socket.getOutputStream()).writeInt(Integer.MAX_VALUE);
            readUntilClosed(socket);
        })) {
            assertThatThrownBy(() -> KafkaConnection.open(broker.address(), SHORT_TIMEOUT, Time.SYSTEM))
                .isInstanceOf(ClientException.class)
                .hasMessage("ApiVersions response from " + broker.address() + " has an invalid size: size=" + Integer.MAX_VALUE
                    + ", limit=" + ClientLimits.MAX_RESPONSE_BYTES);
        }
    }

    @Test
    void aClosedPortIsACleanConnectFailure() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }

        assertThatThrownBy(() -> KafkaConnection.open(new HostPort("127.0.0.1", port), SHORT_TIMEOUT, Time.SYSTEM))
            .isInstanceOf(ClientException.class)
            .hasMessage("cannot connect to 127.0.0.1:" + port + ": Connection refused");
    }
}
