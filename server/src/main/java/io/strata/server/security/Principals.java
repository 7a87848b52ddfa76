package io.strata.server.security;

/**
 * Principals as Kafka writes them, {@code <type>:<name>}: {@code User:CN=alice,O=Example} for a
 * TLS client certificate, {@code User:ANONYMOUS} for a connection that proved no identity
 * (PLAINTEXT, or TLS without a client certificate). The authorizer and the audit log compare
 * these strings, so they are built only here.
 */
public final class Principals {
    public static final String USER_TYPE = "User";
    public static final String ANONYMOUS = USER_TYPE + ":ANONYMOUS";

    private Principals() {
    }

    public static String user(String name) {
        return USER_TYPE + ":" + name;
    }
}
