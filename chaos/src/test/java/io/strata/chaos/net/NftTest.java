package io.strata.chaos.net;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** nftables faults between two real namespaces, probed with TCP connects (root only). */
class NftTest {
    /** A run number of its own, apart from the cluster smoke test's. */
    private static final int RUN = 201;
    private static final int PORT = 7000;
    /** Seconds a probe's connect may take: a dropped SYN is retried for longer, so a timeout means blocked. */
    private static final int PROBE_SECONDS = 3;

    private static NetNs first;
    private static NetNs second;
    private static Nft nft;
    private static Process listener;

    enum Outcome { CONNECTED, REFUSED, TIMED_OUT }

    @BeforeAll
    static void createNamespaces() throws IOException {
        Assumptions.assumeTrue(RootNetwork.available(), RootNetwork.REASON);
        first = NetNs.create(RUN, 1);
        second = NetNs.create(RUN, 2);
        nft = new Nft(Map.of(1, first, 2, second));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        listener = new ProcessBuilder(second.execCommand(List.of(java, "-cp", System.getProperty("java.class.path"),
            TcpListenerMain.class.getName(), second.address(), Integer.toString(PORT)))).redirectErrorStream(true).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(listener.getInputStream(), StandardCharsets.UTF_8));
        assertThat(out.readLine()).isEqualTo("listening");
    }

    @AfterEach
    void heal() {
        if (nft != null) {
            nft.heal();
        }
    }

    @AfterAll
    static void removeNamespaces() {
        if (listener != null) {
            listener.destroyForcibly();
        }
        if (nft != null) {
            nft.close();
        }
        if (first != null) {
            first.close();
        }
        if (second != null) {
            second.close();
        }
        if (first != null) {
            ChaosBridge.deleteIfUnused();
        }
    }

    @Test
    void partitionBlocksTcpBothWaysAndHealRestoresIt() {
        assertThat(probe(first, second)).isEqualTo(Outcome.CONNECTED);
        nft.partition(Set.of(1), Set.of(2));
        assertThat(probe(first, second)).isEqualTo(Outcome.TIMED_OUT);
        assertThat(nft.list(2)).contains("ip saddr " + first.address() + " drop");
        nft.heal();
        assertThat(probe(first, second)).isEqualTo(Outcome.CONNECTED);
    }

    @Test
    void rejectRefusesTcpAtOnce() {
        nft.reject(Set.of(1), Set.of(2));
        assertThat(probe(first, second)).isEqualTo(Outcome.REFUSED);
    }

    @Test
    void oneWayDropsOnlyOneDirection() {
        nft.oneWay(2, 1);
        assertThat(nft.list(1)).contains("ip saddr " + second.address() + " drop");
        assertThat(nft.list(2)).contains("ip daddr " + first.address() + " drop");
        // The SYN from 1 arrives, but 2's SYN-ACK is dropped: the connect cannot complete.
        assertThat(probe(first, second)).isEqualTo(Outcome.TIMED_OUT);
    }

    @Test
    void totalLossBlocksAndRootPartitionIsolatesFromClients() {
        nft.loss(2, 100);
        assertThat(probe(first, second)).isEqualTo(Outcome.TIMED_OUT);
        nft.heal();
        nft.partition(Set.of(2), Set.of(Nft.ROOT));
        assertThat(probe(first, second)).as("node to node still flows").isEqualTo(Outcome.CONNECTED);
        assertThat(probe(List.of(), second)).as("root namespace to node").isEqualTo(Outcome.TIMED_OUT);
        assertThat(nft.list(2)).contains("ip saddr " + ChaosBridge.ADDRESS + " drop");
    }

    @Test
    void tbfCapsBothEndsOfTheVethAndClearRemovesIt() {
        Tbf.limit(second, 1000);
        assertThat(second.run(List.of("tc", "qdisc", "show", "dev", "eth0"))).contains("tbf").contains("rate 1Mbit");
        assertThat(Commands.run(List.of("tc", "qdisc", "show", "dev", second.rootVeth()))).contains("tbf");
        assertThat(probe(first, second)).as("capped, not cut").isEqualTo(Outcome.CONNECTED);
        Tbf.clear(second);
        Tbf.clear(second);
        assertThat(second.run(List.of("tc", "qdisc", "show", "dev", "eth0"))).doesNotContain("tbf");
        assertThat(Commands.run(List.of("tc", "qdisc", "show", "dev", second.rootVeth()))).doesNotContain("tbf");
    }

    /** Connects from {@code from}'s namespace to the listener in {@code to}'s, with bash's /dev/tcp. */
    private static Outcome probe(NetNs from, NetNs to) {
        return probe(from.execCommand(List.of()), to);
    }

    /** As above, from the namespace that {@code prefix} (empty: the root namespace, else {@code ip netns exec NS}) runs in. */
    private static Outcome probe(List<String> prefix, NetNs to) {
        List<String> command = new java.util.ArrayList<>(prefix);
        command.addAll(List.of("timeout", Integer.toString(PROBE_SECONDS), "bash", "-c", "exec 3<>/dev/tcp/" + to.address() + "/" + PORT));
        Commands.Result result = Commands.runAllowingFailure(command);
        if (result.exitCode() == 0) {
            return Outcome.CONNECTED;
        }
        if (result.exitCode() == 124) {
            return Outcome.TIMED_OUT;
        }
        assertThat(result.stderr()).as("probe failed otherwise: exit %d", result.exitCode()).contains("refused");
        return Outcome.REFUSED;
    }
}
