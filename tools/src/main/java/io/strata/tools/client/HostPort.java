package io.strata.tools.client;

import java.util.ArrayList;
import java.util.List;

/** A broker address as given on the command line or advertised in Metadata. IPv6 hosts are written in brackets. */
public record HostPort(String host, int port) {
    public HostPort {
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("host must not be empty");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0-65535: port=" + port);
        }
    }

    /**
     * Parses "host:port" or "[ipv6]:port".
     *
     * @throws IllegalArgumentException naming the text if it is not an address
     */
    public static HostPort parse(String text) {
        String trimmed = text.trim();
        int colon = trimmed.lastIndexOf(':');
        if (colon <= 0 || colon == trimmed.length() - 1) {
            throw new IllegalArgumentException("expected host:port, got '" + text + "'");
        }
        String host = trimmed.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        } else if (host.contains(":")) {
            throw new IllegalArgumentException("write IPv6 hosts in brackets, as [::1]:9092, got '" + text + "'");
        }
        int port;
        try {
            port = Integer.parseInt(trimmed.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("port is not a number in '" + text + "'");
        }
        if (port <= 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 1-65535 in '" + text + "'");
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("host is empty in '" + text + "'");
        }
        return new HostPort(host, port);
    }

    /** Parses a comma-separated list, as {@code --bootstrap-server} takes it. */
    public static List<HostPort> parseList(String text) {
        List<HostPort> addresses = new ArrayList<>();
        for (String part : text.split(",")) {
            if (!part.isBlank()) {
                addresses.add(parse(part));
            }
        }
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException("expected at least one host:port, got '" + text + "'");
        }
        return addresses;
    }

    @Override
    public String toString() {
        return host.contains(":") ? "[" + host + "]:" + port : host + ":" + port;
    }
}
