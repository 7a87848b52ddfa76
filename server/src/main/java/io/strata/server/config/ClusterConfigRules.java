package io.strata.server.config;

import io.strata.common.config.ConfigException;
import io.strata.server.config.ServerConfig.Endpoint;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Kafka 4's rules for the roles, listeners and quorum of a KRaft node ({@code KafkaConfig.validateValues}),
 * with Kafka's messages. They apply only to a node configured for a cluster
 * ({@code controller.quorum.voters} or {@code controller.quorum.bootstrap.servers} set): the
 * zero-config single node ({@link ServerConfig#isStandaloneDefault()}) is its own one voter,
 * in-process, and needs no controller listener, so none of them applies to it.
 *
 * <p>Which rules apply, by {@code process.roles}:
 * <pre>
 *   rule                                                   broker  controller  both
 *   process.roles not empty, no role twice                   x        x         x
 *   node.id not among the voters                             x
 *   node.id among the voters (when voters are given)                  x         x
 *   controller.listener.names non-empty                      x        x         x
 *   no controller listener in listeners                      x
 *   advertised.listeners names no controller listener        x
 *   controller listener names all in the security map        x
 *   listeners has only controller listeners                           x
 *   a controller listener in listeners, all of them there             x         x
 *   inter.broker.listener.name, when set, not a controller            x
 *   at least one advertised broker listener                  x                  x
 *   inter.broker.listener.name among the advertised ones     x                  x
 *   advertised broker listeners a subset of listeners        x                  x
 *   no 0.0.0.0 among the advertised listeners                x        x         x
 * </pre>
 * The broker-only rule on advertised controller listeners is Kafka 3's: Kafka 4 drops controller
 * names from a broker's advertised listeners silently; a broker-only node has no controller
 * listener to advertise, so naming one is refused here.
 *
 * <p>Stateless.
 */
final class ClusterConfigRules {
    private ClusterConfigRules() {
    }

    static void check(ServerConfig config) {
        Set<String> roles = config.processRoles();
        if (roles.isEmpty()) {
            throw new ConfigException(ServerConfig.PROCESS_ROLES + " must contain 'broker', 'controller' or both when "
                + ServerConfig.CONTROLLER_QUORUM_VOTERS + " or " + ServerConfig.CONTROLLER_QUORUM_BOOTSTRAP_SERVERS + " is set");
        }
        @SuppressWarnings("unchecked")
        List<String> rolesGiven = (List<String>) config.value(ServerConfig.PROCESS_ROLES);
        if (rolesGiven.size() != roles.size()) {
            throw new ConfigException("Duplicate role names found in `" + ServerConfig.PROCESS_ROLES + "`: " + rolesGiven);
        }
        List<String> controllerNames = config.controllerListenerNames();
        if (controllerNames.isEmpty()) {
            throw new ConfigException(ServerConfig.CONTROLLER_LISTENER_NAMES + " must contain at least one value when "
                + ServerConfig.CONTROLLER_QUORUM_VOTERS + " or " + ServerConfig.CONTROLLER_QUORUM_BOOTSTRAP_SERVERS + " is set"
                + (roles.contains(ServerConfig.ROLE_CONTROLLER) ? "" : " (running KRaft with just the broker role)"));
        }
        if (!config.isController()) {
            checkBrokerOnly(config, controllerNames);
        } else if (!config.isBroker()) {
            checkControllerOnly(config, controllerNames);
        }
        if (config.isController()) {
            checkController(config, controllerNames);
        }
        if (config.isBroker()) {
            checkBroker(config);
        }
        for (Endpoint endpoint : config.advertisedListeners()) {
            if ("0.0.0.0".equals(endpoint.host())) {
                throw new ConfigException(ServerConfig.ADVERTISED_LISTENERS + " cannot use the nonroutable meta-address 0.0.0.0. "
                    + "Use a routable IP address.");
            }
        }
    }

    private static void checkBrokerOnly(ServerConfig config, List<String> controllerNames) {
        Set<Integer> voterIds = voterIds(config);
        if (voterIds.contains(config.nodeId())) {
            throw new ConfigException("If " + ServerConfig.PROCESS_ROLES + " contains just the 'broker' role, the node id "
                + config.nodeId() + " must not be included in the set of voters " + ServerConfig.CONTROLLER_QUORUM_VOTERS + "=" + voterIds);
        }
        if (!controllerListeners(config.listenerEndpoints(), controllerNames).isEmpty()) {
            throw new ConfigException(ServerConfig.CONTROLLER_LISTENER_NAMES + " must not contain a value appearing in the '"
                + ServerConfig.LISTENERS + "' configuration when running KRaft with just the broker role");
        }
        if (!controllerListeners(config.advertisedListeners(), controllerNames).isEmpty()) {
            throw new ConfigException("The " + ServerConfig.ADVERTISED_LISTENERS + " config must not contain KRaft controller listeners from "
                + ServerConfig.CONTROLLER_LISTENER_NAMES + " when " + ServerConfig.PROCESS_ROLES + " contains the broker role because Kafka "
                + "clients that send requests via advertised listeners do not send requests to KRaft controllers -- they only send "
                + "requests to KRaft brokers.");
        }
        Map<String, String> protocols = config.listenerSecurityProtocolMap();
        for (String name : controllerNames) {
            if (!protocols.containsKey(normalise(name))) {
                throw new ConfigException("Controller listener with name " + normalise(name) + " defined in "
                    + ServerConfig.CONTROLLER_LISTENER_NAMES + " not found in " + ServerConfig.LISTENER_SECURITY_PROTOCOL_MAP
                    + " (an explicit security mapping for each controller listener is required)");
            }
        }
    }

    private static void checkControllerOnly(ServerConfig config, List<String> controllerNames) {
        List<Endpoint> listeners = config.listenerEndpoints();
        if (controllerListeners(listeners, controllerNames).size() != listeners.size()) {
            throw new ConfigException("The " + ServerConfig.LISTENERS + " config must only contain KRaft controller listeners from "
                + ServerConfig.CONTROLLER_LISTENER_NAMES + " when " + ServerConfig.PROCESS_ROLES + "=controller");
        }
        String interBroker = config.getString(ServerConfig.INTER_BROKER_LISTENER_NAME);
        if (interBroker != null && names(controllerNames).contains(normalise(interBroker))) {
            throw new ConfigException(ServerConfig.CONTROLLER_LISTENER_NAMES + " must not contain an explicitly set "
                + ServerConfig.INTER_BROKER_LISTENER_NAME + " configuration value when " + ServerConfig.PROCESS_ROLES + "=controller");
        }
    }

    private static void checkController(ServerConfig config, List<String> controllerNames) {
        Set<Integer> voterIds = voterIds(config);
        if (!voterIds.isEmpty() && !voterIds.contains(config.nodeId())) {
            throw new ConfigException("If " + ServerConfig.PROCESS_ROLES + " contains the 'controller' role, the node id "
                + config.nodeId() + " must be included in the set of voters " + ServerConfig.CONTROLLER_QUORUM_VOTERS + "=" + voterIds);
        }
        List<Endpoint> listeners = config.listenerEndpoints();
        if (controllerListeners(listeners, controllerNames).isEmpty()) {
            throw new ConfigException(ServerConfig.CONTROLLER_LISTENER_NAMES + " must contain at least one value appearing in the '"
                + ServerConfig.LISTENERS + "' configuration when running the KRaft controller role");
        }
        Set<String> listenerNames = listeners.stream().map(endpoint -> normalise(endpoint.listenerName())).collect(Collectors.toSet());
        if (!listenerNames.containsAll(names(controllerNames))) {
            throw new ConfigException(ServerConfig.CONTROLLER_LISTENER_NAMES + " must only contain values appearing in the '"
                + ServerConfig.LISTENERS + "' configuration when running the KRaft controller role");
        }
    }

    private static void checkBroker(ServerConfig config) {
        Set<String> advertised = config.advertisedBrokerListeners().stream()
            .map(endpoint -> normalise(endpoint.listenerName())).collect(Collectors.toCollection(LinkedHashSet::new));
        if (advertised.isEmpty()) {
            throw new ConfigException("There must be at least one broker advertised listener. Perhaps all listeners appear in "
                + ServerConfig.CONTROLLER_LISTENER_NAMES + "?");
        }
        String interBroker = config.interBrokerListenerName();
        if (interBroker == null || !advertised.contains(normalise(interBroker))) {
            throw new ConfigException(ServerConfig.INTER_BROKER_LISTENER_NAME + " must be a listener name defined in "
                + ServerConfig.ADVERTISED_LISTENERS + ". The valid options based on currently configured listeners are "
                + String.join(",", advertised));
        }
        Set<String> listenerNames = config.listenerEndpoints().stream()
            .map(endpoint -> normalise(endpoint.listenerName())).collect(Collectors.toCollection(LinkedHashSet::new));
        if (!listenerNames.containsAll(advertised)) {
            throw new ConfigException(ServerConfig.ADVERTISED_LISTENERS + " listener names must be equal to or a subset of the ones defined in "
                + ServerConfig.LISTENERS + ". Found " + String.join(",", advertised) + ". The valid options based on the current "
                + "configuration are " + String.join(",", listenerNames));
        }
    }

    private static Set<Integer> voterIds(ServerConfig config) {
        return config.quorumVoters().stream().map(QuorumVoter::id).collect(Collectors.toCollection(LinkedHashSet::new));
    }

    private static List<Endpoint> controllerListeners(List<Endpoint> endpoints, List<String> controllerNames) {
        Set<String> names = names(controllerNames);
        return endpoints.stream().filter(endpoint -> names.contains(normalise(endpoint.listenerName()))).toList();
    }

    private static Set<String> names(List<String> listenerNames) {
        return listenerNames.stream().map(ClusterConfigRules::normalise).collect(Collectors.toSet());
    }

    /** Listener names compare upper-cased, as Kafka's {@code ListenerName.normalised}. */
    static String normalise(String listenerName) {
        return listenerName.toUpperCase(Locale.ROOT);
    }
}
