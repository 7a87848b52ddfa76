package io.strata.it;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Semaphore;
import java.util.stream.Collectors;

/**
 * A consumer-protocol group member in its own JVM, so a test can kill it outright (no leave,
 * no more heartbeats: the coordinator must notice through the session timeout). Args:
 * bootstrap, group, topic, name, and optionally the group protocol (default {@code consumer}) and
 * further {@code key=value} consumer properties. A classic-protocol member also commits in
 * {@code onPartitionsRevoked}.
 *
 * <p>Talks to the test over stdio, one line per event: {@code ASSIGNED p,p}, {@code REVOKED p,p}
 * and {@code LOST p,p} from the rebalance listener (each waits for an {@code ACK} line before
 * returning, so the test records the change before the coordinator can hand the partitions
 * on), {@code RECORDS v,v} after a batch was processed and committed, {@code COMMIT_FAILED e}.
 * {@code PAUSE} on stdin stops it between batches; it answers {@code PAUSED} and waits to be killed.
 */
public final class ConsumerProcessMain {
    private static final Semaphore ACKS = new Semaphore(0);
    private static volatile boolean pauseRequested;

    private ConsumerProcessMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, args[1]);
        properties.put(ConsumerConfig.CLIENT_ID_CONFIG, args[3]);
        String protocol = args.length > 4 ? args[4] : "consumer";
        properties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "20");
        for (int i = 5; i < args.length; i++) {
            int equals = args[i].indexOf('=');
            properties.put(args[i].substring(0, equals), args[i].substring(equals + 1));
        }
        Thread stdin = new Thread(ConsumerProcessMain::readCommands, "stdin");
        stdin.setDaemon(true);
        stdin.start();
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties);
        consumer.subscribe(List.of(args[2]), new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                if (protocol.equals("classic") && !partitions.isEmpty()) {
                    try {
                        consumer.commitSync();
                    } catch (RuntimeException e) {
                        emit("COMMIT_FAILED " + e);
                    }
                }
                announce("REVOKED", partitions);
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                announce("ASSIGNED", partitions);
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                announce("LOST", partitions);
            }
        });
        while (!pauseRequested) {
            List<String> values = new ArrayList<>();
            for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                values.add(record.value());
            }
            if (values.isEmpty()) {
                continue;
            }
            try {
                consumer.commitSync();
                emit("RECORDS " + String.join(",", values));
            } catch (RuntimeException e) {
                emit("COMMIT_FAILED " + e);
            }
        }
        emit("PAUSED");
        Thread.sleep(Long.MAX_VALUE); // until killed: no close, no leave
    }

    private static void announce(String event, Collection<TopicPartition> partitions) {
        if (partitions.isEmpty()) {
            return;
        }
        emit(event + " " + partitions.stream().map(TopicPartition::toString).collect(Collectors.joining(",")));
        ACKS.acquireUninterruptibly();
    }

    private static synchronized void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static void readCommands() {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                if (line.equals("ACK")) {
                    ACKS.release();
                } else if (line.equals("PAUSE")) {
                    pauseRequested = true;
                }
            }
        } catch (Exception e) {
            // the parent went away
        }
        System.exit(1); // the parent closed stdin: never outlive it
    }
}
