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
            request.respond(response.setErrorCode(ErrorCode.COORDINATOR_NOT_AVAILABLE.code()));
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
}
