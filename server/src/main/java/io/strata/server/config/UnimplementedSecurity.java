package io.strata.server.config;

import io.strata.common.config.ConfigException;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Refuses, at start-up, every configuration that asks for security Strata does not implement
 * yet (TLS, SASL, ACLs, delegation tokens), so that it is never served as plaintext without
 * authentication, and never accepted and silently ignored. Also refuses tiered storage.
 *
 * <p>Listeners resolve their security protocol as Kafka resolves it:
 * {@code listener.security.protocol.map} first; else a listener named after a protocol uses
 * that protocol and a controller listener uses PLAINTEXT, but only while the map is not set
 * (Kafka's default map: {@code PLAINTEXT:PLAINTEXT, SSL:SSL, SASL_PLAINTEXT:...}); else the start fails
 * with Kafka's "No security protocol defined for listener". Names and protocols are compared
 * in upper case, as Kafka normalises them. Only PLAINTEXT is served.
 *
 * <p>Refused keys, when set at all (any value: none of them has an effect here):
 * {@code ssl.*}, {@code sasl.*}, {@code delegation.token.*}, {@code principal.builder.class},
 * {@code connections.max.reauth.ms}, {@code security.providers}, and the per-listener forms
 * {@code listener.name.<listener>.[<mechanism>.](ssl|sasl).*},
 * {@code listener.name.<listener>.connections.max.reauth.ms} and
 * {@code listener.name.<listener>.principal.builder.class}. {@code security.inter.broker.protocol}
 * and {@code remote.log.storage.system.enable} are refused unless PLAINTEXT and false.
 *
 * <p>Stateless.
 */
final class UnimplementedSecurity {
    static final String SECURITY_INTER_BROKER_PROTOCOL = "security.inter.broker.protocol";
    static final String REMOTE_LOG_STORAGE_SYSTEM_ENABLE = "remote.log.storage.system.enable";

    private static final String PLAINTEXT = "PLAINTEXT";
    /** Kafka's SecurityProtocol names; all but PLAINTEXT are not implemented. */
    private static final Set<String> PROTOCOLS = Set.of(PLAINTEXT, "SSL", "SASL_PLAINTEXT", "SASL_SSL");
    private static final List<String> SECURITY_PREFIXES = List.of("ssl.", "sasl.", "delegation.token.");
    private static final Set<String> SECURITY_KEYS = Set.of("principal.builder.class", "connections.max.reauth.ms", "security.providers");
    /** Keys Kafka also accepts with a {@code listener.name.<listener>.} prefix, besides the ssl./sasl. ones. */
    private static final Set<String> PER_LISTENER_SECURITY_KEYS = Set.of("principal.builder.class", "connections.max.reauth.ms");
    private static final String LISTENER_PREFIX = "listener.name.";
    static final String NOT_IMPLEMENTED = "Strata does not implement TLS, SASL or authorization yet (not implemented)";

    private UnimplementedSecurity() {
    }

    /**
     * @throws ConfigException naming the first listener whose protocol is not PLAINTEXT, or every
     *                         security key that is set
     */
    static void check(ServerConfig config) {
        Map<String, String> originals = config.originals();
        Map<String, String> protocols = protocolMap(config, originals.containsKey(ServerConfig.LISTENER_SECURITY_PROTOCOL_MAP));
        List<ServerConfig.Endpoint> endpoints = new ArrayList<>();
        config.listeners().forEach(listener -> endpoints.add(ServerConfig.Endpoint.parse(listener)));
        endpoints.addAll(config.advertisedListeners());
        for (ServerConfig.Endpoint endpoint : endpoints) {
            String protocol = protocols.get(ClusterConfigRules.normalise(endpoint.listenerName()));
            if (protocol == null) {
                throw new ConfigException("No security protocol defined for listener " + ClusterConfigRules.normalise(endpoint.listenerName()));
            }
            requirePlaintext(protocol, "Listener " + endpoint.listenerName() + "://" + endpoint.host() + ":" + endpoint.port()
                + " (listener " + ClusterConfigRules.normalise(endpoint.listenerName()) + ")");
        }
        String interBrokerListener = config.getString(ServerConfig.INTER_BROKER_LISTENER_NAME);
        if (interBrokerListener != null && protocols.containsKey(ClusterConfigRules.normalise(interBrokerListener))) {
            requirePlaintext(protocols.get(ClusterConfigRules.normalise(interBrokerListener)), ServerConfig.INTER_BROKER_LISTENER_NAME + "=" + interBrokerListener);
        }
        String interBrokerProtocol = originals.get(SECURITY_INTER_BROKER_PROTOCOL);
        if (interBrokerProtocol != null) {
            requirePlaintext(ClusterConfigRules.normalise(interBrokerProtocol), SECURITY_INTER_BROKER_PROTOCOL + "=" + interBrokerProtocol);
        }
        List<String> refused = new ArrayList<>();
        for (String key : originals.keySet()) {
            if (isSecurityKey(key)) {
                refused.add(key);
            }
        }
        if (!refused.isEmpty()) {
            refused.sort(null);
            throw new ConfigException(NOT_IMPLEMENTED + "; these security settings would have no effect, remove them: "
                + String.join(", ", refused));
        }
        if ("true".equalsIgnoreCase(String.valueOf(originals.get(REMOTE_LOG_STORAGE_SYSTEM_ENABLE)).trim())) {
            throw new ConfigException(REMOTE_LOG_STORAGE_SYSTEM_ENABLE + "=true: tiered storage is not implemented; remove the setting");
        }
    }

    /** Whether {@code key} only changes the behaviour of security (and so has no effect here). */
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

    private static void requirePlaintext(String protocol, String what) {
        if (!protocol.equals(PLAINTEXT)) {
            throw new ConfigException(what + " uses security protocol " + protocol + ", which " + NOT_IMPLEMENTED
                + ": refusing to serve it as plaintext. Use a PLAINTEXT listener until security lands.");
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
