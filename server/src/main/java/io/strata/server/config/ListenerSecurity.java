package io.strata.server.config;

import io.strata.common.config.ConfigException;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Gives every listener its security protocol, and refuses, at start-up, every configuration that
 * asks for security Strata does not implement yet (SASL, ACLs, delegation tokens), so that
 * nothing is served as plaintext where the operator asked for security, and no security key is accepted and silently ignored. Also refuses tiered storage.
 * The node's own connections to other nodes use the protocol of the listener they connect to
 * (the first controller listener, the inter-broker listener), TLS included.
 *
 * <p>Listeners resolve their security protocol as Kafka resolves it:
 * {@code listener.security.protocol.map} first; else a listener named after a protocol uses
 * that protocol and a controller listener uses PLAINTEXT, but only while the map is not set
 * (Kafka's default map: {@code PLAINTEXT:PLAINTEXT, SSL:SSL, SASL_PLAINTEXT:...}); else the start fails
 * with Kafka's "No security protocol defined for listener". Names and protocols are compared
 * in upper case, as Kafka normalises them. PLAINTEXT and SSL are served.
 *
 * <p>Refusals, each naming the key or listener:
 * <ul>
 *   <li>an unknown protocol in the map, a listener (bound or advertised) missing from it;</li>
 *   <li>a SASL protocol on a listener, for {@code inter.broker.listener.name} or in
 *       {@code security.inter.broker.protocol} (SASL is step 2 of docs/security-plan.md);</li>
 *   <li>keys that would have no effect: {@code sasl.*}, {@code delegation.token.*},
 *       {@code principal.builder.class}, {@code connections.max.reauth.ms}, {@code security.providers},
 *       the {@code ssl.*} keys of {@link #SSL_KEYS_NOT_IMPLEMENTED}, and their per-listener forms
 *       {@code listener.name.<listener>.[<mechanism>.](ssl|sasl).*} etc. The other {@code ssl.*}
 *       keys are read by {@code io.strata.server.security.SslSettings}.</li>
 * </ul>
 *
 * <p>Stateless.
 */
public final class ListenerSecurity {
    public static final String SECURITY_INTER_BROKER_PROTOCOL = "security.inter.broker.protocol";
    static final String REMOTE_LOG_STORAGE_SYSTEM_ENABLE = "remote.log.storage.system.enable";

    public static final String PLAINTEXT = "PLAINTEXT";
    public static final String SSL = "SSL";
    /** Kafka's SecurityProtocol names. */
    private static final Set<String> PROTOCOLS = Set.of(PLAINTEXT, SSL, "SASL_PLAINTEXT", "SASL_SSL");
    private static final Set<String> SUPPORTED_PROTOCOLS = Set.of(PLAINTEXT, SSL);
    private static final List<String> SECURITY_PREFIXES = List.of("ssl.", "sasl.", "delegation.token.");
    private static final Set<String> SECURITY_KEYS = Set.of("principal.builder.class", "connections.max.reauth.ms", "security.providers");
    /** Kafka's ssl.* keys that change nothing here yet: a custom engine factory, a JCA provider name, the broker's key-store reload. */
    static final Set<String> SSL_KEYS_NOT_IMPLEMENTED = Set.of("ssl.engine.factory.class", "ssl.provider");
    /** Keys Kafka also accepts with a {@code listener.name.<listener>.} prefix, besides the ssl./sasl. ones. */
    private static final Set<String> PER_LISTENER_SECURITY_KEYS = Set.of("principal.builder.class", "connections.max.reauth.ms");
    private static final String LISTENER_PREFIX = "listener.name.";
    static final String NOT_IMPLEMENTED = "Strata does not implement SASL or authorization yet (not implemented)";
    static final String DYNAMIC_NOT_IMPLEMENTED = "Strata does not implement changing TLS, SASL or authorization settings at run time yet (not implemented)";

    private ListenerSecurity() {
    }

    /**
     * @throws ConfigException naming the first listener whose protocol is unknown or not
     *                         implemented, or every security key that is set and has no effect
     */
    static void check(ServerConfig config) {
        Map<String, String> originals = config.originals();
        Map<String, String> protocols = protocolMap(config, originals.containsKey(ServerConfig.LISTENER_SECURITY_PROTOCOL_MAP));
        List<ServerConfig.Endpoint> endpoints = new ArrayList<>();
        config.listeners().forEach(listener -> endpoints.add(ServerConfig.Endpoint.parse(listener)));
        endpoints.addAll(config.advertisedListeners());
        for (ServerConfig.Endpoint endpoint : endpoints) {
            String protocol = protocolOf(protocols, endpoint.listenerName());
            requireSupported(protocol, "Listener " + endpoint.listenerName() + "://" + endpoint.host() + ":" + endpoint.port()
                + " (listener " + ClusterConfigRules.normalise(endpoint.listenerName()) + ")");
        }
        String interBrokerListener = config.getString(ServerConfig.INTER_BROKER_LISTENER_NAME);
        if (interBrokerListener != null && protocols.containsKey(ClusterConfigRules.normalise(interBrokerListener))) {
            requireSupported(protocols.get(ClusterConfigRules.normalise(interBrokerListener)), ServerConfig.INTER_BROKER_LISTENER_NAME + "=" + interBrokerListener);
        }
        String interBrokerProtocol = originals.get(SECURITY_INTER_BROKER_PROTOCOL);
        if (interBrokerProtocol != null) {
            String normalised = ClusterConfigRules.normalise(interBrokerProtocol.trim());
            if (!PROTOCOLS.contains(normalised)) {
                throw new ConfigException(SECURITY_INTER_BROKER_PROTOCOL, interBrokerProtocol, "unknown security protocol (one of "
                    + String.join(", ", PROTOCOLS.stream().sorted().toList()) + ")");
            }
            requireSupported(normalised, SECURITY_INTER_BROKER_PROTOCOL + "=" + interBrokerProtocol);
        }
        checkKeys(originals);
        if ("true".equalsIgnoreCase(String.valueOf(originals.get(REMOTE_LOG_STORAGE_SYSTEM_ENABLE)).trim())) {
            throw new ConfigException(REMOTE_LOG_STORAGE_SYSTEM_ENABLE + "=true: tiered storage is not implemented; remove the setting");
        }
    }

    private static String protocolOf(Map<String, String> protocols, String listenerName) {
        String protocol = protocols.get(ClusterConfigRules.normalise(listenerName));
        if (protocol == null) {
            throw new ConfigException("No security protocol defined for listener " + ClusterConfigRules.normalise(listenerName)
                + " (add it to " + ServerConfig.LISTENER_SECURITY_PROTOCOL_MAP + ")");
        }
        return protocol;
    }

    private static void checkKeys(Map<String, String> originals) {
        List<String> refused = new ArrayList<>();
        for (String key : originals.keySet()) {
            if (isSecurityKey(key) && !isImplementedSslKey(key)) {
                refused.add(key);
            }
        }
        if (!refused.isEmpty()) {
            refused.sort(null);
            throw new ConfigException(NOT_IMPLEMENTED + "; these security settings would have no effect, remove them: "
                + String.join(", ", refused));
        }
    }

    /** Whether {@code key} is an {@code ssl.*} key (or its per-listener form) that the TLS listeners read. */
    static boolean isImplementedSslKey(String key) {
        String sslKey = key;
        if (key.startsWith(LISTENER_PREFIX)) {
            int listenerEnd = key.indexOf('.', LISTENER_PREFIX.length());
            sslKey = listenerEnd < 0 ? "" : key.substring(listenerEnd + 1);
        }
        return sslKey.startsWith("ssl.") && !SSL_KEYS_NOT_IMPLEMENTED.contains(sslKey);
    }

    /** Whether {@code key} changes the behaviour of security (and so cannot be changed at run time yet). */
    static boolean isSecurityKey(String key) {
        if (SECURITY_KEYS.contains(key) || SECURITY_PREFIXES.stream().anyMatch(key::startsWith)) {
            return true;
        }
        if (!key.startsWith(LISTENER_PREFIX)) {
            return false;
        }
        int listenerEnd = key.indexOf('.', LISTENER_PREFIX.length());
        if (listenerEnd < 0) {
            return false;
        }
        String rest = key.substring(listenerEnd + 1);
        // listener.name.<l>.ssl.*, .sasl.*, and the mechanism-scoped .<mechanism>.sasl.* (e.g. scram-sha-256.sasl.jaas.config)
        int mechanismEnd = rest.indexOf('.');
        String afterMechanism = mechanismEnd < 0 ? "" : rest.substring(mechanismEnd + 1);
        return PER_LISTENER_SECURITY_KEYS.contains(rest) || SECURITY_PREFIXES.stream().anyMatch(rest::startsWith)
            || afterMechanism.startsWith("sasl.");
    }

    private static void requireSupported(String protocol, String what) {
        if (!SUPPORTED_PROTOCOLS.contains(protocol)) {
            throw new ConfigException(what + " uses security protocol " + protocol + ", which needs SASL: " + NOT_IMPLEMENTED
                + ". Refusing to serve it without authentication; use a PLAINTEXT or SSL listener until SASL lands.");
        }
    }

    /** Listener name to protocol, both upper case: the configured map, then Kafka's defaults. */
    static Map<String, String> protocolMap(ServerConfig config, boolean mapSet) {
        Map<String, String> protocols = new LinkedHashMap<>();
        @SuppressWarnings("unchecked")
        List<String> entries = (List<String>) config.value(ServerConfig.LISTENER_SECURITY_PROTOCOL_MAP);
        for (String entry : entries) {
            int colon = entry.indexOf(':');
            if (colon <= 0 || colon == entry.length() - 1) {
                throw new ConfigException(ServerConfig.LISTENER_SECURITY_PROTOCOL_MAP, entry, "expected LISTENER_NAME:SECURITY_PROTOCOL");
            }
            String protocol = ClusterConfigRules.normalise(entry.substring(colon + 1).trim());
            if (!PROTOCOLS.contains(protocol)) {
                throw new ConfigException(ServerConfig.LISTENER_SECURITY_PROTOCOL_MAP, entry, "unknown security protocol " + protocol
                    + " (one of " + String.join(", ", PROTOCOLS.stream().sorted().toList()) + ")");
            }
            protocols.put(ClusterConfigRules.normalise(entry.substring(0, colon).trim()), protocol);
        }
        if (!mapSet) {
            for (String protocol : PROTOCOLS) {
                protocols.putIfAbsent(protocol, protocol);
            }
            @SuppressWarnings("unchecked")
            List<String> controllerListeners = (List<String>) config.value(ServerConfig.CONTROLLER_LISTENER_NAMES);
            controllerListeners.forEach(name -> protocols.putIfAbsent(ClusterConfigRules.normalise(name), PLAINTEXT));
        }
        return protocols;
    }
}
