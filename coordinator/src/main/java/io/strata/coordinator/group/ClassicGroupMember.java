package io.strata.coordinator.group;

import io.strata.protocol.message.JoinGroupResponseData;
import io.strata.protocol.message.SyncGroupResponseData;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;

/**
 * A member of a classic group. Not thread-safe: owned by its shard's thread.
 */
final class ClassicGroupMember {
    String memberId;
    final String groupInstanceId;
    final String clientId;
    final String clientHost;
    int rebalanceTimeoutMs;
    int sessionTimeoutMs;
    final String protocolType;
    /** Supported protocols in the member's order of preference: name → metadata. */
    LinkedHashMap<String, byte[]> protocols;
    byte[] assignment = new byte[0];
    Consumer<JoinGroupResponseData> awaitingJoin;
    Consumer<SyncGroupResponseData> awaitingSync;
    ScheduledFuture<?> sessionTimer;
    boolean isNew;

    ClassicGroupMember(String memberId, String groupInstanceId, String clientId, String clientHost, int rebalanceTimeoutMs,
                       int sessionTimeoutMs, String protocolType, LinkedHashMap<String, byte[]> protocols) {
        this.memberId = memberId;
        this.groupInstanceId = groupInstanceId;
        this.clientId = clientId;
        this.clientHost = clientHost;
        this.rebalanceTimeoutMs = rebalanceTimeoutMs;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.protocolType = protocolType;
        this.protocols = protocols;
    }

    boolean isStatic() {
        return groupInstanceId != null;
    }

    boolean isAwaitingJoin() {
        return awaitingJoin != null;
    }

    byte[] metadata(String protocol) {
        return protocols.get(protocol);
    }

    boolean matches(Map<String, byte[]> otherProtocols) {
        if (!protocols.keySet().equals(otherProtocols.keySet())) {
            return false;
        }
        for (Map.Entry<String, byte[]> entry : protocols.entrySet()) {
            if (!java.util.Arrays.equals(entry.getValue(), otherProtocols.get(entry.getKey()))) {
                return false;
            }
        }
        return new java.util.ArrayList<>(protocols.keySet()).equals(new java.util.ArrayList<>(otherProtocols.keySet()));
    }

    void cancelSessionTimer() {
        if (sessionTimer != null) {
            sessionTimer.cancel(false);
            sessionTimer = null;
        }
    }
}
