package io.strata.metadata;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * The active controller's view of broker liveness: when each registered broker was last heard
 * from, whose session has ended (to be fenced), and whether a fenced broker has caught up with
 * the metadata log (to be unfenced). Pure and clock-free: every call takes {@code nowMs} from
 * the caller, so tests drive it with a fake clock. Keeps no record of fencing itself; the image
 * does.
 *
 * <p>Not thread-safe: owned by the controller's event thread. Every operation is O(1) except
 * {@link #expired} and {@link #connectionClosed}, scans of the registered brokers (a cluster has
 * at most some thousands; connections close rarely).
 *
 * <p>Rules:
 * <ul>
 *   <li>A session lasts {@code sessionTimeoutMs} from the last contact: a broker is expired when
 *       {@code nowMs - lastContactMs > sessionTimeoutMs}. Only fencing candidates (the caller's
 *       predicate: currently unfenced) are reported, and a broker once reported is not reported
 *       again until it is touched or registered anew.</li>
 *   <li>Contact is any heartbeat that reached the controller, including one whose reply timed
 *       out in an overloaded controller's queue: the caller {@link #touch}es on receipt, not on
 *       completion (KAFKA-15019: a busy controller fenced live brokers).</li>
 *   <li>Dead-broker fast path (a Strata addition, not Kafka's): a contact may name the connection
 *       that carried it. When that connection closes ({@link #connectionClosed}) while it is still
 *       the broker's latest one, the broker becomes <em>suspect</em> from then; a suspect broker
 *       with no contact for {@code disconnectFenceMs} after that is expired as if its session had
 *       ended (a killed process closes its sockets at once, a live one reconnects and heartbeats
 *       within the grace). Any contact clears the suspicion; a close of an older connection does
 *       nothing. A broker never heard from since its session started (after a controller
 *       failover: a broker killed with the old controller) has no connection here to close: a
 *       probe of its listener that is refused makes it suspect the same way
 *       ({@link #refusedConnection}). A grace of 0 turns the fast path off: only sessions expire,
 *       as in Kafka.</li>
 *   <li>A controller that becomes active starts every registered broker on a full session from
 *       then with {@link #resetAll}, whether or not the broker has heartbeated to it
 *       (KAFKA-13841: brokers registered before the failover and never heard from again were
 *       never fenced).</li>
 *   <li>Catch-up for unfencing is against a target offset fixed when the broker registers (or
 *       when the controller becomes active), never the controller's moving committed offset:
 *       with a NoOp record committed every 500 ms a moving target could never be reached
 *       (KAFKA-13959).</li>
 * </ul>
 */
public final class BrokerHeartbeatManager {
    /** One broker's liveness. */
    private static final class Session {
        long lastContactMs;
        final long catchUpTargetOffset;
        boolean reportedExpired;
        /** The connection of the latest contact, or null if it named none. */
        Object lastConnection;
        /** When the latest contact's connection closed; {@link #NOT_SUSPECT} while the broker is not suspect. */
        long suspectSinceMs = NOT_SUSPECT;
        /** Whether any contact came since this session started (registration, or this controller becoming active). */
        boolean heard;

        Session(long lastContactMs, long catchUpTargetOffset) {
            this.lastContactMs = lastContactMs;
            this.catchUpTargetOffset = catchUpTargetOffset;
        }
    }

    private static final long NOT_SUSPECT = Long.MIN_VALUE;

    private final Map<Integer, Session> sessions = new HashMap<>();

    /**
     * A broker registered (or registered again): a new session from {@code nowMs}, caught up once
     * its metadata offset reaches {@code catchUpTargetOffset} (the controller's committed offset now).
     */
    public void register(int brokerId, long nowMs, long catchUpTargetOffset) {
        sessions.put(brokerId, new Session(nowMs, catchUpTargetOffset));
    }

    /**
     * Contact from a registered broker: its session starts again from {@code nowMs}. Touching a
     * broker that is not registered here is a bug of the caller (it validates the broker epoch first).
     */
    public void touch(int brokerId, long nowMs) {
        touch(brokerId, nowMs, null);
    }

    /**
     * {@link #touch(int, long)} by a contact that came over {@code connection} (any value with
     * equality, e.g. the network layer's connection id; null for none): the broker's suspicion,
     * if any, is cleared, and a later {@link #connectionClosed} of this connection makes it
     * suspect again.
     */
    public void touch(int brokerId, long nowMs, Object connection) {
        Session session = sessionOrThrow(brokerId, "touch");
        session.lastContactMs = Math.max(session.lastContactMs, nowMs);
        session.reportedExpired = false;
        session.lastConnection = connection;
        session.suspectSinceMs = NOT_SUSPECT;
        session.heard = true;
    }

    /**
     * The registered brokers among {@code candidates} not heard from since their session started
     * and not suspect: those a {@link #refusedConnection} probe may find dead, in ascending id
     * order. After a controller failover every broker is unheard until its first heartbeat
     * reaches the new controller, and no connection of a killed broker will ever close here.
     */
    public List<Integer> unheard(IntPredicate candidates) {
        List<Integer> unheard = new ArrayList<>();
        sessions.forEach((id, session) -> {
            if (!session.heard && session.suspectSinceMs == NOT_SUSPECT && candidates.test(id)) {
                unheard.add(id);
            }
        });
        unheard.sort(null);
        return unheard;
    }

    /**
     * A probe found the broker's advertised listener refusing connections at {@code nowMs} (a
     * killed process's port is closed at once; a paused or busy one still accepts): a broker not
     * heard from since its session started becomes suspect from then, as if its heartbeat
     * connection had closed (the same grace applies). A broker heard from is left alone (its
     * heartbeat connection is watched instead), and so is one already suspect.
     *
     * @return true if the broker became suspect
     */
    public boolean refusedConnection(int brokerId, long nowMs) {
        Session session = sessionOrThrow(brokerId, "note a refused connection of");
        if (session.heard || session.suspectSinceMs != NOT_SUSPECT) {
            return false;
        }
        session.suspectSinceMs = nowMs;
        return true;
    }

    /**
     * {@code connection} closed at {@code nowMs}: every broker whose latest contact came over it
     * becomes suspect (see the class rules), in ascending id order. Closing a connection no
     * broker's latest contact came over (an older one, or one never named) changes nothing, and
     * a second close of the same connection keeps the first suspicion time.
     */
    public List<Integer> connectionClosed(Object connection, long nowMs) {
        if (connection == null) {
            throw new IllegalArgumentException("connection must not be null: nowMs=" + nowMs);
        }
        List<Integer> suspects = new ArrayList<>();
        for (Map.Entry<Integer, Session> entry : sessions.entrySet()) {
            Session session = entry.getValue();
            if (connection.equals(session.lastConnection)) {
                if (session.suspectSinceMs == NOT_SUSPECT) {
                    session.suspectSinceMs = nowMs;
                }
                suspects.add(entry.getKey());
            }
        }
        suspects.sort(null);
        return suspects;
    }

    /** True while the broker's latest connection has closed and it has not been heard from since. */
    public boolean isSuspect(int brokerId) {
        return sessionOrThrow(brokerId, "read the suspicion of").suspectSinceMs != NOT_SUSPECT;
    }

    /** The broker was unregistered: forget it. */
    public void remove(int brokerId) {
        sessions.remove(brokerId);
    }

    /** True if the broker is tracked here. */
    public boolean isRegistered(int brokerId) {
        return sessions.containsKey(brokerId);
    }

    /**
     * The fencing candidates (per {@code fencingCandidate}, e.g. unfenced in the image) whose
     * session ended by {@code nowMs}, in ascending id order; each is reported once until touched
     * or registered again.
     */
    public List<Integer> expired(long nowMs, long sessionTimeoutMs, IntPredicate fencingCandidate) {
        return expired(nowMs, sessionTimeoutMs, 0, fencingCandidate);
    }

    /**
     * The fencing candidates whose session ended by {@code nowMs}, or who have been suspect for
     * more than {@code disconnectFenceMs} (0: suspicion never expires a broker), in ascending id
     * order; each is reported once until touched or registered again.
     */
    public List<Integer> expired(long nowMs, long sessionTimeoutMs, long disconnectFenceMs, IntPredicate fencingCandidate) {
        if (sessionTimeoutMs <= 0) {
            throw new IllegalArgumentException("sessionTimeoutMs must be positive: sessionTimeoutMs=" + sessionTimeoutMs);
        }
        if (disconnectFenceMs < 0) {
            throw new IllegalArgumentException("disconnectFenceMs must be 0 (off) or positive: disconnectFenceMs=" + disconnectFenceMs);
        }
        List<Integer> expired = new ArrayList<>();
        for (Map.Entry<Integer, Session> entry : sessions.entrySet()) {
            Session session = entry.getValue();
            boolean ended = nowMs - session.lastContactMs > sessionTimeoutMs
                || disconnectFenceMs > 0 && session.suspectSinceMs != NOT_SUSPECT && nowMs - session.suspectSinceMs > disconnectFenceMs;
            if (!session.reportedExpired && ended && fencingCandidate.test(entry.getKey())) {
                session.reportedExpired = true;
                expired.add(entry.getKey());
            }
        }
        expired.sort(null);
        return expired;
    }

    /** {@link #expired(long, long, IntPredicate)} with the brokers unfenced in {@code image} as the candidates. */
    public List<Integer> expired(long nowMs, long sessionTimeoutMs, MetadataImage image) {
        return expired(nowMs, sessionTimeoutMs, 0, image);
    }

    /** {@link #expired(long, long, long, IntPredicate)} with the brokers unfenced in {@code image} as the candidates. */
    public List<Integer> expired(long nowMs, long sessionTimeoutMs, long disconnectFenceMs, MetadataImage image) {
        return expired(nowMs, sessionTimeoutMs, disconnectFenceMs, id -> {
            BrokerRegistration broker = image.brokers().get(id);
            return broker != null && !broker.fenced();
        });
    }

    /**
     * For a controller that just became active: forget every earlier session and start each of
     * {@code registered} on a full session from {@code nowMs}, caught up at
     * {@code catchUpTargetOffset} (the controller's committed offset on becoming active).
     */
    public void resetAll(Collection<Integer> registered, long nowMs, long catchUpTargetOffset) {
        sessions.clear();
        for (int brokerId : registered) {
            register(brokerId, nowMs, catchUpTargetOffset);
        }
    }

    /** True once a heartbeat's {@code currentMetadataOffset} reached the broker's fixed catch-up target. */
    public boolean caughtUp(int brokerId, long currentMetadataOffset) {
        return currentMetadataOffset >= sessionOrThrow(brokerId, "check the catch-up of").catchUpTargetOffset;
    }

    /** The offset fixed at registration that the broker must reach to be unfenced. */
    public long catchUpTargetOffset(int brokerId) {
        return sessionOrThrow(brokerId, "read the catch-up target of").catchUpTargetOffset;
    }

    /** When the broker was last heard from. */
    public long lastContactMs(int brokerId) {
        return sessionOrThrow(brokerId, "read the last contact of").lastContactMs;
    }

    private Session sessionOrThrow(int brokerId, String action) {
        Session session = sessions.get(brokerId);
        if (session == null) {
            throw new IllegalStateException("cannot " + action + " broker " + brokerId + ": not registered with the heartbeat manager "
                + "(registered: " + sessions.keySet() + ")");
        }
        return session;
    }
}
