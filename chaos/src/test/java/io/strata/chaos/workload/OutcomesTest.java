package io.strata.chaos.workload;

import io.strata.chaos.history.Op;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class OutcomesTest {

    @Test
    void errorsAfterTheRecordMayHaveBeenSentAreUnknown() {
        for (Exception error : new Exception[] {
            new TimeoutException("Expiring 1 record(s) for t-0: 12000 ms has passed since batch creation"),
            new NotEnoughReplicasException("checked before append, but an earlier attempt may have been appended"),
            new NotEnoughReplicasAfterAppendException("appended"),
            new NotLeaderOrFollowerException("leader moved"),
            new NetworkException("disconnected"),
            new OutOfOrderSequenceException("sequence"),
            new UnknownTopicOrPartitionException("metadata"),
            new KafkaException("Producer is closed forcefully."),
        }) {
            assertThat(Outcomes.send(error, false)).as(error.toString()).isEqualTo(Op.Type.INFO);
        }
    }

    @Test
    void errorsRaisedBeforeTheRecordEnteredTheProducerAreFailures() {
        // A metadata wait timing out inside send(): same class as a delivery timeout, but nothing was appended.
        assertThat(Outcomes.send(new TimeoutException("Topic t not present in metadata after 5000 ms."), true)).isEqualTo(Op.Type.FAIL);
        assertThat(Outcomes.send(new KafkaException("closed"), true)).isEqualTo(Op.Type.FAIL);
    }

    @Test
    void deterministicBrokerRejectionsAreFailuresOnAnyAttempt() {
        for (Exception error : new Exception[] {
            new RecordTooLargeException("too large"),
            new InvalidRecordException("invalid"),
            new TopicAuthorizationException(Set.of("t")),
        }) {
            assertThat(Outcomes.send(error, false)).as(error.toString()).isEqualTo(Op.Type.FAIL);
        }
    }

    @Test
    void fatalAndFencingErrorsReplaceTheProducer() {
        assertThat(Outcomes.producerUnusable(new ProducerFencedException("fenced"))).isTrue();
        assertThat(Outcomes.producerUnusable(new OutOfOrderSequenceException("sequence"))).isTrue();
        assertThat(Outcomes.producerUnusable(new KafkaException("Cannot perform send because at least one previous transactional or "
            + "idempotent request has failed with errors."))).isTrue();
        assertThat(Outcomes.producerUnusable(new IllegalStateException("closed"))).isTrue();
        assertThat(Outcomes.producerUnusable(new TimeoutException("expired"))).isFalse();
        assertThat(Outcomes.producerUnusable(new NotLeaderOrFollowerException("moved"))).isFalse();
    }

    @Test
    void transactionIsFailedUntilCommitIsCalledAndUnknownAfter() {
        assertThat(Outcomes.unfinishedTxn(false)).isEqualTo(Op.Type.FAIL);
        assertThat(Outcomes.unfinishedTxn(true)).isEqualTo(Op.Type.INFO);
    }

    @Test
    void recordValuesRoundTripAndRefuseForeignBytes() {
        assertThat(RecordValues.decode(RecordValues.encode(1234567890123L))).isEqualTo(1234567890123L);
        assertThat(new String(RecordValues.encode(17), java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("17");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RecordValues.decode("x1".getBytes(java.nio.charset.StandardCharsets.US_ASCII)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("x1");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RecordValues.decode(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void registryKnowsEveryNameAndRefusesOthers() {
        assertThat(Workloads.names()).containsExactly("idempotent", "txn", "group-classic", "group-consumer", "kcat");
        java.util.Set<String> topics = new java.util.HashSet<>();
        for (String name : Workloads.names()) {
            Workload workload = Workloads.create(name, 7);
            workload.topics().forEach(topic -> assertThat(topics.add(topic.name())).as("topic %s used by two workloads", topic.name()).isTrue());
            assertThat(workload.topics()).isNotEmpty().allSatisfy(topic -> {
                assertThat(topic.replicationFactor()).isEqualTo((short) 3);
                assertThat(topic.configs()).containsEntry("min.insync.replicas", "2");
            });
        }
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Workloads.create("nope", 1))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nope").hasMessageContaining("idempotent");
    }

    @Test
    void kcatDeliveryReportsAreParsed() {
        java.util.regex.Matcher delivered = KcatProducerWorkload.DELIVERED.matcher("% Message delivered to partition 2 (offset 41) on broker 3");
        assertThat(delivered.find()).isTrue();
        assertThat(delivered.group(1)).isEqualTo("2");
        assertThat(delivered.group(2)).isEqualTo("41");
        assertThat(KcatProducerWorkload.DELIVERY_FAILED.matcher("% Delivery failed for message: Local: Message timed out").find()).isTrue();
    }
}
