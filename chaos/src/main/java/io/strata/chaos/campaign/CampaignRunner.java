package io.strata.chaos.campaign;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.strata.chaos.checker.Anomaly;
import io.strata.chaos.checker.Checker;
import io.strata.chaos.cluster.ChaosCluster;
import io.strata.chaos.history.History;
import io.strata.chaos.history.HistoryWriter;
import io.strata.chaos.history.Operation;
import io.strata.chaos.nemesis.ChaosClusterControl;
import io.strata.chaos.nemesis.NemesisEvent;
import io.strata.chaos.nemesis.NemesisLog;
import io.strata.chaos.nemesis.NemesisSchedule;
import io.strata.chaos.nemesis.Nemeses;
import io.strata.chaos.nemesis.ScheduleClock;
import io.strata.chaos.workload.Recorder;
import io.strata.chaos.workload.TopicSpec;
import io.strata.chaos.workload.Workload;
import io.strata.chaos.workload.WorkloadContext;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One campaign run, in order:
 * <ol>
 *   <li>start a {@link ChaosCluster} in {@code runDir} and wait until every node is ready;</li>
 *   <li>create the workloads' topics with an admin client and wait for a leader and a full ISR everywhere;</li>
 *   <li>start the workloads, recording into {@code history.jsonl};</li>
 *   <li>run the {@link NemesisSchedule} for the duration ({@code nemesis.log});</li>
 *   <li>heal everything, restart dead nodes, wait until the cluster is ready and every partition has a leader;</li>
 *   <li>stop the workloads; drain every partition with both isolation levels ({@link Drainer});</li>
 *   <li>check the history ({@link Checker}) and write {@code anomalies.txt} and {@code summary.json};</li>
 *   <li>stop the cluster, keeping every node's log and data under {@code runDir/node-N}.</li>
 * </ol>
 * A step that fails is a harness error in the result (exit 2), never an anomaly; the cluster is closed and the
 * workloads stopped whatever happens.
 */
public final class CampaignRunner {
    private static final Logger log = LoggerFactory.getLogger(CampaignRunner.class);
    private static final Duration TOPICS_TIMEOUT = Duration.ofSeconds(60);
    private static final long POLL_MS = 250;

    private final CampaignConfig config;
    private final WorkloadFactory workloads;

    public CampaignRunner(CampaignConfig config, WorkloadFactory workloads) {
        this.config = config;
        this.workloads = workloads;
    }

    /**
     * Runs the campaign.
     *
     * @throws IllegalArgumentException before anything starts, for an unknown workload, two workloads sharing a
     *         topic or a run directory that is not empty
     */
    public CampaignResult run() throws IOException, InterruptedException {
        Path runDir = config.runDir().toAbsolutePath();
        List<Workload> created = createWorkloads();
        List<TopicPartition> partitions = partitions(created);
        prepare(runDir);
        long startNanos = System.nanoTime();
        Map<String, Long> durations = new LinkedHashMap<>();
        List<String> harnessErrors = new ArrayList<>();
        List<Workload> started = new ArrayList<>();
        List<Drainer.Result> drains = new ArrayList<>();
        boolean recovered = false;
        NemesisLog nemesisLog = NemesisLog.create(runDir.resolve("nemesis.log"));
        try (HistoryWriter history = HistoryWriter.create(runDir.resolve("history.jsonl"));
             ChaosCluster cluster = new ChaosCluster(config.run(), config.nodes(), runDir, config.jar(), config.jvmOptions(),
                 config.serverOverrides(), config.seed())) {
            Recorder recorder = Recorder.of(history);
            try {
                recovered = runCluster(runDir, cluster, recorder, created, started, partitions, nemesisLog, durations, drains, harnessErrors);
            } finally {
                stopAll(started); // before the history closes: stopping records the ops still in flight
            }
        } catch (RuntimeException | IOException e) {
            log.error("campaign run {} failed", config.run(), e);
            harnessErrors.add("run failed: " + e);
        } finally {
            nemesisLog.close();
        }
        return finish(runDir, startNanos, nemesisLog, drains, recovered, harnessErrors, durations);
    }

