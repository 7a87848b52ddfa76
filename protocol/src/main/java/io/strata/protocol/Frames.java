package io.strata.protocol;

import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.RequestHeaderData;
import io.strata.protocol.message.ResponseHeaderData;

import java.nio.ByteBuffer;

/**
 * Request and response framing of the Kafka protocol.
 *
 * <pre>
 *  request frame:   | size i32 | request header (v1, or v2 for flexible versions) | request body |
 *  request header:  | api_key i16 | api_version i16 | correlation_id i32 | client_id (i16-length string, nullable)
 *                   | tagged fields (v2 only) |
 *  response frame:  | size i32 | correlation_id i32 | tagged fields (header v1 only) | response body |
 * </pre>
 *
 * The header version follows from the API's flexible versions; the client id is a classic
 * (non-compact) string even in header v2. ApiVersions responses always use header v0, so a
 * client that does not yet know the broker's versions can read the answer. The size prefix is
 * handled by the network layer (which enforces {@code socket.request.max.bytes} before
 * buffering); the methods here take and produce frames without it unless stated.
 */
public final class Frames {
    /** Bytes in the size prefix of every frame. */
    public static final int SIZE_PREFIX_BYTES = 4;
    private static final int MIN_HEADER_BYTES = 2 + 2 + 4 + 2;

    private Frames() {
    }

    /**
     * Parses the request header at the start of {@code frame} and leaves the buffer positioned
     * at the body.
     *
     * @throws ProtocolException for an unknown API key or a malformed header; Kafka closes the
     *                           connection in both cases
     */
    public static RequestHeader parseRequestHeader(ByteBuffer frame) {
        if (frame.remaining() < MIN_HEADER_BYTES) {
            throw new ProtocolException("request of " + frame.remaining() + " bytes is shorter than a request header");
        }
        short apiKey = frame.getShort(frame.position());
        short apiVersion = frame.getShort(frame.position() + 2);
        ApiMessageType api = ApiMessageType.fromApiKey(apiKey);
        if (api == null) {
            throw new ProtocolException("unknown API key " + apiKey);
        }
        short headerVersion = api.requestHeaderVersion(apiVersion);
        RequestHeaderData data = new RequestHeaderData(new Reader(frame), headerVersion);
        return RequestHeader.of(api, data, headerVersion);
    }

    /**
     * Parses a request body of a version the schemas define.
     *
     * @throws UnsupportedVersionException if the schemas do not define {@code header.apiVersion()}
     * @throws ProtocolException           if the body is malformed
     */
    public static ApiMessage parseRequestBody(RequestHeader header, ByteBuffer body) {
        if (!header.api().hasSchemaVersion(header.apiVersion())) {
            throw new UnsupportedVersionException(header.api().apiName + " version " + header.apiVersion() + " is not supported");
        }
        return header.api().readRequest(new Reader(body), header.apiVersion());
    }

    /** The size in bytes of a response header of {@code headerVersion} (0 or 1). */
    public static int responseHeaderSize(short headerVersion) {
        return headerVersion == 0 ? 4 : 5;
    }

    /**
     * Encodes a whole response frame, size prefix included, into a new heap buffer positioned
     * at 0. For large record-carrying responses the network layer writes the parts itself.
     */
    public static ByteBuffer encodeResponse(RequestHeader request, ApiMessage body, short bodyVersion) {
        short headerVersion = request.responseHeaderVersion();
        ResponseHeaderData header = new ResponseHeaderData().setCorrelationId(request.correlationId());
        int headerSize = header.size(headerVersion);
        int bodySize = body.size(bodyVersion);
        ByteBuffer buffer = ByteBuffer.allocate(SIZE_PREFIX_BYTES + headerSize + bodySize);
        ByteBufferWriter writer = new ByteBufferWriter(buffer);
        writer.writeInt(headerSize + bodySize);
        header.write(writer, headerVersion);
        body.write(writer, bodyVersion);
        if (buffer.hasRemaining()) {
            throw new IllegalStateException("response size mismatch: " + buffer.remaining() + " bytes unwritten for "
                + request.api().apiName + " v" + bodyVersion);
        }
        return buffer.flip();
    }

    /** Encodes a whole request frame, size prefix included (used by our CLI and tests). */
    public static ByteBuffer encodeRequest(ApiMessageType api, short version, int correlationId, String clientId, ApiMessage body) {
        short headerVersion = api.requestHeaderVersion(version);
        RequestHeaderData header = new RequestHeaderData()
            .setRequestApiKey(api.apiKey)
            .setRequestApiVersion(version)
            .setCorrelationId(correlationId)
            .setClientId(clientId);
        int headerSize = header.size(headerVersion);
        int bodySize = body.size(version);
        ByteBuffer buffer = ByteBuffer.allocate(SIZE_PREFIX_BYTES + headerSize + bodySize);
        ByteBufferWriter writer = new ByteBufferWriter(buffer);
        writer.writeInt(headerSize + bodySize);
        header.write(writer, headerVersion);
        body.write(writer, version);
        return buffer.flip();
    }

    /** Parses a response frame (without size prefix) of {@code api} at {@code version}; returns the body. */
    public static ApiMessage parseResponse(ApiMessageType api, short version, ByteBuffer frame, int expectedCorrelationId) {
        ResponseHeaderData header = new ResponseHeaderData(new Reader(frame), api.responseHeaderVersion(version));
        if (header.correlationId() != expectedCorrelationId) {
            throw new ProtocolException("correlation id " + header.correlationId() + " does not match the request's " + expectedCorrelationId);
        }
        return api.readResponse(new Reader(frame), version);
    }
}
