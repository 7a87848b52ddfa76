import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Consumer-group load for bench/group-bench.sh: the same client code against Apache Kafka and
 * Strata. Each command prints one {@code RESULT key=value ...} line on stdout (the script stores
 * it verbatim) and exits non-zero if the measurement failed.
 *
 * <pre>
 *   BenchGroups rebalance BOOTSTRAP TOPIC PARTITIONS CONSUMERS PROTOCOL GROUP TIMEOUT_S BROKER_PID
 *   BenchGroups commit BOOTSTRAP TOPIC PARTITIONS_PER_COMMIT GROUPS GROUP_PREFIX ROUNDS CONNECTIONS IN_FLIGHT BROKER_PID
 *   BenchGroups report RUNS_TSV MEMORY_TSV
 * </pre>
 *
 * <b>rebalance</b>: CONSUMERS KafkaConsumers (PROTOCOL classic, with the default assignors, or
 * consumer, KIP-848 with the broker's default assignor), each on its own thread, are created
 * first; then a latch releases all threads at once and each subscribes to TOPIC and polls. The
 * clock starts at the release. A {@link ConsumerRebalanceListener} records when each consumer's
 * assignment last changed; the group is done when every consumer holds exactly PARTITIONS /
 * CONSUMERS partitions, together all PARTITIONS, and (classic) all in the same generation. The
 * rebalance time is the latest of those change times minus the release: the monitor's polling
 * interval does not enter the figure. {@code last_poll_to_assigned_ms} starts instead at the
 * latest first {@code poll()} of any consumer (the last JoinGroup / first heartbeat leaves then),
 * so it is the broker's part: with the classic protocol it includes group.initial.rebalance.delay.ms.
 *
 * <b>commit</b>: GROUPS distinct groups (GROUP_PREFIX-00000 ...) commit offsets for
 * PARTITIONS_PER_COMMIT partitions of TOPIC each, one OffsetCommit request per group (generation
 * -1, no member: groups without members, as Admin.alterConsumerGroupOffsets commits), over
 * CONNECTIONS connections with up to IN_FLIGHT requests pipelined on each, from one NIO thread.
 * Requests are built and parsed by kafka-clients' own request classes at the highest version both
 * sides support that names topics (at most 9). FindCoordinator for every group comes first and is
 * not timed. ROUNDS rounds: the first creates the groups, later ones update them. Per round:
 * commits/s, latency from writing a request to parsing its response (p50, p99, p99.9, max) and
 * the broker's CPU seconds (utime+stime of BROKER_PID from /proc).
 *
 * <b>report</b>: medians per row and broker, and Strata/Kafka ratios, as Markdown.
 */
public final class BenchGroups {

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            usage();
        }
        switch (args[0]) {
            case "rebalance" -> {
                if (args.length != 9) {
                    usage();
                }
                System.exit(rebalance(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]), args[5],
                    args[6], Integer.parseInt(args[7]), Long.parseLong(args[8])));
            }
            case "commit" -> {
                if (args.length != 10) {
                    usage();
                }
                System.exit(commit(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]), args[5],
                    Integer.parseInt(args[6]), Integer.parseInt(args[7]), Integer.parseInt(args[8]), Long.parseLong(args[9])));
            }
            case "report" -> {
                if (args.length != 3) {
                    usage();
                }
                report(Path.of(args[1]), Path.of(args[2]));
            }
            default -> usage();
        }
    }

    private static void usage() {
        System.err.println("usage: BenchGroups rebalance BOOTSTRAP TOPIC PARTITIONS CONSUMERS classic|consumer GROUP TIMEOUT_S BROKER_PID\n"
            + "       BenchGroups commit BOOTSTRAP TOPIC PARTITIONS_PER_COMMIT GROUPS GROUP_PREFIX ROUNDS CONNECTIONS IN_FLIGHT BROKER_PID\n"
            + "       BenchGroups report RUNS_TSV MEMORY_TSV");
        System.exit(2);
    }

    static String cpuSeconds(long ticksBefore, long ticksAfter) {
        return ticksBefore < 0 || ticksAfter < 0 ? "" : BenchRuns.fmt((ticksAfter - ticksBefore) / (double) BenchRuns.CLOCK_TICKS_PER_SECOND);
    }

    // --- rebalance -------------------------------------------------------------------------------

    /** One consumer thread's view, published for the monitor. */
    static final class Member {
        final int index;
        volatile long firstPollNanos;
        /** The assignment after the last change and when that change happened. */
        final AtomicReference<Snapshot> snapshot = new AtomicReference<>(new Snapshot(Set.of(), -1, 0));
        volatile int assignmentChanges;
        volatile Throwable failure;

        Member(int index) {
            this.index = index;
        }
    }

    record Snapshot(Set<TopicPartition> assignment, int generation, long changedNanos) { }

    static int rebalance(String bootstrap, String topic, int partitions, int consumerCount, String protocol, String groupId,
                         int timeoutSeconds, long brokerPid) throws InterruptedException {
        if (partitions % consumerCount != 0) {
            throw new IllegalArgumentException("partitions must be a multiple of consumers: partitions=" + partitions
                + " consumers=" + consumerCount);
        }
        if (!protocol.equals("classic") && !protocol.equals("consumer")) {
            throw new IllegalArgumentException("protocol must be classic or consumer: protocol=" + protocol);
        }
        int perConsumer = partitions / consumerCount;
        List<Member> members = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        CountDownLatch created = new CountDownLatch(consumerCount);
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean stop = new AtomicBoolean();
        for (int i = 0; i < consumerCount; i++) {
            Member member = new Member(i);
            members.add(member);
            Thread thread = new Thread(() -> runConsumer(bootstrap, topic, protocol, groupId, member, created, start, stop),
                "consumer-" + i);
            threads.add(thread);
            thread.start();
        }
        if (!created.await(120, TimeUnit.SECONDS)) {
            System.err.println("consumers not created in 120 s");
            return 1;
        }
        long cpuBefore = BenchRuns.cpuTicks(brokerPid);
        long startNanos = System.nanoTime();
        long startEpochMs = System.currentTimeMillis();
        start.countDown();

        long deadline = startNanos + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        Long doneNanos = null;
        long firstAssignedNanos = 0;
        int generation = -1;
        while (System.nanoTime() < deadline) {
            Thread.sleep(5);
            Set<TopicPartition> union = new HashSet<>();
            Set<Integer> generations = new HashSet<>();
            long latestChange = 0;
            long earliestChange = Long.MAX_VALUE;
            boolean complete = true;
            for (Member member : members) {
                if (member.failure != null) {
                    System.err.println("consumer " + member.index + " failed: " + member.failure);
                    stop.set(true);
                    return 1;
                }
                Snapshot snapshot = member.snapshot.get();
                if (snapshot.assignment().size() != perConsumer) {
                    complete = false;
                    break;
                }
                union.addAll(snapshot.assignment());
                generations.add(snapshot.generation());
                latestChange = Math.max(latestChange, snapshot.changedNanos());
                earliestChange = Math.min(earliestChange, snapshot.changedNanos());
            }
            // With the consumer protocol every member has its own epoch; only classic generations must agree.
            if (complete && union.size() == partitions && (protocol.equals("consumer") || generations.size() == 1)) {
                doneNanos = latestChange;
                firstAssignedNanos = earliestChange;
                generation = generations.stream().mapToInt(Integer::intValue).max().orElse(-1);
                break;
            }
        }
        long cpuAfter = BenchRuns.cpuTicks(brokerPid);
        // Stopping closes the consumers, whose revocations change the snapshots: read them before.
        int changes = 0;
        int assigned = 0;
        for (Member member : members) {
            changes += member.assignmentChanges;
            assigned += member.snapshot.get().assignment().size();
        }
        stop.set(true);
        for (Thread thread : threads) {
            thread.join(60_000);
        }
        if (doneNanos == null) {
            System.err.println("group not fully assigned in " + timeoutSeconds + " s: " + assigned + " of " + partitions
                + " partitions held");
            return 1;
        }
        long lastFirstPoll = members.stream().mapToLong(m -> m.firstPollNanos).max().orElseThrow();
        double doneEpochMs = startEpochMs + (doneNanos - startNanos) / 1e6;
        System.out.printf(Locale.ROOT, "RESULT rebalance_ms=%s last_poll_to_assigned_ms=%s last_first_poll_ms=%s "
                + "final_assignments_spread_ms=%s generation=%d assignment_changes=%d broker_cpu_s=%s%s%n",
            BenchRuns.fmt((doneNanos - startNanos) / 1e6), BenchRuns.fmt((doneNanos - lastFirstPoll) / 1e6), BenchRuns.fmt((lastFirstPoll - startNanos) / 1e6),
            BenchRuns.fmt((doneNanos - firstAssignedNanos) / 1e6), generation, changes, cpuSeconds(cpuBefore, cpuAfter),
            protocol.equals("classic") ? classicMilestones(generation, doneEpochMs) : "");
        return 0;
    }

    /**
     * From the classic consumers' AbstractCoordinator log (the file named by -Dbench.groups.log,
     * epoch-ms timestamps): when the last JoinGroup of the final generation went out and when the
     * first response to it came back (the broker answers every member's JoinGroup at once when the
     * join phase ends, i.e. after group.initial.rebalance.delay.ms), relative to full assignment.
     */
    private static String classicMilestones(int generation, double doneEpochMs) {
        String path = System.getProperty("bench.groups.log");
        if (path == null) {
            return "";
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of(path));
        } catch (IOException e) {
            return "";
        }
        String joined = "Successfully joined group with generation Generation{generationId=" + generation + ",";
        long firstJoinResponse = Long.MAX_VALUE;
        for (String line : lines) {
            if (line.contains(joined) && epochMsOf(line) >= 0) {
                firstJoinResponse = Math.min(firstJoinResponse, epochMsOf(line));
            }
        }
        if (firstJoinResponse == Long.MAX_VALUE) {
            return "";
        }
        long lastJoinSent = Long.MIN_VALUE;
        for (String line : lines) {
            long epochMs = epochMsOf(line);
            if (line.contains("(Re-)joining group") && epochMs >= 0 && epochMs <= firstJoinResponse) {
                lastJoinSent = Math.max(lastJoinSent, epochMs);
            }
        }
        return " last_join_sent_to_assigned_ms=" + (lastJoinSent == Long.MIN_VALUE ? "" : BenchRuns.fmt(doneEpochMs - lastJoinSent))
            + " join_phase_end_to_assigned_ms=" + BenchRuns.fmt(doneEpochMs - firstJoinResponse);
    }

    /** The leading epoch-ms timestamp of a log line, or -1 for a line without one (a stack trace). */
    private static long epochMsOf(String line) {
        int space = line.indexOf(' ');
        try {
            return space > 0 ? Long.parseLong(line.substring(0, space)) : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static void runConsumer(String bootstrap, String topic, String protocol, String groupId, Member member,
                                    CountDownLatch created, CountDownLatch start, AtomicBoolean stop) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, groupId + "-" + member.index);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        KafkaConsumer<byte[], byte[]> consumer;
        try {
            consumer = new KafkaConsumer<>(props);
        } catch (RuntimeException e) {
            member.failure = e;
            created.countDown();
            return;
        }
        try (consumer) {
            created.countDown();
            start.await();
            consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    publish();
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    publish();
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    publish();
                }

                private void publish() {
                    // Called on this consumer's thread inside poll(), after the assignment changed.
                    member.snapshot.set(new Snapshot(Set.copyOf(consumer.assignment()), consumer.groupMetadata().generationId(),
                        System.nanoTime()));
                    member.assignmentChanges++;
                }
            });
            member.firstPollNanos = System.nanoTime();
            while (!stop.get()) {
                consumer.poll(Duration.ofMillis(50));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            member.failure = e;
        }
    }

    // --- commit ----------------------------------------------------------------------------------

    /** One broker connection of the commit load: a non-blocking channel and its requests awaiting a response. */
    static final class Connection {
        final SocketChannel channel;
        final ArrayDeque<ByteBuffer> unwritten = new ArrayDeque<>();
        final Map<Integer, InFlight> inFlight = new HashMap<>();
        final ByteBuffer sizeBuffer = ByteBuffer.allocate(4);
        ByteBuffer body;

        Connection(SocketChannel channel) {
            this.channel = channel;
        }
    }

    record InFlight(RequestHeader header, long sentNanos, int groupIndex) { }

    /** The commit client: every request of a round goes out from one thread over the connections. */
    static final class CommitClient implements AutoCloseable {
        private final Selector selector;
        private final List<Connection> connections = new ArrayList<>();
        private int nextCorrelationId = 1;
        short offsetCommitVersion;
        short findCoordinatorVersion;

        CommitClient(String bootstrap, int connectionCount) throws IOException {
            String[] hostPort = bootstrap.split(":");
            InetSocketAddress address = new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]));
            selector = Selector.open();
            for (int i = 0; i < connectionCount; i++) {
                SocketChannel channel = SocketChannel.open(address);
                channel.socket().setTcpNoDelay(true);
                channel.configureBlocking(false);
                Connection connection = new Connection(channel);
                channel.register(selector, SelectionKey.OP_READ, connection);
                connections.add(connection);
            }
        }

        List<Connection> connections() {
            return connections;
        }

        /** Negotiates versions on the first connection: ApiVersions v3, answered at any version. */
        void negotiate() throws IOException {
            AbstractResponse response = roundTrip(connections.get(0), new ApiVersionsRequest.Builder().build((short) 3));
            ApiVersionsResponseData data = ((ApiVersionsResponse) response).data();
            if (data.errorCode() != 0) {
                throw new IOException("ApiVersions failed: " + Errors.forCode(data.errorCode()));
            }
            offsetCommitVersion = pick(data, ApiKeys.OFFSET_COMMIT, (short) 9);
            findCoordinatorVersion = pick(data, ApiKeys.FIND_COORDINATOR, ApiKeys.FIND_COORDINATOR.latestVersion());
        }

        private static short pick(ApiVersionsResponseData data, ApiKeys api, short clientMax) {
            ApiVersionsResponseData.ApiVersion range = data.apiKeys().find(api.id);
            if (range == null) {
                throw new IllegalStateException("the broker does not support " + api);
            }
            return (short) Math.min(range.maxVersion(), clientMax);
        }

        /** One request on one connection, waiting for its response (set-up only, not timed). */
        AbstractResponse roundTrip(Connection connection, AbstractRequest request) throws IOException {
            RequestHeader header = send(connection, request, -1);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                List<Completed> done = poll(100);
                for (Completed completed : done) {
                    if (completed.inFlight().header().correlationId() == header.correlationId()) {
                        return completed.response();
                    }
                }
            }
            throw new IOException("no response to " + request.apiKey() + " in 30 s");
        }

        RequestHeader send(Connection connection, AbstractRequest request, int groupIndex) throws IOException {
            RequestHeader header = new RequestHeader(request.apiKey(), request.version(), "bench-groups", nextCorrelationId++);
            ByteBuffer body = request.serializeWithHeader(header);
            ByteBuffer frame = ByteBuffer.allocate(4 + body.remaining());
            frame.putInt(body.remaining()).put(body).flip();
            connection.inFlight.put(header.correlationId(), new InFlight(header, System.nanoTime(), groupIndex));
            connection.unwritten.add(frame);
            flush(connection);
            return header;
        }

        private void flush(Connection connection) throws IOException {
            while (!connection.unwritten.isEmpty()) {
                ByteBuffer frame = connection.unwritten.peek();
                connection.channel.write(frame);
                if (frame.hasRemaining()) {
                    break;
                }
                connection.unwritten.poll();
            }
            SelectionKey key = connection.channel.keyFor(selector);
            key.interestOps(SelectionKey.OP_READ | (connection.unwritten.isEmpty() ? 0 : SelectionKey.OP_WRITE));
        }

        record Completed(InFlight inFlight, AbstractResponse response, long receivedNanos) { }

        /** Waits up to timeoutMs for I/O and returns the responses that arrived. */
        List<Completed> poll(long timeoutMs) throws IOException {
            List<Completed> completed = new ArrayList<>();
            selector.select(timeoutMs);
            for (SelectionKey key : selector.selectedKeys()) {
                Connection connection = (Connection) key.attachment();
                if (key.isWritable()) {
                    flush(connection);
                }
                if (key.isReadable()) {
                    read(connection, completed);
                }
            }
            selector.selectedKeys().clear();
            return completed;
        }

        private void read(Connection connection, List<Completed> completed) throws IOException {
            while (true) {
                if (connection.body == null) {
                    if (connection.channel.read(connection.sizeBuffer) < 0) {
                        throw new IOException("the broker closed a connection");
                    }
                    if (connection.sizeBuffer.hasRemaining()) {
                        return;
                    }
                    int size = connection.sizeBuffer.flip().getInt();
                    connection.sizeBuffer.clear();
                    if (size < 4 || size > 100 << 20) {
                        throw new IOException("bad response size: size=" + size);
                    }
                    connection.body = ByteBuffer.allocate(size);
                }
                if (connection.channel.read(connection.body) < 0) {
                    throw new IOException("the broker closed a connection");
                }
                if (connection.body.hasRemaining()) {
                    return;
                }
                ByteBuffer body = connection.body.flip();
                connection.body = null;
                long now = System.nanoTime();
                int correlationId = body.getInt(0);
                InFlight inFlight = connection.inFlight.remove(correlationId);
                if (inFlight == null) {
                    throw new IOException("response with unknown correlation id " + correlationId);
                }
                completed.add(new Completed(inFlight, AbstractResponse.parseResponse(body, inFlight.header()), now));
            }
        }

        @Override
        public void close() throws IOException {
            for (Connection connection : connections) {
                connection.channel.close();
            }
            selector.close();
        }
    }

    static String groupId(String prefix, int index) {
        return String.format(Locale.ROOT, "%s-%05d", prefix, index);
    }

    static int commit(String bootstrap, String topic, int partitionsPerCommit, int groups, String prefix, int rounds,
                      int connectionCount, int inFlightPerConnection, long brokerPid) throws IOException {
        try (CommitClient client = new CommitClient(bootstrap, connectionCount)) {
            client.negotiate();
            findCoordinators(client, groups, prefix);
            List<String> results = new ArrayList<>();
            for (int round = 1; round <= rounds; round++) {
                String result = commitRound(client, topic, partitionsPerCommit, groups, prefix, round, inFlightPerConnection, brokerPid);
                if (result == null) {
                    return 1;
                }
                System.err.println("round " + round + ": " + result);
                results.add(result);
            }
            StringBuilder line = new StringBuilder("RESULT groups=" + groups + " partitions_per_commit=" + partitionsPerCommit
                + " connections=" + connectionCount + " in_flight_per_connection=" + inFlightPerConnection
                + " offset_commit_version=" + client.offsetCommitVersion
                + " find_coordinator_version=" + client.findCoordinatorVersion);
            for (int round = 1; round <= rounds; round++) {
                for (String pair : results.get(round - 1).split(" ")) {
                    line.append(" r").append(round).append('_').append(pair);
                }
            }
            System.out.println(line);
        }
        return 0;
    }

    /** FindCoordinator for every group (batched from v4), retried until each has a coordinator: the first one creates __consumer_offsets. */
    private static void findCoordinators(CommitClient client, int groups, String prefix) throws IOException {
        List<String> pending = new ArrayList<>();
        for (int i = 0; i < groups; i++) {
            pending.add(groupId(prefix, i));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Connection connection = client.connections().get(0);
        while (!pending.isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new IOException(pending.size() + " groups have no coordinator after 60 s, e.g. " + pending.get(0));
            }
            List<String> retry = new ArrayList<>();
            int batch = client.findCoordinatorVersion >= 4 ? 1000 : 1;
            for (int from = 0; from < pending.size(); from += batch) {
                List<String> keys = pending.subList(from, Math.min(pending.size(), from + batch));
                FindCoordinatorRequestData data = new FindCoordinatorRequestData().setKeyType((byte) 0);
                if (client.findCoordinatorVersion >= 4) {
                    data.setCoordinatorKeys(new ArrayList<>(keys));
                } else {
                    data.setKey(keys.get(0));
                }
                FindCoordinatorResponse response = (FindCoordinatorResponse) client.roundTrip(connection,
                    new FindCoordinatorRequest.Builder(data).build(client.findCoordinatorVersion));
                if (client.findCoordinatorVersion >= 4) {
                    for (FindCoordinatorResponseData.Coordinator coordinator : response.data().coordinators()) {
                        if (coordinator.errorCode() != 0) {
                            retry.add(coordinator.key());
                        }
                    }
                } else if (response.data().errorCode() != 0) {
                    retry.add(keys.get(0));
                }
            }
            pending = retry;
            if (!pending.isEmpty()) {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException(e);
                }
            }
        }
    }

    /** One round of commits for every group; returns "key=value ..." or null after printing why it failed. */
    private static String commitRound(CommitClient client, String topic, int partitionsPerCommit, int groups, String prefix,
                                      int round, int inFlightPerConnection, long brokerPid) throws IOException {
        long[] latencyNanos = new long[groups];
        int next = 0;
        int done = 0;
        int failedCommits = 0;
        Map<String, Integer> errors = new LinkedHashMap<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        long cpuBefore = BenchRuns.cpuTicks(brokerPid);
        long clientCpuBefore = clientCpuNanos();
        long startNanos = System.nanoTime();
        while (done < groups) {
            for (Connection connection : client.connections()) {
                while (next < groups && connection.inFlight.size() < inFlightPerConnection) {
                    client.send(connection, offsetCommit(client.offsetCommitVersion, topic, partitionsPerCommit,
                        groupId(prefix, next), round), next);
                    next++;
                }
            }
            for (CommitClient.Completed completed : client.poll(100)) {
                OffsetCommitResponseData data = ((OffsetCommitResponse) completed.response()).data();
                boolean ok = true;
                int partitions = 0;
                for (OffsetCommitResponseData.OffsetCommitResponseTopic responseTopic : data.topics()) {
                    for (OffsetCommitResponseData.OffsetCommitResponsePartition partition : responseTopic.partitions()) {
                        partitions++;
                        if (partition.errorCode() != 0) {
                            ok = false;
                            errors.merge(Errors.forCode(partition.errorCode()).name(), 1, Integer::sum);
                        }
                    }
                }
                if (partitions != partitionsPerCommit) {
                    ok = false;
                    errors.merge("PARTITION_COUNT_" + partitions, 1, Integer::sum);
                }
                if (!ok) {
                    failedCommits++;
                }
                latencyNanos[completed.inFlight().groupIndex()] = completed.receivedNanos() - completed.inFlight().sentNanos();
                done++;
            }
            if (System.nanoTime() > deadline) {
                System.err.println("round " + round + ": only " + done + " of " + groups + " commits answered in 120 s");
                return null;
            }
        }
        long endNanos = System.nanoTime();
        long cpuAfter = BenchRuns.cpuTicks(brokerPid);
        long clientCpuAfter = clientCpuNanos();
        Arrays.sort(latencyNanos);
        double seconds = (endNanos - startNanos) / 1e9;
        String errorText = errors.isEmpty() ? "none" : errors.toString().replace(" ", "").replace("{", "").replace("}", "");
        return "wall_s=" + BenchRuns.fmt(seconds)
            + " commits_s=" + String.format(Locale.ROOT, "%.0f", groups / seconds)
            + " p50_ms=" + BenchRuns.fmt(percentile(latencyNanos, 0.50) / 1e6)
            + " p99_ms=" + BenchRuns.fmt(percentile(latencyNanos, 0.99) / 1e6)
            + " p999_ms=" + BenchRuns.fmt(percentile(latencyNanos, 0.999) / 1e6)
            + " max_ms=" + BenchRuns.fmt(latencyNanos[latencyNanos.length - 1] / 1e6)
            + " broker_cpu_s=" + cpuSeconds(cpuBefore, cpuAfter)
            + " client_cpu_s=" + BenchRuns.fmt((clientCpuAfter - clientCpuBefore) / 1e9)
            + " failed_commits=" + failedCommits
            + " errors=" + errorText;
    }

    private static long clientCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    }

    private static long percentile(long[] sorted, double quantile) {
        int index = (int) Math.ceil(quantile * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    private static AbstractRequest offsetCommit(short version, String topic, int partitions, String groupId, int round) {
        OffsetCommitRequestData.OffsetCommitRequestTopic requestTopic = new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(topic);
        for (int p = 0; p < partitions; p++) {
            requestTopic.partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                .setPartitionIndex(p)
                .setCommittedOffset(round * 1000L + p)
                .setCommittedMetadata(""));
        }
        OffsetCommitRequestData data = new OffsetCommitRequestData()
            .setGroupId(groupId)
            .setGenerationIdOrMemberEpoch(-1)
            .setMemberId("")
            .setTopics(new ArrayList<>(List.of(requestTopic)));
        return OffsetCommitRequest.Builder.forTopicNames(data).build(version);
    }

    // --- report ----------------------------------------------------------------------------------

    static void report(Path runsTsv, Path memoryTsv) throws IOException {
        List<BenchRuns.Run> runs = BenchRuns.readRuns(runsTsv);
        List<String> rows = runs.stream().map(BenchRuns.Run::row).distinct().toList();

        System.out.println("**Rebalance** (median of the runs; ms; ratio = Kafka / Strata, so above 1 means Strata is faster):");
        System.out.println();
        System.out.println("| Row | Kafka: release → all assigned | Strata | ratio K/S | Kafka: last JoinGroup sent → all assigned | Strata "
            + "| Kafka: join phase end → all assigned | Strata | ratio K/S | generation / assignment changes K | S | broker CPU-s K / S | runs ok K / S |");
        System.out.println("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (String row : rows) {
            if (!row.startsWith("rebalance")) {
                continue;
            }
            List<BenchRuns.Run> k = BenchRuns.select(runs, row, "kafka");
            List<BenchRuns.Run> s = BenchRuns.select(runs, row, "strata");
            Double kTotal = BenchRuns.median(k, "rebalance_ms");
            Double sTotal = BenchRuns.median(s, "rebalance_ms");
            // The classic rows know when the last JoinGroup went out (from the consumers' log); the
            // consumer-protocol rows fall back to the last consumer's first poll(), which sends its first heartbeat.
            String lastKey = k.stream().anyMatch(r -> r.number("last_join_sent_to_assigned_ms") != null)
                ? "last_join_sent_to_assigned_ms" : "last_poll_to_assigned_ms";
            Double kLast = BenchRuns.median(k, lastKey);
            Double sLast = BenchRuns.median(s, lastKey);
            Double kEnd = BenchRuns.median(k, "join_phase_end_to_assigned_ms");
            Double sEnd = BenchRuns.median(s, "join_phase_end_to_assigned_ms");
            System.out.println("| " + row + " | " + BenchRuns.show(kTotal, "%,.0f") + " | " + BenchRuns.show(sTotal, "%,.0f") + " | " + BenchRuns.ratio(kTotal, sTotal)
                + " | " + BenchRuns.show(kLast, "%,.0f") + " | " + BenchRuns.show(sLast, "%,.0f")
                + " | " + BenchRuns.show(kEnd, "%,.0f") + " | " + BenchRuns.show(sEnd, "%,.0f") + " | " + BenchRuns.ratio(kEnd, sEnd)
                + " | " + BenchRuns.show(BenchRuns.median(k, "generation"), "%.0f") + " / " + BenchRuns.show(BenchRuns.median(k, "assignment_changes"), "%.0f")
                + " | " + BenchRuns.show(BenchRuns.median(s, "generation"), "%.0f") + " / " + BenchRuns.show(BenchRuns.median(s, "assignment_changes"), "%.0f")
                + " | " + BenchRuns.show(BenchRuns.median(k, "broker_cpu_s"), "%.2f") + " / " + BenchRuns.show(BenchRuns.median(s, "broker_cpu_s"), "%.2f")
                + " | " + BenchRuns.okCount(k) + " / " + BenchRuns.okCount(s) + " |");
        }
        System.out.println();

        System.out.println("**Offset commits** (one OffsetCommit per group; median of the runs; ratio = Strata / Kafka for commits/s, "
            + "Kafka / Strata for latency, so above 1 means Strata is better):");
        System.out.println();
        System.out.println("| Row | Round | Kafka commits/s | Strata commits/s | ratio | Kafka p50 / p99 / p99.9 ms | Strata p50 / p99 / p99.9 ms "
            + "| p99 ratio K/S | broker CPU-s K / S | broker CPU µs/commit K / S | runs ok K / S |");
        System.out.println("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (String row : rows) {
            if (!row.startsWith("commit")) {
                continue;
            }
            List<BenchRuns.Run> k = BenchRuns.select(runs, row, "kafka");
            List<BenchRuns.Run> s = BenchRuns.select(runs, row, "strata");
            for (int round = 1; ; round++) {
                String p = "r" + round + "_";
                if (k.stream().noneMatch(r -> r.values().containsKey(p + "commits_s"))
                    && s.stream().noneMatch(r -> r.values().containsKey(p + "commits_s"))) {
                    break;
                }
                Double kRate = BenchRuns.median(k, p + "commits_s");
                Double sRate = BenchRuns.median(s, p + "commits_s");
                Double kP99 = BenchRuns.median(k, p + "p99_ms");
                Double sP99 = BenchRuns.median(s, p + "p99_ms");
                Double kCpu = BenchRuns.median(k, p + "broker_cpu_s");
                Double sCpu = BenchRuns.median(s, p + "broker_cpu_s");
                Double groups = BenchRuns.median(k, "groups");
                System.out.println("| " + row + " | " + round + (round == 1 && !row.contains("x 1 in flight") ? " (creates)" : " (updates)")
                    + " | " + BenchRuns.show(kRate, "%,.0f") + " | " + BenchRuns.show(sRate, "%,.0f") + " | " + BenchRuns.ratio(sRate, kRate)
                    + " | " + BenchRuns.show(BenchRuns.median(k, p + "p50_ms"), "%.2f") + " / " + BenchRuns.show(kP99, "%.2f") + " / " + BenchRuns.show(BenchRuns.median(k, p + "p999_ms"), "%.2f")
                    + " | " + BenchRuns.show(BenchRuns.median(s, p + "p50_ms"), "%.2f") + " / " + BenchRuns.show(sP99, "%.2f") + " / " + BenchRuns.show(BenchRuns.median(s, p + "p999_ms"), "%.2f")
                    + " | " + BenchRuns.ratio(kP99, sP99)
                    + " | " + BenchRuns.show(kCpu, "%.2f") + " / " + BenchRuns.show(sCpu, "%.2f")
                    + " | " + (groups == null ? "—" : BenchRuns.show(kCpu == null ? null : kCpu * 1e6 / groups, "%.0f") + " / "
                        + BenchRuns.show(sCpu == null ? null : sCpu * 1e6 / groups, "%.0f"))
                    + " | " + BenchRuns.okCount(k) + " / " + BenchRuns.okCount(s) + " |");
            }
        }
        System.out.println();

        if (Files.exists(memoryTsv)) {
            List<BenchRuns.Run> memory = BenchRuns.readRuns(memoryTsv);
            System.out.println("**Memory per idle group** (live heap after a full GC, `jcmd PID GC.class_histogram`, after minus before "
                + "creating the groups; median of the runs):");
            System.out.println();
            System.out.println("| Row | Kafka bytes/group | Strata bytes/group | ratio S/K | Kafka live heap before → after MB | Strata live heap before → after MB "
                + "| Kafka RSS before → after MB | Strata RSS before → after MB | runs ok K / S |");
            System.out.println("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
            for (String row : memory.stream().map(BenchRuns.Run::row).distinct().toList()) {
                List<BenchRuns.Run> k = BenchRuns.select(memory, row, "kafka");
                List<BenchRuns.Run> s = BenchRuns.select(memory, row, "strata");
                Double kPer = BenchRuns.median(k, "bytes_per_group");
                Double sPer = BenchRuns.median(s, "bytes_per_group");
                System.out.println("| " + row + " | " + BenchRuns.show(kPer, "%,.0f") + " | " + BenchRuns.show(sPer, "%,.0f") + " | " + BenchRuns.ratio(sPer, kPer)
                    + " | " + BenchRuns.show(BenchRuns.median(k, "live_before_mb"), "%.1f") + " → " + BenchRuns.show(BenchRuns.median(k, "live_after_mb"), "%.1f")
                    + " | " + BenchRuns.show(BenchRuns.median(s, "live_before_mb"), "%.1f") + " → " + BenchRuns.show(BenchRuns.median(s, "live_after_mb"), "%.1f")
                    + " | " + BenchRuns.show(BenchRuns.median(k, "rss_before_mb"), "%.0f") + " → " + BenchRuns.show(BenchRuns.median(k, "rss_after_mb"), "%.0f")
                    + " | " + BenchRuns.show(BenchRuns.median(s, "rss_before_mb"), "%.0f") + " → " + BenchRuns.show(BenchRuns.median(s, "rss_after_mb"), "%.0f")
                    + " | " + BenchRuns.okCount(k) + " / " + BenchRuns.okCount(s) + " |");
            }
            System.out.println();
        }

        List<BenchRuns.Run> failed = new ArrayList<>(runs.stream().filter(r -> !r.status().equals("ok")).toList());
        if (Files.exists(memoryTsv)) {
            failed.addAll(BenchRuns.readRuns(memoryTsv).stream().filter(r -> !r.status().equals("ok")).toList());
        }
        if (failed.isEmpty()) {
            System.out.println("Every run succeeded.");
        } else {
            System.out.println("Failed runs:");
            System.out.println();
            for (BenchRuns.Run run : failed) {
                System.out.println("* " + run.row() + ", " + run.broker() + ", run " + run.run() + ": " + run.note());
            }
        }
    }
}
