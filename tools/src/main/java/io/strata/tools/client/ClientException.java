package io.strata.tools.client;

/**
 * A failure the CLI reports to the user and exits on: the broker is unreachable, a request
 * timed out, or the broker answered with an error. The message is complete and readable on
 * its own ("cannot connect to 127.0.0.1:9092: Connection refused"); the CLI prefixes it with
 * "strata: ". Programming errors are not wrapped in this type.
 */
public class ClientException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ClientException(String message) {
        super(message);
    }

    public ClientException(String message, Throwable cause) {
        super(message, cause);
    }
}
