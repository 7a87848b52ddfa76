package io.strata.chaos.net;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A TCP listener for the namespace tests, run inside a namespace with {@code ip netns exec}:
 * {@code TcpListenerMain ADDRESS PORT} accepts connections and holds them open until killed.
 */
public final class TcpListenerMain {
    private TcpListenerMain() {
    }

    public static void main(String[] args) throws IOException {
        List<Socket> open = new ArrayList<>();
        try (ServerSocket server = new ServerSocket(Integer.parseInt(args[1]), 50, InetAddress.getByName(args[0]))) {
            System.out.println("listening");
            System.out.flush();
            while (true) {
                open.add(server.accept());
            }
        }
    }
}
