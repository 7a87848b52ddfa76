package io.strata.chaos.nemesis;

import io.strata.chaos.cluster.ChaosCluster;
import io.strata.chaos.net.Tbf;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

import java.util.List;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link ClusterControl} over a real {@link ChaosCluster}: processes through its signals, network faults through
 * its {@code Nft}, bandwidth through {@link Tbf}, leaders through an {@link Admin} client in the root namespace
 * (a lookup that does not answer within {@link #LOOKUP_TIMEOUT_MS} is "unknown": a node may be cut off).
 * Thread-safe (the cluster is; the admin client is).
 */
public final class ChaosClusterControl implements ClusterControl, AutoCloseable {
    /** How long a leader lookup may take before the nemesis that needs it skips. */
    static final long LOOKUP_TIMEOUT_MS = 5_000;

    private final ChaosCluster cluster;
    private final Admin admin;

    public ChaosClusterControl(ChaosCluster cluster) {
        this.cluster = cluster;
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Long.toString(LOOKUP_TIMEOUT_MS));
        properties.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "2000");
        properties.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "2000");
        properties.put(AdminClientConfig.CLIENT_ID_CONFIG, "chaos-nemesis");
        this.admin = Admin.create(properties);
    }

    @Override
    public int nodes() {
        return cluster.nodes();
    }

    @Override
    public NodeState state(int node) {
        if (cluster.isRunning(node)) {
            return NodeState.RUNNING;
        }
        return cluster.pid(node) == -1 ? NodeState.STOPPED : NodeState.PAUSED;
    }

    @Override
    public void kill9(int node) throws InterruptedException {
        cluster.kill9(node);
    }

    @Override
    public void start(int node) throws Exception {
        cluster.startNode(node);
    }

    @Override
    public void pause(int node) {
        cluster.pause(node);
    }

    @Override
    public void resume(int node) {
        cluster.resume(node);
    }

    @Override
    public void partition(Set<Integer> a, Set<Integer> b) {
        cluster.nft().partition(a, b);
    }

    @Override
    public void oneWay(int from, int to) {
        cluster.nft().oneWay(from, to);
    }

    @Override
    public void loss(int node, int percent) {
        cluster.nft().loss(node, percent);
    }

    @Override
    public void healNetwork() {
        cluster.nft().heal();
    }

    @Override
    public void limitBandwidth(int node, int rateKbit) {
        Tbf.limit(cluster.namespace(node), rateKbit);
    }

    @Override
    public void clearBandwidth(int node) {
        Tbf.clear(cluster.namespace(node));
    }

    @Override
    public OptionalInt leader(TopicPartition partition) {
        try {
            TopicDescription description = admin.describeTopics(List.of(partition.topic())).allTopicNames()
                .get(LOOKUP_TIMEOUT_MS, TimeUnit.MILLISECONDS).get(partition.topic());
            for (TopicPartitionInfo info : description.partitions()) {
                if (info.partition() == partition.partition()) {
                    Node leader = info.leader();
                    return leader == null || leader.id() < 0 ? OptionalInt.empty() : OptionalInt.of(leader.id());
                }
            }
            return OptionalInt.empty();
        } catch (ExecutionException | TimeoutException e) {
            return OptionalInt.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return OptionalInt.empty();
        }
    }

    @Override
    public OptionalInt activeController() {
        try {
            int leader = admin.describeMetadataQuorum().quorumInfo().get(LOOKUP_TIMEOUT_MS, TimeUnit.MILLISECONDS).leaderId();
            return leader < 0 ? OptionalInt.empty() : OptionalInt.of(leader);
        } catch (ExecutionException | TimeoutException e) {
            return OptionalInt.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return OptionalInt.empty();
        }
    }

    @Override
    public void close() {
        admin.close(java.time.Duration.ofSeconds(5));
    }
}
