import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.RequestHeader;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;

/**
 * Prints a broker's ApiVersions v4 answer in the format of server/src/test/resources/kafka-4.4/api-versions.txt
 * (API_NAME api_key min max, then the supported and finalized features), for
 * bench/record-kafka-api-versions.sh. Usage: RecordApiVersions PORT
 */
public class RecordApiVersions {
    public static void main(String[] args) throws Exception {
        short version = 4;
        try (Socket socket = new Socket("127.0.0.1", Integer.parseInt(args[0]))) {
            socket.setSoTimeout(30_000);
            ApiVersionsRequest request = new ApiVersionsRequest.Builder(new ApiVersionsRequestData().setClientSoftwareName("record-api-versions")
                .setClientSoftwareVersion("1"), version, version).build(version);
            ByteBuffer frame = request.serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, version, "record-api-versions", 1));
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(frame.remaining());
            out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] response = new byte[in.readInt()];
            in.readFully(response);
            ByteBuffer buffer = ByteBuffer.wrap(response);
            buffer.getInt(); // correlation id: ApiVersions answers always use response header v0
            ApiVersionsResponseData data = ApiVersionsResponse.parse(new ByteBufferAccessor(buffer), version).data();
            if (data.errorCode() != 0) {
                throw new IllegalStateException("ApiVersions failed with error " + data.errorCode());
            }
            for (ApiVersionsResponseData.ApiVersion api : data.apiKeys()) {
                String name = ApiKeys.hasId(api.apiKey()) ? ApiKeys.forId(api.apiKey()).name() : "UNKNOWN_" + api.apiKey();
                System.out.println(name + " " + api.apiKey() + " " + api.minVersion() + " " + api.maxVersion());
            }
            data.supportedFeatures().forEach(f -> System.out.println("supported " + f.name() + " " + f.minVersion() + " " + f.maxVersion()));
            data.finalizedFeatures().forEach(f -> System.out.println("finalized " + f.name() + " " + f.minVersionLevel() + " " + f.maxVersionLevel()));
        }
    }
}
