package io.strata.tools.client;

import io.strata.protocol.ErrorCode;

/**
 * The broker answered with an error code. The message carries what was attempted, Kafka's
 * name for the error and the broker's message (or Kafka's default message for the code when
 * the broker sent none): "cannot create topic orders: TOPIC_ALREADY_EXISTS: Topic 'orders'
 * already exists."
 */
public final class BrokerErrorException extends ClientException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode error;

    public BrokerErrorException(String attempted, ErrorCode error, String brokerMessage) {
        super(attempted + ": " + KafkaErrors.describe(error, brokerMessage));
        this.error = error;
    }

    public ErrorCode error() {
        return error;
    }
}
