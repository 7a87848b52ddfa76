package io.strata.server.network;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * {@code max.connection.creation.rate}: the broker-wide rate of new connections, as Kafka's
 * acceptor enforces it (KIP-612). Past the rate, Kafka does not close connections: its acceptor
 * waits before accepting the next one, so clients queue in the listen backlog. Here each
 * listener's server channel carries an {@link AcceptHandler} that, when the rate is exceeded,
 * stops reading from the server socket (no accepts) until the rate allows one more connection.
 *
 * <p>The rate is a token bucket of {@code rate} tokens (one second's worth of connections, like
 * Kafka's one-second quota samples) refilled at {@code rate} per second; each accepted
 * connection takes one. A bucket below zero is the time to wait:
 * {@code throttleMs = ceil(-tokens / rate * 1000)}. Tokens are counted in billionths
 * ({@link #TOKEN}) so that refilling by elapsed nanoseconds is exact integer arithmetic:
 * {@code elapsedNanos * rate} billionths, computed only for less than a second elapsed (a second
 * or more refills the bucket), so the product stays below 2^31 * 10^9 &lt; 2^63. Changing the rate refills the bucket, so a
 * new limit starts with a full second's burst. {@link Integer#MAX_VALUE} (Kafka's default) turns
 * the throttle off.
 *
 * <p>Thread-safe: the listeners' event loops share one instance; its state is guarded by
 * {@code this}.
 */
final class ConnectionRateThrottle {
    /** One connection, in billionths of a token. */
    private static final long TOKEN = 1_000_000_000L;

    private final IntSupplier rate;
    private final LongSupplier nanoTime;
    /** Billionths of a token; at most {@code rate * TOKEN}, negative while accepting must wait. */
    private long tokens;
    private long lastNanos;
    private int lastRate = Integer.MAX_VALUE;

    ConnectionRateThrottle(IntSupplier rate, LongSupplier nanoTime) {
        this.rate = rate;
        this.nanoTime = nanoTime;
    }

    /** Counts one accepted connection; returns how long to wait before accepting the next (0 for no wait). */
    synchronized long recordAndGetThrottleMs() {
        refill();
        if (lastRate == Integer.MAX_VALUE) {
            return 0;
        }
        tokens -= TOKEN;
        return throttleMs();
    }

    /** How long accepting must still wait, without counting a connection. */
    synchronized long remainingThrottleMs() {
        refill();
        return lastRate == Integer.MAX_VALUE ? 0 : throttleMs();
    }

    private long throttleMs() {
        if (tokens >= 0) {
            return 0;
        }
        // Both operands positive: ceiling division without Java 18's Math.ceilDiv.
        long waitNanos = (-tokens + lastRate - 1) / lastRate;
        return (waitNanos + 999_999L) / 1_000_000L;
    }

    private void refill() {
        long now = nanoTime.getAsLong();
        int current = rate.getAsInt();
        long full = current * TOKEN;
        if (current != lastRate) {
            lastRate = current;
            tokens = full;
        } else if (current != Integer.MAX_VALUE) {
            long elapsedNanos = now - lastNanos;
            tokens = elapsedNanos >= TOKEN ? full : Math.min(full, tokens + elapsedNanos * current);
        }
        lastNanos = now;
    }

    /** On a listener's server channel: sees every accepted connection before Netty registers it. */
    @ChannelHandler.Sharable
    final class AcceptHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object acceptedChannel) {
            ctx.fireChannelRead(acceptedChannel);
            long throttleMs = recordAndGetThrottleMs();
            if (throttleMs > 0 && ctx.channel().config().isAutoRead()) {
                ctx.channel().config().setAutoRead(false);
                resumeLater(ctx, throttleMs);
            }
        }

        private void resumeLater(ChannelHandlerContext ctx, long delayMs) {
            ctx.executor().schedule(() -> {
                // Connections accepted in the same read loop after the pause may have deepened the deficit.
                long remainingMs = remainingThrottleMs();
                if (remainingMs > 0) {
                    resumeLater(ctx, remainingMs);
                } else {
                    ctx.channel().config().setAutoRead(true);
                }
            }, delayMs, TimeUnit.MILLISECONDS);
        }
    }
}