    private boolean runCluster(Path runDir, ChaosCluster cluster, Recorder recorder, List<Workload> created, List<Workload> started,
                               List<TopicPartition> partitions, NemesisLog nemesisLog, Map<String, Long> durations,
                               List<Drainer.Result> drains, List<String> harnessErrors) throws IOException, InterruptedException {
        boolean recovered;
        long phase = System.nanoTime();
        cluster.start();
        cluster.awaitReady(config.readyTimeout());
        try (Admin admin = Admin.create(adminProperties(cluster.bootstrapServers()))) {
            createTopics(admin, created);
            for (int i = 0; i < created.size(); i++) {
                Workload workload = created.get(i);
                Path workDir = Files.createDirectories(runDir.resolve("workloads").resolve(i + "-" + workload.name()));
                try {
                    workload.start(new WorkloadContext(cluster.bootstrapServers(), recorder, workloadSeed(i), workDir));
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("workload " + workload.name() + " did not start", e);
                }
                started.add(workload);
            }
            durations.put("startup", millisSince(phase));

            phase = System.nanoTime();
            try (ChaosClusterControl control = new ChaosClusterControl(cluster)) {
                if (config.nemeses().isEmpty()) {
                    Thread.sleep(config.duration().toMillis()); // a baseline run: the workloads alone for the duration
                    durations.put("faults", millisSince(phase));
                    phase = System.nanoTime();
                } else {
                    NemesisSchedule schedule = new NemesisSchedule(Nemeses.create(config.nemeses(), control, partitions),
                        config.schedule(), config.seed(), control, nemesisLog, ScheduleClock.SYSTEM);
                    schedule.run(config.duration());
                    durations.put("faults", millisSince(phase));
                    phase = System.nanoTime();
                    if (!schedule.healAll()) {
                        harnessErrors.add("the final heal had errors (nemesis.log)");
                    }
                }
            }
            recovered = recover(cluster, admin, partitions, harnessErrors);
            durations.put("recovery", millisSince(phase));

            phase = System.nanoTime();
            stopAll(started);
            durations.put("stop", millisSince(phase));

            phase = System.nanoTime();
            drains.addAll(new Drainer(cluster.bootstrapServers(), recorder, config.drainTimeout()).drainBoth(partitions));
            checkDrains(drains, harnessErrors);
            durations.put("drain", millisSince(phase));
        }
        return recovered;
    }

    private void checkDrains(List<Drainer.Result> drains, List<String> harnessErrors) {
        for (Drainer.Result drain : drains) {
            String isolation = drain.readCommitted() ? "read_committed" : "read_uncommitted";
            if (!drain.complete()) {
                harnessErrors.add("the " + isolation + " drain did not reach every end offset within " + config.drainTimeout());
            }
            if (drain.undecodable() > 0) {
                harnessErrors.add(drain.undecodable() + " records with undecodable values in the " + isolation + " drain");
            }
        }
    }

    private CampaignResult finish(Path runDir, long startNanos, NemesisLog nemesisLog, List<Drainer.Result> drains, boolean recovered,
                                  List<String> harnessErrors, Map<String, Long> durations) throws IOException {
        long phase = System.nanoTime();
        History history = History.read(runDir.resolve("history.jsonl"));
        List<Anomaly> anomalies = new Checker().check(history);
        durations.put("check", millisSince(phase));
        durations.put("total", millisSince(startNanos));
        CampaignResult result = new CampaignResult(runDir, config.seed(), config.nodes(), config.nemeses(), config.workloads(),
            countOps(history), anomalies, countEvents(nemesisLog), drains, recovered, harnessErrors, durations);
        writeAnomalies(runDir.resolve("anomalies.txt"), history, anomalies, harnessErrors);
        writeSummary(runDir.resolve("summary.json"), result);
        return result;
    }

    private List<Workload> createWorkloads() {
        List<Workload> created = new ArrayList<>();
        for (int i = 0; i < config.workloads().size(); i++) {
            created.add(workloads.create(config.workloads().get(i), workloadSeed(i)));
        }
        return created;
    }

    /** Each workload's seed: the run's, spread by its position, so two workloads of one run never share one. */
    private long workloadSeed(int index) {
        return config.seed() * 1_000_003L + index + 1;
    }

    private static List<TopicPartition> partitions(List<Workload> workloads) {
        List<TopicPartition> partitions = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (Workload workload : workloads) {
            for (TopicSpec topic : workload.topics()) {
                if (!names.add(topic.name())) {
                    throw new IllegalArgumentException("two workloads need topic " + topic.name() + "; each needs its own");
                }
                for (int p = 0; p < topic.partitions(); p++) {
                    partitions.add(new TopicPartition(topic.name(), p));
                }
            }
        }
        return partitions;
    }

