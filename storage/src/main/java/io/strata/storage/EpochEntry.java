package io.strata.storage;

/**
 * One line of the leader epoch checkpoint: the first offset written in a leader epoch.
 *
 * @param epoch       the leader epoch
 * @param startOffset the offset of the first record appended in that epoch
 */
public record EpochEntry(int epoch, long startOffset) {
}
