package io.strata.server.replica.fetcher;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The follower's side of KIP-227 sessions: what each request carries, and how errors reset the session. */
class FollowerFetchSessionTest {
    private static final UUID TOPIC_A = new UUID(1, 1);
    private static final UUID TOPIC_B = new UUID(2, 2);
    private static final FollowerFetchSession.Key A0 = new FollowerFetchSession.Key(TOPIC_A, 0);
    private static final FollowerFetchSession.Key A1 = new FollowerFetchSession.Key(TOPIC_A, 1);
    private static final FollowerFetchSession.Key B0 = new FollowerFetchSession.Key(TOPIC_B, 0);

    private final FollowerFetchSession session = new FollowerFetchSession("[test] ");

    private static FollowerFetchSession.PartitionRequest at(String topic, long offset) {
        return new FollowerFetchSession.PartitionRequest(topic, offset, 3, 2, 0, 1 << 20, offset);
    }

    private static LinkedHashMap<FollowerFetchSession.Key, FollowerFetchSession.PartitionRequest> partitions(Object... keysAndOffsets) {
        LinkedHashMap<FollowerFetchSession.Key, FollowerFetchSession.PartitionRequest> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndOffsets.length; i += 2) {
            FollowerFetchSession.Key key = (FollowerFetchSession.Key) keysAndOffsets[i];
            map.put(key, at(key.topicId().equals(TOPIC_A) ? "a" : "b", (Long) keysAndOffsets[i + 1]));
        }
        return map;
    }

    private static List<String> named(FollowerFetchSession.Built built) {
        return built.topics().stream().flatMap(t -> t.partitions().stream().map(p -> t.topic() + "-" + p.partition() + "@" + p.fetchOffset()))
            .toList();
    }

    private static FetchResponseData answer(int sessionId) {
        return new FetchResponseData().setErrorCode(ErrorCode.NONE.code()).setSessionId(sessionId);
    }

    @Test
    void aFullFetchOpensTheSessionThenOnlyChangesAreSent() {
        FollowerFetchSession.Built full = session.build(partitions(A0, 10L, A1, 20L, B0, 30L));
        assertThat(full.full()).isTrue();
        assertThat(full.sessionId()).isZero();
        assertThat(full.sessionEpoch()).isZero();
        assertThat(named(full)).containsExactly("a-0@10", "a-1@20", "b-0@30");
        assertThat(session.onResponse(answer(77))).isTrue();
        assertThat(session.sessionId()).isEqualTo(77);
        assertThat(session.nextEpoch()).isEqualTo(1);

        FollowerFetchSession.Built unchanged = session.build(partitions(A0, 10L, A1, 20L, B0, 30L));
        assertThat(unchanged.full()).isFalse();
        assertThat(unchanged.sessionId()).isEqualTo(77);
        assertThat(unchanged.sessionEpoch()).isEqualTo(1);
        assertThat(unchanged.topics()).as("nothing changed: an empty incremental fetch").isEmpty();
        assertThat(unchanged.forgotten()).isEmpty();
        assertThat(session.onResponse(answer(77))).isTrue();

        FollowerFetchSession.Built moved = session.build(partitions(A0, 15L, B0, 30L));
        assertThat(moved.sessionEpoch()).isEqualTo(2);
        assertThat(named(moved)).as("only the partition whose offset moved").containsExactly("a-0@15");
        assertThat(moved.forgotten()).hasSize(1);
        FetchRequestData.ForgottenTopic forgotten = moved.forgotten().get(0);
        assertThat(forgotten.topicId()).isEqualTo(TOPIC_A);
        assertThat(forgotten.partitions()).containsExactly(1);
        assertThat(session.onResponse(answer(77))).isTrue();

        FollowerFetchSession.Built readded = session.build(partitions(A0, 15L, A1, 20L, B0, 30L));
        assertThat(named(readded)).as("a partition forgotten and fetched again is sent whole").containsExactly("a-1@20");
        assertThat(readded.forgotten()).isEmpty();
        assertThat(session.fullRequests()).isOne();
        assertThat(session.incrementalRequests()).isEqualTo(3);
    }

    @Test
    void aChangedLeaderEpochOrHighWatermarkIsSentToo() {
        session.build(partitions(A0, 10L));
        session.onResponse(answer(5));
        LinkedHashMap<FollowerFetchSession.Key, FollowerFetchSession.PartitionRequest> next = new LinkedHashMap<>();
        next.put(A0, new FollowerFetchSession.PartitionRequest("a", 10, 4, 2, 0, 1 << 20, 10));
        assertThat(named(session.build(new LinkedHashMap<>(next)))).containsExactly("a-0@10");
        session.onResponse(answer(5));
        next.put(A0, new FollowerFetchSession.PartitionRequest("a", 10, 4, 2, 0, 1 << 20, 9));
        assertThat(named(session.build(new LinkedHashMap<>(next)))).containsExactly("a-0@10");
    }

    @Test
    void anUnknownSessionStartsANewOne() {
        session.build(partitions(A0, 10L));
        session.onResponse(answer(5));
        session.build(partitions(A0, 11L));
        assertThat(session.onResponse(new FetchResponseData().setErrorCode(ErrorCode.FETCH_SESSION_ID_NOT_FOUND.code()))).isFalse();

        FollowerFetchSession.Built next = session.build(partitions(A0, 11L));
        assertThat(next.full()).isTrue();
        assertThat(next.sessionId()).as("no session to close").isZero();
        assertThat(next.sessionEpoch()).isZero();
        assertThat(named(next)).containsExactly("a-0@11");
    }

    @Test
    void aWrongEpochOrALostRequestClosesTheSessionAndOpensANewOne() {
        session.build(partitions(A0, 10L));
        session.onResponse(answer(5));
        session.build(partitions(A0, 11L));
        assertThat(session.onResponse(new FetchResponseData().setErrorCode(ErrorCode.INVALID_FETCH_SESSION_EPOCH.code()))).isFalse();
        FollowerFetchSession.Built afterEpochError = session.build(partitions(A0, 11L));
        assertThat(afterEpochError.full()).isTrue();
        assertThat(afterEpochError.sessionId()).as("the leader closes session 5 and opens a new one").isEqualTo(5);
        assertThat(afterEpochError.sessionEpoch()).isZero();
        assertThat(session.onResponse(answer(6))).isTrue();

        session.build(partitions(A0, 12L));
        session.onRequestFailed();
        FollowerFetchSession.Built afterLoss = session.build(partitions(A0, 12L));
        assertThat(afterLoss.full()).isTrue();
        assertThat(afterLoss.sessionId()).isEqualTo(6);
        assertThat(afterLoss.sessionEpoch()).isZero();
        assertThat(named(afterLoss)).containsExactly("a-0@12");
    }

    @Test
    void aLeaderWithoutRoomKeepsTheFetcherSessionless() {
        session.build(partitions(A0, 10L));
        assertThat(session.onResponse(answer(0))).as("a sessionless answer is still used").isTrue();
        assertThat(session.isOpen()).isFalse();
        FollowerFetchSession.Built next = session.build(partitions(A0, 10L));
        assertThat(next.full()).isTrue();
        assertThat(named(next)).containsExactly("a-0@10");
    }

    @Test
    void theLeaderClosingTheSessionInAnIncrementalAnswerMeansAFullFetchNext() {
        session.build(partitions(A0, 10L));
        session.onResponse(answer(5));
        session.build(partitions(A0, 11L));
        assertThat(session.onResponse(answer(0))).isTrue();
        assertThat(session.build(partitions(A0, 11L)).full()).isTrue();
    }

    @Test
    void epochsWrapToOne() {
        assertThat(FollowerFetchSession.nextEpoch(0)).isEqualTo(1);
        assertThat(FollowerFetchSession.nextEpoch(41)).isEqualTo(42);
        assertThat(FollowerFetchSession.nextEpoch(Integer.MAX_VALUE)).isEqualTo(1);
    }

    @Test
    void oneRequestAtATime() {
        session.build(partitions(A0, 10L));
        assertThatThrownBy(() -> session.build(partitions(A0, 10L))).isInstanceOf(IllegalStateException.class);
        session.onRequestFailed();
        assertThatThrownBy(session::onRequestFailed).isInstanceOf(IllegalStateException.class);
    }
}
