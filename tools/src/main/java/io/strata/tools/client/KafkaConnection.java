package io.strata.tools.client;

import io.strata.common.Time;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.Frames;
import io.strata.protocol.ProtocolException;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsRequestData;
import io.strata.protocol.message.ApiVersionsResponseData;

import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

/**
 * One blocking connection to one broker: a TCP socket, the versions negotiated on it, and
 * request/response exchange with correlation ids.
 *
 * <p>Lifecycle: {@link #open} connects and sends ApiVersions at the highest version the client
 * implements; a broker that does not know that version answers with UNSUPPORTED_VERSION in v0
 * and its ranges, and the request is repeated at the highest version both know. Every later
 * request goes out at the version {@link ClientVersions} negotiated for its API. Requests are
 * strictly one at a time: {@link #send} writes the frame and reads until the matching response.
 *
 * <p>Failure: a connect error, I/O error, timeout or malformed response leaves the stream in an
 * unknown state, so the connection closes itself and throws {@link ClientException}; the caller
 * (usually {@link ClusterClient}) opens a new one if it wants to retry.
 *
 * <p>Not thread-safe: one owner at a time.
 */
public final class KafkaConnection implements AutoCloseable {
    private final HostPort address;
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final ClientSettings settings;
    private final Time time;
    private ClientVersions versions;
    private int nextCorrelationId;
    private boolean closed;

    private KafkaConnection(HostPort address, Socket socket, ClientSettings settings, Time time) throws IOException {
        this.address = address;
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
        this.settings = settings;
        this.time = time;
    }

