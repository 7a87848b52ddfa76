package io.strata.server.purgatory;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/** An operation that completes once a shared flag is set, and records every callback. Thread-safe. */
class TestOperation extends DelayedOperation {
    final AtomicBoolean ready;
    final AtomicInteger completions = new AtomicInteger();
    final AtomicInteger expirations = new AtomicInteger();
    final Queue<String> callbacks = new ConcurrentLinkedQueue<>();
    private final ReentrantLock lock;
    volatile boolean tryCompleteRanWithoutLock;

    TestOperation(long delayMs, AtomicBoolean ready) {
        this(delayMs, ready, new ReentrantLock());
    }

    TestOperation(long delayMs, AtomicBoolean ready, ReentrantLock lock) {
        super(delayMs, lock);
        this.ready = ready;
        this.lock = lock;
    }

    @Override
    protected boolean tryComplete() {
        if (!lock.isHeldByCurrentThread()) {
            tryCompleteRanWithoutLock = true;
        }
        return ready.get() && forceComplete();
    }

    @Override
    protected void onComplete() {
        completions.incrementAndGet();
        callbacks.add("complete");
    }

    @Override
    protected void onExpiration() {
        expirations.incrementAndGet();
        callbacks.add("expire");
    }
}
