package io.strata.it.cluster;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.common.errors.TopicExistsException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kill -9 of the active controller of three combined nodes, three times over, while a client
 * keeps creating topics: a new leader is elected each time within {@link #FAILOVER_MAX}, topic
 * creation resumes, and every topic whose CreateTopics returned success exists on every node at
 * the end (no acknowledged metadata write is lost by a failover).
 */
@Tag("cluster")
@ExtendWith(PrintClusterLogsOnFailure.class)
class ControllerFailoverTest {
    /** Kafka fails over in ≈2–3 s with its default 1 s election and 2 s fetch timeouts (FIELD-NOTES); the bound leaves room for a loaded CI machine. */
    private static final Duration FAILOVER_MAX = Duration.ofSeconds(15);
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    /**
     * From the kill until a CreateTopics succeeds again: the election plus a retry of the request that was in flight (its
     * forward to the dead controller fails at once, the socket being closed). A metadata write stalling past this is a bug.
     */
    private static final Duration RESUME_MAX = FAILOVER_MAX.plusSeconds(5);
    private static final int ROUNDS = 3;
    private static final long CREATE_PAUSE_MS = 50;

    @TempDir
    Path dir;

    private ClusterHarness cluster;
    /** What the creator's failed CreateTopics calls threw since the last round (for the failure message). */
    private final java.util.Queue<String> creatorFailures = new java.util.concurrent.ConcurrentLinkedQueue<>();

    @BeforeEach
    void start() throws Exception {
        cluster = ClusterHarness.combined(dir, 3); // assigned first: a failed start still closes it and prints its logs
        cluster.start();
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void killingTheActiveControllerElectsANewOneAndLosesNoAcknowledgedTopic() throws Exception {
        Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        AtomicBoolean running = new AtomicBoolean(true);
        Thread creator = new Thread(() -> createTopicsUntilStopped(acknowledged, running), "topic-creator");
        creator.setDaemon(true);
        creator.start();
        try {
            ClusterHarness.waitUntil(() -> acknowledged.size() >= 3, DEADLINE, "the first topics are created");
            for (int round = 1; round <= ROUNDS; round++) {
                int killed = cluster.awaitActiveController(DEADLINE);
                int createdBefore = acknowledged.size();
                creatorFailures.clear();
                long killedAtNanos = System.nanoTime();
                cluster.node(killed).kill9();
                int[] elected = {-1};
                ClusterHarness.waitUntil(() -> {
                    QuorumInfo quorum = cluster.describeQuorum();
                    elected[0] = quorum.leaderId();
                    return elected[0] >= 0 && elected[0] != killed && quorum.voters().size() == 3;
                }, Duration.ofSeconds(60), "a voter other than the killed node " + killed + " leads the three-voter quorum");
                Duration failover = Duration.ofNanos(System.nanoTime() - killedAtNanos);
                System.out.printf("round %d: killed active controller %d; node %d leads after %d ms%n", round, killed, elected[0],
                    failover.toMillis());
                assertThat(failover).as("failover time in round %d", round).isLessThan(FAILOVER_MAX);
                long resumeDeadlineNanos = killedAtNanos + RESUME_MAX.toNanos();
                try {
                    ClusterHarness.waitUntil(() -> acknowledged.size() > createdBefore,
                        Duration.ofNanos(Math.max(0, resumeDeadlineNanos - System.nanoTime())),
                        "a topic is created within " + RESUME_MAX + " of the kill in round " + round);
                } catch (AssertionError e) {
                    throw new AssertionError(e.getMessage() + "; the creator's failures since the kill: " + creatorFailures, e);
                }
                creatorFailures.clear();
                System.out.printf("round %d: topics are created again %d ms after the kill%n", round,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAtNanos));
                cluster.node(killed).start();
                // The next round needs both survivors of its kill to hold the log: wait until the restarted voter caught up.
                ClusterHarness.waitUntil(() -> {
                    QuorumInfo quorum = cluster.describeQuorum();
                    return quorum.voters().stream().filter(voter -> voter.replicaId() == killed)
                        .anyMatch(voter -> voter.logEndOffset() >= quorum.highWatermark());
                }, DEADLINE, "the restarted node " + killed + " catches up with the quorum's high watermark");
            }
        } finally {
            running.set(false);
            creator.join(TimeUnit.SECONDS.toMillis(40));
        }
        assertThat(creator.isAlive()).as("the creator thread stopped").isFalse();
        System.out.println("topics acknowledged: " + acknowledged.size());
        for (ClusterHarness.Node node : cluster.nodes()) {
            try (Admin admin = ClusterHarness.admin(node.bootstrap())) {
                ClusterHarness.waitUntil(() -> admin.listTopics().names().get(10, TimeUnit.SECONDS).containsAll(acknowledged), DEADLINE,
                    node + " lists every one of the " + acknowledged.size() + " acknowledged topics");
            }
        }
    }

    /**
     * One CreateTopics per topic through every node's bootstrap; a topic whose creation failed
     * (the controller died mid-request: an unknown outcome) is retried under the same name, and
     * counts as acknowledged only when a CreateTopics for it returns success. TopicExists on a
     * retry means an earlier attempt committed; it is not counted, since no client was told so.
     */
    private void createTopicsUntilStopped(Set<String> acknowledged, AtomicBoolean running) {
        int next = 0;
        try (Admin admin = ClusterHarness.admin(cluster.bootstrapServers())) {
            while (running.get()) {
                String topic = "failover-" + next;
                try {
                    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(15, TimeUnit.SECONDS);
                    acknowledged.add(topic);
                    next++;
                    // Paced, so that three rounds create a few hundred topics, not thousands of partition directories.
                    Thread.sleep(CREATE_PAUSE_MS);
                } catch (ExecutionException e) {
                    creatorFailures.add(java.time.LocalTime.now() + " " + topic + ": " + e.getCause());
                    if (e.getCause() instanceof TopicExistsException) {
                        next++;
                    }
                } catch (java.util.concurrent.TimeoutException e) {
                    // unknown outcome: retry the same name
                    creatorFailures.add(java.time.LocalTime.now() + " " + topic + ": no answer in 15 s");
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }
}
