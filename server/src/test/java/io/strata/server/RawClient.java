package io.strata.server;

import io.strata.protocol.ApiMessage;
import io.strata.protocol.Frames;
import io.strata.protocol.message.ApiMessageType;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;

/**
 * Sends single requests of an exact version over a plain socket, for what the Java client
 * cannot send (legacy AlterConfigs, malformed entries, cursors) and to check responses field by
 * field.
 */
final class RawClient implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private int correlationId;

    RawClient(int port) throws IOException {
        socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        socket.setSoTimeout((int) TestBroker.TIMEOUT_MS);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    @SuppressWarnings("unchecked")
    <T extends ApiMessage> T send(ApiMessageType api, int version, ApiMessage body) throws IOException {
        int id = ++correlationId;
        ByteBuffer request = Frames.encodeRequest(api, (short) version, id, "raw-client", body);
        out.write(request.array(), request.arrayOffset() + request.position(), request.remaining());
        out.flush();
        int size = in.readInt();
        byte[] frame = new byte[size];
        in.readFully(frame);
        return (T) Frames.parseResponse(api, (short) version, ByteBuffer.wrap(frame), id);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
