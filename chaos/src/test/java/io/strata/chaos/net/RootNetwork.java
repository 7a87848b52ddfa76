package io.strata.chaos.net;

import java.util.List;

/** Whether this machine can run the namespace tests: root, {@code ip} and {@code nft} present. */
public final class RootNetwork {
    private RootNetwork() {
    }

    public static boolean available() {
        return isRoot()
            && Commands.available(List.of("ip", "-V"))
            && Commands.available(List.of("nft", "-v"));
    }

    private static boolean isRoot() {
        try {
            return Commands.run(List.of("id", "-u")).strip().equals("0");
        } catch (RuntimeException e) {
            return false;
        }
    }

    public static final String REASON = "needs root, iproute2 (ip) and nftables (nft): network namespaces, veths and nftables rules";
}
