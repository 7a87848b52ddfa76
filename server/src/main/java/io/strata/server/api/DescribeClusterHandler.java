package io.strata.server.api;

import io.strata.metadata.BrokerRegistration;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.DescribeClusterRequestData;
import io.strata.protocol.message.DescribeClusterResponseData;
import io.strata.server.network.Request;

import java.util.ArrayList;
import java.util.List;

/**
 * DescribeCluster, answered as a broker endpoint: the brokers with an endpoint on the listener
 * the request arrived on (fenced ones only when v2+ asks for them), the cluster id, a random
 * alive broker as the controller (Kafka's KRaft answer, {@link AliveBrokers}), and the cluster's authorized operations when asked. A request for the
 * controllers' endpoint type (v1+) is refused with MISMATCHED_ENDPOINT_TYPE, as a Kafka broker
 * does (only controller listeners describe the controllers, KIP-919), an unknown type
 * with UNSUPPORTED_ENDPOINT_TYPE (INVALID_REQUEST in v0, which has neither code).
 */
final class DescribeClusterHandler implements ApiHandler {
    static final byte ENDPOINT_TYPE_BROKER = 1;
    static final byte ENDPOINT_TYPE_CONTROLLER = 2;

    private final BrokerContext context;
    private final java.util.Random random;

    DescribeClusterHandler(BrokerContext context, java.util.Random random) {
        this.context = context;
        this.random = random;
    }

    @Override
    public void handle(Request request) {
        DescribeClusterRequestData body = request.body(DescribeClusterRequestData.class);
        boolean v0 = request.apiVersion() == 0;
        byte endpointType = body.endpointType();
        if (endpointType != ENDPOINT_TYPE_BROKER && endpointType != ENDPOINT_TYPE_CONTROLLER) {
            request.respond(new DescribeClusterResponseData()
                .setErrorCode((v0 ? ErrorCode.INVALID_REQUEST : ErrorCode.UNSUPPORTED_ENDPOINT_TYPE).code())
                .setErrorMessage("Unsupported endpoint type " + endpointType));
            return;
        }
        if (endpointType != ENDPOINT_TYPE_BROKER) {
            request.respond(new DescribeClusterResponseData()
                .setErrorCode((v0 ? ErrorCode.INVALID_REQUEST : ErrorCode.MISMATCHED_ENDPOINT_TYPE).code())
                .setErrorMessage("The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"));
            return;
        }
        io.strata.metadata.MetadataImage image = context.image();
        List<DescribeClusterResponseData.DescribeClusterBroker> brokers = new ArrayList<>();
        for (BrokerRegistration broker : image.brokers().values()) {
            BrokerRegistration.Endpoint endpoint = broker.endpoint(request.listenerName());
            if (endpoint != null && (!broker.fenced() || body.includeFencedBrokers())) {
                brokers.add(new DescribeClusterResponseData.DescribeClusterBroker().setBrokerId(broker.id()).setHost(endpoint.host())
                    .setPort(endpoint.port()).setRack(broker.rack()).setIsFenced(broker.fenced()));
            }
        }
        brokers.sort((a, b) -> Integer.compare(a.brokerId(), b.brokerId()));
        // As in Kafka: a controller id that is not among the listed brokers is reported as -1.
        int controllerId = AliveBrokers.randomAliveBrokerId(image, random);
        boolean controllerListed = brokers.stream().anyMatch(broker -> broker.brokerId() == controllerId);
        request.respond(new DescribeClusterResponseData()
            .setErrorCode(ErrorCode.NONE.code())
            .setEndpointType(ENDPOINT_TYPE_BROKER)
            .setClusterId(context.clusterId())
            .setControllerId(controllerListed ? controllerId : -1)
            .setBrokers(brokers)
            .setClusterAuthorizedOperations(body.includeClusterAuthorizedOperations()
                ? context.authorization().clusterOperations(request) : AuthorizedOperations.OMITTED));
    }
}
