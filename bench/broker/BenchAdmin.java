import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * Topic set-up for bench/broker-bench.sh, so one JVM launch creates or deletes all the topics
 * of a benchmark row (TopicCommand takes one topic per launch).
 *
 * <pre>
 *   BenchAdmin BOOTSTRAP create PARTITIONS TOPIC...
 *   BenchAdmin BOOTSTRAP delete TOPIC...
 * </pre>
 *
 * Runs on Apache Kafka's own client (the classpath bench/broker/pom.xml resolves) against either
 * broker. Exits non-zero with the error on stderr if the broker refuses.
 */
public final class BenchAdmin {
    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: BenchAdmin BOOTSTRAP create PARTITIONS TOPIC... | BOOTSTRAP delete TOPIC...");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
        try (Admin admin = Admin.create(props)) {
            switch (args[1]) {
                case "create" -> {
                    int partitions = Integer.parseInt(args[2]);
                    List<NewTopic> topics = new ArrayList<>();
                    for (int i = 3; i < args.length; i++) {
                        topics.add(new NewTopic(args[i], partitions, (short) 1));
                    }
                    admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
                    // Wait until every partition has a leader the client can see, as a producer
                    // would otherwise spend its first seconds on metadata retries.
                    List<String> names = topics.stream().map(NewTopic::name).toList();
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (true) {
                        try {
                            var described = admin.describeTopics(names).allTopicNames().get(10, TimeUnit.SECONDS);
                            boolean ready = described.values().stream().allMatch(d ->
                                d.partitions().size() == partitions
                                    && d.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty()));
                            if (ready) {
                                break;
                            }
                        } catch (Exception e) {
                            if (System.nanoTime() > deadline) {
                                throw e;
                            }
                        }
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException("topics " + names + " have no leaders after 30 s");
                        }
                        Thread.sleep(50);
                    }
                }
                case "delete" -> {
                    List<String> topics = new ArrayList<>();
                    for (int i = 2; i < args.length; i++) {
                        topics.add(args[i]);
                    }
                    admin.deleteTopics(topics).all().get(60, TimeUnit.SECONDS);
                }
                default -> {
                    System.err.println("unknown command " + args[1]);
                    System.exit(2);
                }
            }
        }
    }
}
