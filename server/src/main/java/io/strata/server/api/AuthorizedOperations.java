package io.strata.server.api;

/**
 * Authorized-operation bit sets reported by Metadata and Describe* responses. Without an
 * authorizer every operation on a resource is allowed, as in Kafka without ACLs. Bits are
 * Kafka's AclOperation codes.
 */
final class AuthorizedOperations {
    /** "Not requested" in responses. */
    static final int OMITTED = Integer.MIN_VALUE;

    private static final int READ = 3;
    private static final int WRITE = 4;
    private static final int CREATE = 5;
    private static final int DELETE = 6;
    private static final int ALTER = 7;
    private static final int DESCRIBE = 8;
    private static final int CLUSTER_ACTION = 9;
    private static final int DESCRIBE_CONFIGS = 10;
    private static final int ALTER_CONFIGS = 11;
    private static final int IDEMPOTENT_WRITE = 12;
    private static final int CREATE_TOKENS = 13;
    private static final int DESCRIBE_TOKENS = 14;

    static final int TOPIC = bits(READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS);
    static final int CLUSTER = bits(CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE,
        CREATE_TOKENS, DESCRIBE_TOKENS);
    static final int GROUP = bits(READ, DELETE, DESCRIBE);

    private AuthorizedOperations() {
    }

    private static int bits(int... operations) {
        int set = 0;
        for (int operation : operations) {
            set |= 1 << operation;
        }
        return set;
    }
}