    private void createTopics(Admin admin, List<Workload> created) throws InterruptedException {
        List<NewTopic> topics = new ArrayList<>();
        for (Workload workload : created) {
            for (TopicSpec spec : workload.topics()) {
                topics.add(new NewTopic(spec.name(), spec.partitions(), spec.replicationFactor()).configs(spec.configs()));
            }
        }
        long deadlineNanos = System.nanoTime() + TOPICS_TIMEOUT.toNanos();
        try {
            admin.createTopics(topics).all().get(TOPICS_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("cannot create the workload topics " + topics, e);
        }
        Set<String> names = new HashSet<>();
        topics.forEach(topic -> names.add(topic.name()));
        awaitPartitions(admin, names, true, deadlineNanos);
    }

    /** After the final heal: every node ready, every partition led (full ISR not required: a restarted node may still catch up). */
    private boolean recover(ChaosCluster cluster, Admin admin, List<TopicPartition> partitions, List<String> harnessErrors)
            throws InterruptedException {
        try {
            cluster.awaitReady(config.readyTimeout());
            Set<String> topics = new HashSet<>();
            partitions.forEach(tp -> topics.add(tp.topic()));
            awaitPartitions(admin, topics, false, System.nanoTime() + config.readyTimeout().toNanos());
            return true;
        } catch (IllegalStateException e) {
            harnessErrors.add("the cluster did not recover after the final heal: " + e.getMessage().lines().findFirst().orElse(""));
            log.error("the cluster did not recover", e);
            return false;
        }
    }

    /** Waits until every partition of {@code topics} has a leader (and, when {@code fullIsr}, every replica in its ISR). */
    private static void awaitPartitions(Admin admin, Set<String> topics, boolean fullIsr, long deadlineNanos) throws InterruptedException {
        Object last = null;
        while (System.nanoTime() - deadlineNanos < 0) {
            try {
                Map<String, TopicDescription> descriptions = admin.describeTopics(topics).allTopicNames().get(5, TimeUnit.SECONDS);
                boolean ready = true;
                for (TopicDescription description : descriptions.values()) {
                    for (TopicPartitionInfo info : description.partitions()) {
                        ready &= info.leader() != null && info.leader().id() >= 0
                            && (!fullIsr || info.isr().size() == info.replicas().size());
                    }
                }
                if (ready) {
                    return;
                }
                last = descriptions;
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                last = e; // a node may still be starting: ask again until the deadline
            }
            Thread.sleep(POLL_MS);
        }
        throw new IllegalStateException("partitions of " + topics + " not " + (fullIsr ? "fully replicated" : "led") + " in time; last: " + last);
    }

    private void stopAll(List<Workload> started) throws InterruptedException {
        for (Workload workload : started) {
            try {
                workload.stop(config.workloadStopTimeout());
            } catch (RuntimeException e) {
                log.error("workload {} did not stop cleanly", workload.name(), e);
            }
        }
    }

    private static Map<String, Map<String, Long>> countOps(History history) {
        Map<String, Map<String, Long>> counts = new TreeMap<>();
        for (Operation operation : history.operations()) {
            counts.computeIfAbsent(operation.function().jsonName(), f -> new TreeMap<>())
                .merge(operation.outcome().jsonName(), 1L, Long::sum);
        }
        return counts;
    }

    private static Map<String, Long> countEvents(NemesisLog nemesisLog) {
        Map<String, Long> counts = new TreeMap<>();
        for (NemesisEvent.Type type : NemesisEvent.Type.values()) {
            counts.put(type.name().toLowerCase(Locale.ROOT), nemesisLog.count(type));
        }
        return counts;
    }

    private static void writeAnomalies(Path file, History history, List<Anomaly> anomalies, List<String> harnessErrors) throws IOException {
        StringBuilder text = new StringBuilder();
        for (Anomaly anomaly : anomalies) {
            text.append(anomaly).append('\n');
        }
        for (String error : harnessErrors) {
            text.append("HARNESS ").append(error).append('\n');
        }
        text.append(history.ops().size()).append(" ops, ").append(anomalies.size()).append(" anomalies\n");
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    private static void writeSummary(Path file, CampaignResult result) throws IOException {
        Map<String, Long> anomaliesByKind = new TreeMap<>();
        for (Anomaly anomaly : result.anomalies()) {
            anomaliesByKind.merge(anomaly.kind().name(), 1L, Long::sum);
        }
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("seed", result.seed());
        summary.put("nodes", result.nodes());
        summary.put("nemeses", result.nemeses());
        summary.put("workloads", result.workloads());
        summary.put("ops", result.ops());
        summary.put("anomalies", result.anomalies().size());
        summary.put("anomaliesByKind", anomaliesByKind);
        summary.put("nemesisEvents", result.nemesisEvents());
        summary.put("drains", result.drains());
        summary.put("recovered", result.recovered());
        summary.put("harnessErrors", result.harnessErrors());
        summary.put("durationsMs", result.durationsMs());
        summary.put("exitCode", result.exitCode());
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), summary);
    }

    private static void prepare(Path runDir) throws IOException {
        if (Files.exists(runDir)) {
            try (Stream<Path> entries = Files.list(runDir)) {
                if (entries.findAny().isPresent()) {
                    throw new IllegalArgumentException("run directory is not empty: " + runDir + " (each run needs a fresh one)");
                }
            }
        }
        Files.createDirectories(runDir);
    }

    private static Properties adminProperties(String bootstrap) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(AdminClientConfig.CLIENT_ID_CONFIG, "chaos-campaign");
        properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "4000");
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000");
        properties.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "2000");
        properties.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "2000");
        return properties;
    }

    private static long millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }
}
