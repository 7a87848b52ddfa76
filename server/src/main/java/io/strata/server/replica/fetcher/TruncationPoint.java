package io.strata.server.replica.fetcher;

import io.strata.storage.EpochOffset;

import java.util.Optional;

/**
 * Where a follower truncates on the leader's word about an epoch, Kafka's
 * {@code AbstractFetcherThread.getOffsetTruncationState} (KIP-101, KIP-279). Given the leader's
 * {@code (epoch, endOffset)} (from DivergingEpoch or OffsetForLeaderEpoch) and the local log:
 *
 * <pre>
 *   leader endOffset unknown (-1)         truncate to the fetch offset (nothing to learn), done
 *   leader epoch unknown (-1)             min(leader end, local end), done
 *   local largest epoch <= leader's:
 *     same epoch                          min(local end of it, leader end, local log end), done
 *     a smaller epoch E                   min(local end of E, local log end), NOT done: ask again
 *                                         about E (the KIP-279 loop)
 *   no local epoch <= leader's            min(leader end, local log end), done
 * </pre>
 *
 * Worked example (KIP-279, two quick leader changes): the follower holds epochs 1 [0,10) and
 * 2 [10,15), the leader epochs 1 [0,10) and 3 [10,20). The follower asks about epoch 2; the
 * leader answers (1, 10) (its largest epoch <= 2 ends at 10). The follower's epoch 1 ends at 10:
 * truncate to min(10, 10, 15) = 10, done, and fetch from 10 with LastFetchedEpoch 1.
 * An epoch the follower lacks takes two rounds: follower epochs 1 [0,10), 3 [10,15), leader
 * epochs 1 [0,8), 2 [8,20). Asked about 3, the leader answers (2, 20); the follower's largest
 * epoch <= 2 is 1, ending at 10: truncate to 10, not done. Asked about 1, the leader answers
 * (1, 8): truncate to min(10, 8, 10) = 8, done.
 *
 * @param offset the offset to truncate to (everything at or above it goes)
 * @param done   false when the follower must ask the leader again with its new latest epoch
 */
public record TruncationPoint(long offset, boolean done) {
    static final int UNDEFINED_EPOCH = -1;
    static final long UNDEFINED_OFFSET = -1L;

    /** Kafka's rule above; {@code localEndForLeaderEpoch} is {@code FollowerLog.endOffsetForEpoch(leaderEpoch)}. */
    public static TruncationPoint of(int leaderEpoch, long leaderEndOffset, Optional<EpochOffset> localEndForLeaderEpoch,
                                     long localLogEndOffset, long fetchOffset) {
        if (leaderEndOffset == UNDEFINED_OFFSET) {
            return new TruncationPoint(fetchOffset, true);
        }
        if (leaderEpoch == UNDEFINED_EPOCH) {
            return new TruncationPoint(Math.min(leaderEndOffset, localLogEndOffset), true);
        }
        if (localEndForLeaderEpoch.isEmpty() || localEndForLeaderEpoch.get().endOffset() == UNDEFINED_OFFSET) {
            return new TruncationPoint(Math.min(leaderEndOffset, localLogEndOffset), true);
        }
        EpochOffset local = localEndForLeaderEpoch.get();
        if (local.epoch() != leaderEpoch) {
            return new TruncationPoint(Math.min(local.endOffset(), localLogEndOffset), false);
        }
        return new TruncationPoint(Math.min(Math.min(local.endOffset(), leaderEndOffset), localLogEndOffset), true);
    }
}
