package io.strata.server.config;

import io.strata.common.config.ConfigException;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One entry of {@code controller.quorum.voters}: {@code id@host:port}, as in Kafka
 * ({@code 1@127.0.0.1:9093}; an IPv6 host in brackets, {@code 2@[::1]:9093}). The address is
 * the voter's controller listener, where the other voters send Vote, BeginQuorumEpoch and Fetch.
 *
 * <p>Immutable.
 */
public record QuorumVoter(int id, String host, int port) {
    public QuorumVoter {
        if (id < 0) {
            throw new IllegalArgumentException("voter id must not be negative: id=" + id);
        }
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("voter host must not be empty: id=" + id);
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("voter port must be between 0 and 65535: id=" + id + " port=" + port);
        }
    }

    /** An unresolved address for the network layer (resolved when it connects, as Kafka does). */
    public InetSocketAddress address() {
        return InetSocketAddress.createUnresolved(host, port);
    }

    /** {@code id@host:port}, the form it is configured in. */
    @Override
    public String toString() {
        return id + "@" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /**
     * Parses every entry of {@code controller.quorum.voters}, in the order given.
     *
     * @throws ConfigException naming the key and the bad entry, or the id given twice
     */
    static List<QuorumVoter> parseAll(String key, List<String> entries) {
        List<QuorumVoter> voters = new ArrayList<>(entries.size());
        Set<Integer> ids = new HashSet<>();
        for (String entry : entries) {
            QuorumVoter voter = parse(key, entry);
            if (!ids.add(voter.id())) {
                throw new ConfigException(key + ": voter id " + voter.id() + " appears more than once in " + entries);
            }
            voters.add(voter);
        }
        return List.copyOf(voters);
    }

    /** Parses one {@code id@host:port} entry of {@code key}. */
    static QuorumVoter parse(String key, String entry) {
        String text = entry.strip();
        int at = text.indexOf('@');
        if (at <= 0) {
            throw expected(key, entry);
        }
        int id;
        try {
            id = Integer.parseInt(text.substring(0, at));
        } catch (NumberFormatException e) {
            throw expected(key, entry);
        }
        if (id < 0) {
            throw new ConfigException(key + ": the voter id must not be negative, got '" + entry + "'");
        }
        InetSocketAddress address = parseHostPort(key, text.substring(at + 1), () -> expected(key, entry));
        return new QuorumVoter(id, address.getHostString(), address.getPort());
    }

    /**
     * Parses {@code host:port} ({@code [v6]:port} for IPv6) into an unresolved address, or
     * throws what {@code error} makes.
     */
    static InetSocketAddress parseHostPort(String key, String text, java.util.function.Supplier<ConfigException> error) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw error.get();
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        } else if (host.indexOf(':') >= 0 || host.indexOf('[') >= 0 || host.indexOf(']') >= 0) {
            throw error.get();
        }
        if (host.isEmpty() || host.chars().anyMatch(Character::isWhitespace)) {
            throw error.get();
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw error.get();
        }
        if (port < 0 || port > 65535) {
            throw new ConfigException(key + ": port must be between 0 and 65535, got '" + text + "'");
        }
        return InetSocketAddress.createUnresolved(host, port);
    }

    private static ConfigException expected(String key, String entry) {
        return new ConfigException(key + ": expected id@host:port, got '" + entry + "'");
    }
}
