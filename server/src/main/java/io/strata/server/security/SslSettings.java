package io.strata.server.security;

import io.strata.common.config.ConfigException;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code ssl.*} settings of one listener, as Kafka reads them: each key
 * {@code listener.name.<lower-case listener name>.ssl.<key>} when set, else {@code ssl.<key>}, else
 * Kafka's default. Every accessor reports the key that was actually read ({@link #keyOf}) so that
 * errors name what the operator wrote.
 *
 * <p>Immutable.
 */
public final class SslSettings {
    public static final String KEYSTORE_TYPE = "ssl.keystore.type";
    public static final String KEYSTORE_LOCATION = "ssl.keystore.location";
    public static final String KEYSTORE_PASSWORD = "ssl.keystore.password";
    public static final String KEYSTORE_CERTIFICATE_CHAIN = "ssl.keystore.certificate.chain";
    public static final String KEYSTORE_KEY = "ssl.keystore.key";
    public static final String KEY_PASSWORD = "ssl.key.password";
    public static final String TRUSTSTORE_TYPE = "ssl.truststore.type";
    public static final String TRUSTSTORE_LOCATION = "ssl.truststore.location";
    public static final String TRUSTSTORE_PASSWORD = "ssl.truststore.password";
    public static final String TRUSTSTORE_CERTIFICATES = "ssl.truststore.certificates";
    public static final String PROTOCOL = "ssl.protocol";
    public static final String ENABLED_PROTOCOLS = "ssl.enabled.protocols";
    public static final String CIPHER_SUITES = "ssl.cipher.suites";
    public static final String CLIENT_AUTH = "ssl.client.auth";
    public static final String ENDPOINT_IDENTIFICATION_ALGORITHM = "ssl.endpoint.identification.algorithm";
    public static final String KEYMANAGER_ALGORITHM = "ssl.keymanager.algorithm";
    public static final String TRUSTMANAGER_ALGORITHM = "ssl.trustmanager.algorithm";
    public static final String SECURE_RANDOM_IMPLEMENTATION = "ssl.secure.random.implementation";
    public static final String PRINCIPAL_MAPPING_RULES = "ssl.principal.mapping.rules";

    /** Kafka's defaults (SslConfigs / BrokerSecurityConfigs). */
    private static final Map<String, String> DEFAULTS = Map.ofEntries(
        Map.entry(KEYSTORE_TYPE, "JKS"),
        Map.entry(TRUSTSTORE_TYPE, "JKS"),
        Map.entry(PROTOCOL, "TLSv1.3"),
        Map.entry(ENABLED_PROTOCOLS, "TLSv1.2,TLSv1.3"),
        Map.entry(CIPHER_SUITES, ""),
        Map.entry(CLIENT_AUTH, "none"),
        Map.entry(ENDPOINT_IDENTIFICATION_ALGORITHM, "https"),
        Map.entry(KEYMANAGER_ALGORITHM, "SunX509"),
        Map.entry(TRUSTMANAGER_ALGORITHM, "PKIX"),
        Map.entry(PRINCIPAL_MAPPING_RULES, "DEFAULT"));

    /** {@code ssl.client.auth}. */
    public enum ClientAuth {
        NONE, REQUESTED, REQUIRED
    }

    private final Map<String, String> originals;
    private final String prefix;
    private final String listenerName;

    private SslSettings(Map<String, String> originals, String listenerName) {
        this.originals = Map.copyOf(originals);
        this.listenerName = listenerName;
        this.prefix = listenerName == null ? null : "listener.name." + listenerName.toLowerCase(Locale.ROOT) + ".";
    }

    /** The settings of {@code listenerName} (per-listener keys over the broker-wide ones). */
    public static SslSettings forListener(Map<String, String> originals, String listenerName) {
        return new SslSettings(originals, listenerName);
    }

    /** Broker-wide settings only (as a client configuration is read). */
    public static SslSettings of(Map<String, String> originals) {
        return new SslSettings(originals, null);
    }

    public String listenerName() {
        return listenerName;
    }

    /** The key a value of {@code key} comes from: the per-listener form when set, else {@code key} itself. */
    public String keyOf(String key) {
        if (prefix != null && originals.containsKey(prefix + key)) {
            return prefix + key;
        }
        return key;
    }

    /** The value of {@code key} (trimmed), Kafka's default when it has one, else null. An empty value counts as unset for passwords and files. */
    public String get(String key) {
        String value = originals.get(keyOf(key));
        if (value == null) {
            return DEFAULTS.get(key);
        }
        return value.trim();
    }

    /** The value, or null when unset or empty. */
    public String getNonEmpty(String key) {
        String value = get(key);
        return value == null || value.isEmpty() ? null : value;
    }

    /** A comma-separated list; empty when unset or empty. */
    public List<String> getList(String key) {
        String value = get(key);
        if (value == null || value.isBlank()) {
            return List.of();
        }
        return Arrays.stream(value.split(",")).map(String::trim).filter(item -> !item.isEmpty()).toList();
    }

    public ClientAuth clientAuth() {
        String value = get(CLIENT_AUTH);
        try {
            return ClientAuth.valueOf(value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(keyOf(CLIENT_AUTH), value, "must be one of none, requested, required"
                + (listenerName == null ? "" : " (listener " + listenerName + ")"));
        }
    }

    @Override
    public String toString() {
        return listenerName == null ? "ssl settings" : "ssl settings of listener " + listenerName;
    }
}
