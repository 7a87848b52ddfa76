package io.strata.server.api;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.InitProducerIdRequestData;
import io.strata.protocol.message.InitProducerIdResponseData;
import io.strata.server.network.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * InitProducerId for idempotent producers (no transactional id): a fresh producer id from a
 * block recorded in the metadata log, epoch 0. A producer that asks to bump its epoch
 * (KIP-360, after an unknown-producer or sequence error) gets a fresh id, which is always
 * safe. Transactional ids are the transaction coordinator's, which answers them once it exists.
 */
final class InitProducerIdHandler implements ApiHandler {
    private static final Logger LOG = LoggerFactory.getLogger(InitProducerIdHandler.class);
    private final BrokerContext context;

    InitProducerIdHandler(BrokerContext context) {
        this.context = context;
    }

    @Override
    public void handle(Request request) {
        InitProducerIdRequestData body = request.body(InitProducerIdRequestData.class);
        InitProducerIdResponseData response = new InitProducerIdResponseData().setProducerId(-1L).setProducerEpoch((short) -1);
        if (body.transactionalId() != null) {
            if (!context.authorization().authorize(request, io.strata.metadata.authorizer.AclOperation.WRITE, io.strata.metadata.authorizer.ResourceType.TRANSACTIONAL_ID, body.transactionalId())) {
                request.respond(response.setErrorCode(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code()));
                return;
            }
            initTransactional(request, body, response);
            return;
        }
        // Kafka 4: an idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic (KIP-679).
        if (!context.authorization().authorizeCluster(request, io.strata.metadata.authorizer.AclOperation.IDEMPOTENT_WRITE)
            && !context.authorization().authorizeAny(request, io.strata.metadata.authorizer.AclOperation.WRITE, io.strata.metadata.authorizer.ResourceType.TOPIC)) {
            request.respond(response.setErrorCode(ErrorCode.CLUSTER_AUTHORIZATION_FAILED.code()));
            return;
        }
        try {
            long producerId = context.producerIds().nextProducerId();
            response.setErrorCode(ErrorCode.NONE.code()).setProducerId(producerId).setProducerEpoch((short) 0);
        } catch (Exception e) {
            LOG.error("Could not allocate a producer id", e);
            response.setErrorCode(ErrorCode.COORDINATOR_NOT_AVAILABLE.code());
        }
        request.respond(response);
    }

    private void initTransactional(Request request, InitProducerIdRequestData body, InitProducerIdResponseData response) {
        if (body.transactionalId().isEmpty()) {
            request.respond(response.setErrorCode(ErrorCode.INVALID_REQUEST.code()));
            return;
        }
        short version = request.apiVersion();
        long expectedId = version >= 3 ? body.producerId() : -1L;
        short expectedEpoch = version >= 3 ? body.producerEpoch() : (short) -1;
        context.transactionCoordinator().initProducerId(body.transactionalId(), body.transactionTimeoutMs(), expectedId, expectedEpoch)
            .whenComplete((result, failure) -> {
                if (failure != null) {
                    LOG.error("InitProducerId for {} failed", body.transactionalId(), failure);
                    request.respond(response.setErrorCode(ErrorCode.UNKNOWN_SERVER_ERROR.code()));
                    return;
                }
                ErrorCode error = result.error();
                if (error == ErrorCode.PRODUCER_FENCED && version < 4) {
                    error = ErrorCode.INVALID_PRODUCER_EPOCH; // PRODUCER_FENCED arrived with v4
                }
                request.respond(response.setErrorCode(error.code()).setProducerId(result.producerId()).setProducerEpoch(result.producerEpoch()));
            });
    }
}
