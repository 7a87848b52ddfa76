package io.strata.server.cluster;

import io.strata.metadata.BrokerRegistration;
import io.strata.metadata.QuorumController;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The dead-broker fast path after a controller failover (a Strata addition, with
 * {@code strata.broker.disconnect.fence.ms}): a broker killed together with the old active
 * controller (a combined node) never opens a heartbeat connection to the new one, so no closed
 * connection can reveal it and only its session timeout (9 s) would fence it. Every
 * {@code intervalMs} this probe asks the controller which unfenced brokers it has not heard from
 * since it became active ({@link QuorumController#unheardBrokers}), and tries a TCP connection to
 * each one's first advertised listener: a refused connection (the port of a killed process
 * closes at once) is reported ({@link QuorumController#brokerRefusedConnection}) and the broker
 * is fenced after the usual grace unless it heartbeats. A connection that succeeds (a live, busy
 * or paused process still accepts) or times out (an unreachable host) proves nothing and changes
 * nothing: such a broker is left to its session timeout, as in Kafka.
 *
 * <p>Cost: nothing once every broker has heartbeated to the active controller (the list is
 * empty); one connection attempt per unheard broker and interval in the seconds after a
 * failover. Background work that never dies silently: a failed round is logged, counted in
 * {@link #failedRounds()}, and the next round runs.
 *
 * <p>Thread-safety: one scheduler thread runs the rounds; {@link #close} may be called from any thread.
 */
public final class BrokerReachabilityProbe implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerReachabilityProbe.class);

    /** How long a connection attempt may take; loopback and LAN refusals are immediate. */
    static final int CONNECT_TIMEOUT_MS = 500;

    private final QuorumController controller;
    private final ScheduledExecutorService scheduler;
    private final AtomicLong refusals = new AtomicLong();
    private final AtomicLong failedRounds = new AtomicLong();

    private BrokerReachabilityProbe(QuorumController controller, ScheduledExecutorService scheduler) {
        this.controller = controller;
        this.scheduler = scheduler;
    }

    /** Starts probing every {@code intervalMs} on a daemon thread of its own. */
    public static BrokerReachabilityProbe start(QuorumController controller, int nodeId, long intervalMs) {
        Objects.requireNonNull(controller, "controller");
        if (intervalMs <= 0) {
            throw new IllegalArgumentException("intervalMs must be positive: intervalMs=" + intervalMs);
        }
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "strata-broker-probe-" + nodeId);
            thread.setDaemon(true);
            return thread;
        });
        BrokerReachabilityProbe probe = new BrokerReachabilityProbe(controller, scheduler);
        scheduler.scheduleWithFixedDelay(probe::round, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
        return probe;
    }

    /** One round: probe each unheard broker once. */
    void round() {
        try {
            List<BrokerRegistration> unheard = controller.unheardBrokers().get(10, TimeUnit.SECONDS);
            for (BrokerRegistration broker : unheard) {
                if (refusesConnections(broker)) {
                    refusals.incrementAndGet();
                    controller.brokerRefusedConnection(broker.id(), broker.epoch());
                }
            }
        } catch (RejectedExecutionException e) {
            LOG.debug("The controller is closed; no probe this round");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            failedRounds.incrementAndGet();
            LOG.warn("A probe round of the brokers not yet heard from failed; the next round runs as usual", e);
        }
    }

    /** True only if the broker's first advertised listener actively refused a TCP connection. */
    static boolean refusesConnections(BrokerRegistration broker) {
        if (broker.endpoints().isEmpty()) {
            return false;
        }
        BrokerRegistration.Endpoint endpoint = broker.endpoints().get(0);
        InetSocketAddress address = new InetSocketAddress(endpoint.host(), endpoint.port());
        if (address.isUnresolved()) {
            return false;
        }
        try (Socket socket = new Socket()) {
            socket.connect(address, CONNECT_TIMEOUT_MS);
            return false;
        } catch (ConnectException e) {
            LOG.info("Broker {} (epoch {}) refuses connections on {}:{}: {}", broker.id(), broker.epoch(), endpoint.host(), endpoint.port(),
                e.getMessage());
            return true;
        } catch (IOException e) {
            return false; // timed out, no route: not proof of a dead process
        }
    }

    /** Refused connections reported so far. */
    public long refusals() {
        return refusals.get();
    }

    /** Rounds that failed (logged) so far. */
    public long failedRounds() {
        return failedRounds.get();
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
