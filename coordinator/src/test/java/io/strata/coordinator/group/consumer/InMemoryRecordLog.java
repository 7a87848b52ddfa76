package io.strata.coordinator.group.consumer;

import io.strata.protocol.ErrorCode;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * A {@link GroupRecordLog} in memory. Appends complete at once unless {@link #holdAppends} is
 * set (then {@link #completeHeld} finishes them in order); {@link #failNextAppend} makes the
 * next append fail without storing anything, like a lost leadership.
 */
final class InMemoryRecordLog implements GroupRecordLog {
    final List<byte[][]> records = new ArrayList<>();
    private final Deque<Runnable> held = new ArrayDeque<>();
    boolean holdAppends;
    /** How many times the log was replayed (a coordinator load, or a group rebuilt from it). */
    int replays;
    private ErrorCode nextFailure;

    @Override
    public void append(List<byte[][]> batch, Consumer<ErrorCode> done) {
        ErrorCode failure = nextFailure;
        nextFailure = null;
        Runnable completion = () -> {
            if (failure != null) {
                done.accept(failure);
                return;
            }
            records.addAll(batch);
            done.accept(ErrorCode.NONE);
        };
        if (holdAppends) {
            held.add(completion);
        } else {
            completion.run();
        }
    }

    void failNextAppend(ErrorCode error) {
        nextFailure = error;
    }

    void completeHeld() {
        while (!held.isEmpty()) {
            held.poll().run();
        }
    }

    @Override
    public void replay(BiConsumer<ByteBuffer, ByteBuffer> consumer) {
        replays++;
        for (byte[][] record : new ArrayList<>(records)) {
            consumer.accept(ByteBuffer.wrap(record[0]), record[1] == null ? null : ByteBuffer.wrap(record[1]));
        }
    }
}
