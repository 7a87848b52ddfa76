package io.strata.chaos.net;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class DelayProxyTest {
    private final ServerSocket echoServer = newEchoServer();
    private DelayProxy proxy;

    @AfterEach
    void close() throws IOException {
        if (proxy != null) {
            proxy.close();
        }
        echoServer.close();
    }

    @Test
    void roundTripTakesAtLeastBothDelays() throws Exception {
        proxy = newProxy(new Latency(60, 20), new Latency(40, 0));
        try (Socket socket = connect()) {
            for (int i = 0; i < 5; i++) {
                long startNanos = System.nanoTime();
                socket.getOutputStream().write(i);
                assertThat(socket.getInputStream().read()).isEqualTo(i);
                long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
                assertThat(elapsedMs).as("round trip %d", i).isGreaterThanOrEqualTo(100);
            }
        }
        assertThat(proxy.connectionErrors()).isZero();
    }

    @Test
    void bytesArriveIntactAndInOrderWithJitter() throws Exception {
        proxy = newProxy(new Latency(1, 5), new Latency(0, 5));
        byte[] sent = new byte[3 * 1024 * 1024]; // larger than both queues together: flow control must push back
        new Random(7).nextBytes(sent);
        try (Socket socket = connect()) {
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try {
                    OutputStream out = socket.getOutputStream();
                    for (int offset = 0; offset < sent.length; offset += 10_000) {
                        out.write(sent, offset, Math.min(10_000, sent.length - offset));
                    }
                    socket.shutdownOutput();
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            byte[] received = new byte[sent.length];
            new DataInputStream(socket.getInputStream()).readFully(received);
            writer.get(30, TimeUnit.SECONDS);
            assertThat(received).isEqualTo(sent);
            assertThat(socket.getInputStream().read()).as("end of stream forwarded").isEqualTo(-1);
        }
    }

    @Test
    void newLatencyAppliesToLaterBytes() throws Exception {
        proxy = newProxy(Latency.NONE, Latency.NONE);
        try (Socket socket = connect()) {
            proxy.setLatency(new Latency(150, 0), Latency.NONE);
            long startNanos = System.nanoTime();
            socket.getOutputStream().write(1);
            assertThat(socket.getInputStream().read()).isEqualTo(1);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos)).isGreaterThanOrEqualTo(150);
        }
    }

    private DelayProxy newProxy(Latency upstream, Latency downstream) throws IOException {
        return new DelayProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
            (InetSocketAddress) echoServer.getLocalSocketAddress(), upstream, downstream, 42, System::nanoTime);
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket();
        socket.connect(proxy.address(), 5_000);
        socket.setSoTimeout(30_000);
        return socket;
    }

    /** A server that echoes every byte of every connection back, and half-closes when its client does. */
    private static ServerSocket newEchoServer() {
        try {
            ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread acceptor = new Thread(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket socket = server.accept();
                        Thread echo = new Thread(() -> echo(socket), "echo");
                        echo.setDaemon(true);
                        echo.start();
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "echo-accept");
            acceptor.setDaemon(true);
            acceptor.start();
            return server;
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    private static void echo(Socket socket) {
        try (socket) {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            in.transferTo(out);
            socket.shutdownOutput();
        } catch (IOException e) {
            // The client went away; the test sees it on its side.
        }
    }
}
