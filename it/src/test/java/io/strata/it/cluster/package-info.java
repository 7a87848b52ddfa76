/**
 * Multi-node Strata clusters of real processes, and the tests that run against them.
 *
 * <h2>The harness</h2>
 * {@link io.strata.it.cluster.ClusterHarness} starts N nodes, each a child JVM running
 * {@link io.strata.it.ServerProcessMain} ({@code -Xmx256m}, the test JVM's class path), under a
 * test's {@code @TempDir}:
 * <ul>
 *   <li>{@code ClusterHarness.combined(dir, 3)}: every node {@code process.roles=broker,controller}
 *       and a voter, with a PLAINTEXT and a CONTROLLER listener;</li>
 *   <li>{@code ClusterHarness.split(dir, 3, 3)}: controller-only voters 1-3 (CONTROLLER only) and
 *       broker-only nodes 4-6 (PLAINTEXT only);</li>
 *   <li>{@code ClusterHarness.dynamicSplit(dir, 3, 1)}: the same layout as a dynamic quorum (KIP-853):
 *       {@code controller.quorum.bootstrap.servers} instead of voters, node 1 formatted
 *       {@code --standalone}, the other controllers {@code --no-initial-controllers} (observers until
 *       added), before the first start.</li>
 * </ul>
 * Ports are picked once, before the first start, and kept across restarts; the voters are
 * {@code id@127.0.0.1:port}; all nodes share a {@code cluster.id}. Timings are shortened where
 * Kafka allows ({@code broker.session.timeout.ms=3000}, {@code broker.heartbeat.interval.ms=500});
 * the quorum keeps Kafka's election (1 s) and fetch (2 s) timeouts. The internal topics have 6
 * partitions and RF=1. A node is ready when it prints {@code PORT <port>}; {@code start()}
 * launches every node before it waits for any, since a quorum member may need a majority to
 * finish starting.
 *
 * <p>Per node ({@code cluster.node(id)}): {@code kill9()} (SIGKILL: {@code Process.destroyForcibly}
 * on Linux), {@code stop()} (closes the child's stdin: a clean, controlled shutdown),
 * {@code start()}, {@code restart()}, {@code isAlive()}, {@code bootstrap()}, {@code logFile()}.
 * Cluster-wide: {@code bootstrapServers()}, {@code liveBootstrapServers()},
 * {@code controllerBootstrapServers()} (KIP-919 {@code bootstrap.controllers}), {@code admin()},
 * {@code describeQuorum()} (through a broker), {@code describeQuorumThroughControllers()},
 * {@code awaitActiveController(timeout)}, and {@code ClusterHarness.waitUntil(condition, timeout,
 * description)}, the one way these tests wait: it polls, and fails at its deadline naming what it
 * waited for and the condition's last error. {@code close()} kills every node the harness started,
 * and nothing else.
 *
 * <p>Each node's stdout and stderr go to {@code DIR/node-ID/server.log} (appended across
 * restarts, io.strata at INFO). Tests carry {@code @ExtendWith(PrintClusterLogsOnFailure.class)}:
 * when a test or its set-up fails, the tail of every node's log is printed and attached to the
 * failure, before the cluster is closed and the directory deleted.
 *
 * <h2>The tests</h2>
 * All are tagged {@code cluster}; each bounds every wait. {@code ThreeNodeClusterTest} (quorum,
 * metadata on every node, leaders spread, produce/consume with a group, transactions),
 * {@code ControllerFailoverTest} (kill -9 of the active controller, three times, while topics are
 * created), {@code BrokerFencingTest} (a killed broker is fenced, its partitions go offline and
 * come back), {@code SplitRolesClusterTest} (3 controllers + 3 brokers, kafka-metadata-quorum,
 * kcat), {@code DynamicQuorumClusterTest} (controllers added to a standalone quorum with
 * Admin.addRaftVoter, kafka-metadata-quorum, kill -9 of the first leader, removeRaftVoter),
 * {@code ClientFailoverTest} (kcat, kafkajs and a classic-group Java consumer across kill -9 and
 * restart of an RF 3 partition's leader; third-party clients run through {@code ClientProcess}),
 * {@code FollowerFetchingClusterTest} (KIP-392: racked nodes, kcat and a Java consumer with
 * {@code client.rack} read from their rack's follower, also while the leader is SIGSTOPped).
 */
package io.strata.it.cluster;
