package io.strata.protocol;

import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsRequestData;
import io.strata.protocol.message.ApiVersionsResponseData;
import io.strata.protocol.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataRequestData.MetadataRequestTopic;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FramesTest {
    private static final ApiVersionsTable TABLE = ApiVersionsTable.builder()
        .add(ApiMessageType.API_VERSIONS, 0, 4)
        .add(ApiMessageType.METADATA, 0, 12)
        .build();

    @Test
    void parsesRequestsSerialisedByKafkaClientsInEveryHeaderVersion() {
        for (short version = 0; version <= 13; version++) {
            org.apache.kafka.common.message.MetadataRequestData data = new org.apache.kafka.common.message.MetadataRequestData()
                .setTopics(List.of(new MetadataRequestTopic().setName("orders")))
                .setAllowAutoTopicCreation(true);
            MetadataRequest request = new MetadataRequest(data, version);
            org.apache.kafka.common.requests.RequestHeader kafkaHeader =
                new org.apache.kafka.common.requests.RequestHeader(ApiKeys.METADATA, version, "client-\u00e9", 42 + version);
            ByteBuffer frame = request.serializeWithHeader(kafkaHeader);

            RequestHeader header = Frames.parseRequestHeader(frame);
            assertThat(header.api()).isEqualTo(ApiMessageType.METADATA);
            assertThat(header.apiVersion()).isEqualTo(version);
            assertThat(header.correlationId()).isEqualTo(42 + version);
            assertThat(header.clientId()).isEqualTo("client-\u00e9");
            assertThat(header.headerVersion()).isEqualTo(kafkaHeader.headerVersion());
            MetadataRequestData body = (MetadataRequestData) Frames.parseRequestBody(header, frame);
            assertThat(body.topics()).singleElement().extracting(MetadataRequestData.MetadataRequestTopic::name).isEqualTo("orders");
        }
    }

    @Test
    void kafkaClientsParseRequestsWeEncode() {
        MetadataRequestData body = new MetadataRequestData().setTopics(null).setAllowAutoTopicCreation(true);
        ByteBuffer frame = Frames.encodeRequest(ApiMessageType.METADATA, (short) 12, 7, null, body);
        assertThat(frame.getInt()).isEqualTo(frame.remaining());
        org.apache.kafka.common.requests.RequestHeader header = org.apache.kafka.common.requests.RequestHeader.parse(frame);
        assertThat(header.apiKey()).isEqualTo(ApiKeys.METADATA);
        assertThat(header.correlationId()).isEqualTo(7);
        assertThat(header.clientId()).isEmpty(); // Kafka maps a null client id to ""
        MetadataRequest parsed = (MetadataRequest) AbstractRequest.parseRequest(ApiKeys.METADATA, (short) 12, new org.apache.kafka.common.protocol.ByteBufferAccessor(frame)).request;
        assertThat(parsed.isAllTopics()).isTrue();
    }

    @Test
    void apiVersionsResponsesUseHeaderVersionZeroEvenWhenFlexible() {
        ByteBuffer requestFrame = new ApiVersionsRequest.Builder().build((short) 3)
            .serializeWithHeader(new org.apache.kafka.common.requests.RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "c", 5));
        RequestHeader header = Frames.parseRequestHeader(requestFrame);
        assertThat(header.headerVersion()).isEqualTo((short) 2);
        assertThat(header.responseHeaderVersion()).isEqualTo((short) 0);
        ApiVersionsRequestData request = (ApiVersionsRequestData) Frames.parseRequestBody(header, requestFrame);
        assertThat(request.clientSoftwareName()).isNotEmpty();

        ApiVersionsResponseData response = new ApiVersionsResponseData();
        TABLE.addTo(response);
        ByteBuffer responseFrame = Frames.encodeResponse(header, response, (short) 3);
        assertThat(responseFrame.getInt()).isEqualTo(responseFrame.remaining());
        ApiVersionsResponse parsed = (ApiVersionsResponse) AbstractResponse.parseResponse(responseFrame,
            new org.apache.kafka.common.requests.RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "c", 5));
        assertThat(parsed.data().apiKeys()).hasSize(2);
        assertThat(parsed.data().apiKeys().find(ApiKeys.METADATA.id).maxVersion()).isEqualTo((short) 12);
    }

    @Test
    void tooNewApiVersionsRequestGetsAVersionZeroUnsupportedVersionAnswer() {
        // A client newer than us sends ApiVersions v127 with a flexible (v2) header.
        ByteBuffer frame = ByteBuffer.allocate(64);
        frame.putShort((short) 18).putShort((short) 127).putInt(99).putShort((short) 1).put((byte) 'x').put((byte) 0);
        frame.put((byte) 0x55); // a body we must not try to parse
        frame.flip();
        RequestHeader header = Frames.parseRequestHeader(frame);
        assertThat(header.apiVersion()).isEqualTo((short) 127);
        assertThat(TABLE.isAdvertised(header.api(), header.apiVersion())).isFalse();
        assertThatThrownBy(() -> Frames.parseRequestBody(header, frame)).isInstanceOf(UnsupportedVersionException.class);

        ByteBuffer responseFrame = Frames.encodeResponse(header, TABLE.unsupportedApiVersionsResponse(), (short) 0);
        responseFrame.getInt();
        ApiVersionsResponse parsed = (ApiVersionsResponse) AbstractResponse.parseResponse(responseFrame,
            new org.apache.kafka.common.requests.RequestHeader(ApiKeys.API_VERSIONS, (short) 0, "x", 99));
        assertThat(parsed.data().errorCode()).isEqualTo(org.apache.kafka.common.protocol.Errors.UNSUPPORTED_VERSION.code());
        assertThat(parsed.data().apiKeys().find((short) 18).maxVersion()).isEqualTo((short) 4);
    }

    @Test
    void unknownApiKeyAndShortHeadersAreProtocolErrors() {
        ByteBuffer unknown = ByteBuffer.allocate(12).putShort((short) 999).putShort((short) 0).putInt(1).putShort((short) -1);
        assertThatThrownBy(() -> Frames.parseRequestHeader(unknown.flip())).isInstanceOf(ProtocolException.class)
            .hasMessageContaining("unknown API key 999");
        assertThatThrownBy(() -> Frames.parseRequestHeader(ByteBuffer.allocate(3))).isInstanceOf(ProtocolException.class);
        ByteBuffer longClientId = ByteBuffer.allocate(12).putShort((short) 3).putShort((short) 1).putInt(1).putShort((short) 500);
        assertThatThrownBy(() -> Frames.parseRequestHeader(longClientId.flip())).isInstanceOf(ProtocolException.class);
    }

    @Test
    void advertisedMaximumMustBeASchemaVersion() {
        assertThatThrownBy(() -> ApiVersionsTable.builder().add(ApiMessageType.PRODUCE, 0, 99))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Produce");
        assertThat(ApiVersionsTable.builder().add(ApiMessageType.PRODUCE, 0, 12).build()
            .isAdvertised(ApiMessageType.PRODUCE, (short) 0)).isTrue();
    }
}