    /**
     * Connects to {@code address} and negotiates API versions.
     *
     * @throws ClientException "cannot connect to host:port: reason" if the broker is unreachable,
     *                         or the reason ApiVersions failed
     */
    public static KafkaConnection open(HostPort address, ClientSettings settings, Time time) {
        Socket socket = new Socket();
        KafkaConnection connection;
        try {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(address.host(), address.port()), settings.connectTimeoutMs());
            connection = new KafkaConnection(address, socket, settings, time);
        } catch (UnknownHostException e) {
            closeQuietly(socket);
            throw new ClientException("cannot connect to " + address + ": unknown host " + address.host(), e);
        } catch (SocketTimeoutException e) {
            closeQuietly(socket);
            throw new ClientException("cannot connect to " + address + ": no answer within " + settings.connectTimeoutMs() + " ms", e);
        } catch (IOException e) {
            closeQuietly(socket);
            throw new ClientException("cannot connect to " + address + ": " + e.getMessage(), e);
        }
        connection.negotiateVersions();
        return connection;
    }

    public HostPort address() {
        return address;
    }

    /** The versions negotiated on this connection. */
    public ClientVersions versions() {
        return versions;
    }

    public boolean isOpen() {
        return !closed;
    }

    /**
     * Sends {@code request} at the negotiated version of its API and returns the response.
     *
     * @throws UnsupportedApiException if the broker does not support the API (nothing is sent)
     * @throws ClientException         on I/O failure, timeout or a malformed response; the connection is then closed
     */
    public <T extends ApiMessage> T send(ApiMessage request, Class<T> responseType) {
        ApiMessageType api = apiOf(request);
        short version = versions.version(api);
        int correlationId = write(api, version, request);
        ByteBuffer frame = readFrame(api);
        try {
            return responseType.cast(Frames.parseResponse(api, version, frame, correlationId));
        } catch (ProtocolException e) {
            close();
            throw new ClientException("malformed " + api.apiName + " v" + version + " response from " + address + ": " + e.getMessage(), e);
        }
    }

    /** Sends a request the broker does not answer (Produce with acks=0). */
    public void sendWithoutResponse(ApiMessage request) {
        ApiMessageType api = apiOf(request);
        write(api, versions.version(api), request);
    }

    private static ApiMessageType apiOf(ApiMessage request) {
        ApiMessageType api = ApiMessageType.fromApiKey(request.apiKey());
        if (api == null) {
            throw new IllegalArgumentException("request of unknown API key " + request.apiKey());
        }
        return api;
    }

    private void negotiateVersions() {
        short version = ClientVersions.implemented(ApiMessageType.API_VERSIONS).max();
        ApiVersionsResponseData response = requestApiVersions(version);
        if (response.errorCode() == ErrorCode.UNSUPPORTED_VERSION.code()) {
            ApiVersionsResponseData.ApiVersion brokerRange = null;
            for (ApiVersionsResponseData.ApiVersion candidate : response.apiKeys()) {
                if (candidate.apiKey() == ApiMessageType.API_VERSIONS.apiKey) {
                    brokerRange = candidate;
                }
            }
            short retryVersion = brokerRange == null ? 0 : (short) Math.min(version, brokerRange.maxVersion());
            if (retryVersion >= version) {
                close();
                throw new ClientException("broker at " + address + " refused ApiVersions v" + version + " but advertises it");
            }
            response = requestApiVersions(retryVersion);
        }
        if (response.errorCode() != ErrorCode.NONE.code()) {
            close();
            throw new BrokerErrorException("ApiVersions failed on " + address, ErrorCode.forCode(response.errorCode()), null);
        }
        versions = ClientVersions.negotiate(response);
    }

    /**
     * One ApiVersions exchange. The response header is always v0; an UNSUPPORTED_VERSION answer
     * has a v0 body whatever version was asked, and the error code leads the body in every
     * version, so it is read first to pick the version to parse with (Kafka's rule).
     */
    private ApiVersionsResponseData requestApiVersions(short version) {
        ApiVersionsRequestData request = new ApiVersionsRequestData();
        if (version >= 3) {
            request.setClientSoftwareName(ClientSettings.SOFTWARE_NAME).setClientSoftwareVersion(settings.softwareVersion());
        }
        int correlationId = write(ApiMessageType.API_VERSIONS, version, request);
        ByteBuffer frame = readFrame(ApiMessageType.API_VERSIONS);
        int errorCodePosition = frame.position() + Frames.responseHeaderSize((short) 0);
        if (frame.limit() < errorCodePosition + Short.BYTES) {
            close();
            throw new ClientException("malformed ApiVersions response from " + address + ": " + frame.remaining() + " bytes");
        }
        short errorCode = frame.getShort(errorCodePosition);
        short bodyVersion = errorCode == ErrorCode.UNSUPPORTED_VERSION.code() ? 0 : version;
        try {
            return (ApiVersionsResponseData) Frames.parseResponse(ApiMessageType.API_VERSIONS, bodyVersion, frame, correlationId);
        } catch (ProtocolException e) {
            close();
            throw new ClientException("malformed ApiVersions v" + bodyVersion + " response from " + address + ": " + e.getMessage(), e);
        }
    }

    private int write(ApiMessageType api, short version, ApiMessage request) {
        if (closed) {
            throw new ClientException("connection to " + address + " is closed");
        }
        int correlationId = nextCorrelationId++;
        ByteBuffer frame = Frames.encodeRequest(api, version, correlationId, settings.clientId(), request);
        try {
            out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
            out.flush();
        } catch (IOException e) {
            close();
            throw new ClientException("cannot send " + api.apiName + " to " + address + ": " + describe(e), e);
        }
        return correlationId;
    }

    /** Reads one response frame, without its size prefix, within the request timeout. */
    private ByteBuffer readFrame(ApiMessageType api) {
        long deadlineMs = time.hiResClockMs() + settings.requestTimeoutMs();
        try {
            byte[] sizeBytes = new byte[Frames.SIZE_PREFIX_BYTES];
            readFully(sizeBytes, deadlineMs);
            int size = ByteBuffer.wrap(sizeBytes).getInt();
            if (size < Frames.responseHeaderSize((short) 0) || size > ClientLimits.MAX_RESPONSE_BYTES) {
                close();
                throw new ClientException(api.apiName + " response from " + address + " has an invalid size: size=" + size
                    + ", limit=" + ClientLimits.MAX_RESPONSE_BYTES);
            }
            byte[] body = new byte[size];
            readFully(body, deadlineMs);
            return ByteBuffer.wrap(body);
        } catch (SocketTimeoutException e) {
            close();
            throw new ClientException(api.apiName + " request to " + address + " timed out after " + settings.requestTimeoutMs() + " ms", e);
        } catch (IOException e) {
            close();
            throw new ClientException("lost the connection to " + address + " while waiting for " + api.apiName + ": " + describe(e), e);
        }
    }

    /** Reads exactly {@code target.length} bytes; each blocking read may wait only until the deadline. */
    private void readFully(byte[] target, long deadlineMs) throws IOException {
        int filled = 0;
        while (filled < target.length) {
            long remainingMs = deadlineMs - time.hiResClockMs();
            if (remainingMs <= 0) {
                throw new SocketTimeoutException("deadline passed");
            }
            socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, remainingMs));
            int read = in.read(target, filled, target.length - filled);
            if (read < 0) {
                throw new EOFException("the broker closed the connection");
            }
            filled += read;
        }
    }

    private static String describe(IOException e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            closeQuietly(socket);
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // Closing is best effort: the socket is discarded either way.
        }
    }

    @Override
    public String toString() {
        return "KafkaConnection(" + address + (closed ? ", closed" : "") + ")";
    }
}
