package io.strata.metadata.authorizer;

import java.util.Objects;

/**
 * Who a request comes from, as {@code Type:Name} (Kafka's {@code KafkaPrincipal}). Every
 * PLAINTEXT connection is {@link #ANONYMOUS}. ACLs name principals by this string form;
 * {@code User:*} in an ACL stands for every principal.
 */
public record KafkaPrincipal(String type, String name) {
    public static final String USER_TYPE = "User";
    public static final KafkaPrincipal ANONYMOUS = new KafkaPrincipal(USER_TYPE, "ANONYMOUS");
    /** The principal string an ACL uses for every user. */
    public static final String WILDCARD = "User:*";

    public KafkaPrincipal {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(name, "name");
    }

    /**
     * Parses {@code Type:Name} (the name may contain colons).
     *
     * @throws IllegalArgumentException without a colon, naming the string, as Kafka's message reads
     */
    public static KafkaPrincipal parse(String principal) {
        int colon = principal == null ? -1 : principal.indexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("Could not parse principal from `" + principal + "` "
                + "(no colon is present separating the principal type from the principal name)");
        }
        return new KafkaPrincipal(principal.substring(0, colon), principal.substring(colon + 1));
    }

    @Override
    public String toString() {
        return type + ":" + name;
    }
}
