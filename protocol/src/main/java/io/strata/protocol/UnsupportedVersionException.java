package io.strata.protocol;

/**
 * A message version that the schemas do not define, or a message that cannot be expressed
 * in the requested version (a non-ignorable field set to a non-default value that the
 * version lacks). Maps to Kafka's UNSUPPORTED_VERSION (35).
 */
public class UnsupportedVersionException extends ProtocolException {
    private static final long serialVersionUID = 1L;

    public UnsupportedVersionException(String message) {
        super(message);
    }
}
