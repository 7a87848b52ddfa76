package io.strata.server.api;

import io.strata.protocol.ErrorCode;
import io.strata.protocol.Uuids;
import io.strata.protocol.message.AddRaftVoterRequestData;
import io.strata.protocol.message.AddRaftVoterResponseData;
import io.strata.protocol.message.RemoveRaftVoterRequestData;
import io.strata.protocol.message.RemoveRaftVoterResponseData;
import io.strata.raft.RaftClient;
import io.strata.raft.RaftNode;
import io.strata.raft.ReplicaKey;
import io.strata.raft.VoterSet;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * AddRaftVoter (80) and RemoveRaftVoter (81), KIP-853, on the controller listener: what
 * {@code Admin.addRaftVoter} / {@code removeRaftVoter} and {@code kafka-metadata-quorum
 * add-controller} / {@code remove-controller} send. The quorum's leader does the work
 * ({@link RaftClient#addVoter}, {@link RaftClient#removeVoter}) and answers with Kafka's error
 * codes; another controller answers NOT_LEADER_OR_FOLLOWER, which the Admin client retries. A
 * request for another cluster gets INCONSISTENT_CLUSTER_ID. UpdateRaftVoter (82) comes from voters
 * and goes to the replica like the other quorum RPCs.
 *
 * <p>On a broker listener (an Admin with {@code bootstrap.servers}) the two are forwarded to the
 * active controller, as Kafka's broker forwards them ({@link #forwardAddVoter},
 * {@link #forwardRemoveVoter}); the zero-config single node answers from its own quorum (a
 * static one: UNSUPPORTED_VERSION, as a Kafka cluster with static voters answers).
 */
final class RaftVoterHandlers {
    private RaftVoterHandlers() {
    }

    static ApiHandler addVoter(BrokerContext context, RaftNode quorum) {
        return request -> {
            AddRaftVoterRequestData body = request.body(AddRaftVoterRequestData.class);
            if (body.clusterId() != null && !body.clusterId().equals(context.clusterId())) {
                request.respond(addResponse(ErrorCode.INCONSISTENT_CLUSTER_ID, "The cluster id " + body.clusterId() + " is not " + context.clusterId()));
                return;
            }
            List<VoterSet.Endpoint> endpoints = new ArrayList<>();
            for (AddRaftVoterRequestData.Listener listener : body.listeners()) {
                endpoints.add(new VoterSet.Endpoint(listener.name(), listener.host(), listener.port()));
            }
            ReplicaKey key = new ReplicaKey(body.voterId(), body.voterDirectoryId() == null ? Uuids.ZERO : body.voterDirectoryId());
            // v0 has no AckWhenCommitted: it always answers at commit.
            boolean ackWhenCommitted = request.apiVersion() < 1 || body.ackWhenCommitted();
            answer(quorum.addVoter(key, endpoints, ackWhenCommitted, Math.max(0, body.timeoutMs())),
                result -> request.respond(addResponse(result.error(), result.message())));
        };
    }

    static ApiHandler removeVoter(BrokerContext context, RaftNode quorum) {
        return request -> {
            RemoveRaftVoterRequestData body = request.body(RemoveRaftVoterRequestData.class);
            if (body.clusterId() != null && !body.clusterId().equals(context.clusterId())) {
                request.respond(removeResponse(ErrorCode.INCONSISTENT_CLUSTER_ID, "The cluster id " + body.clusterId() + " is not " + context.clusterId()));
                return;
            }
            ReplicaKey key = new ReplicaKey(body.voterId(), body.voterDirectoryId() == null ? Uuids.ZERO : body.voterDirectoryId());
            answer(quorum.removeVoter(key), result -> request.respond(removeResponse(result.error(), result.message())));
        };
    }

    /** AddRaftVoter on a broker listener: to the active controller, again while a controller says it is not the leader. */
    static ApiHandler forwardAddVoter(BrokerContext context) {
        return forward(context, context.quorum() == null ? null : addVoter(context, context.quorum()),
            io.strata.protocol.message.ApiMessageType.ADD_RAFT_VOTER, AddRaftVoterRequestData.class,
            body -> forwardTimeoutMs(body.timeoutMs()), AddRaftVoterResponseData::errorCode,
            failure -> addResponse(ControllerErrors.of(failure), failure.getMessage()));
    }

    /** RemoveRaftVoter on a broker listener: to the active controller, as {@link #forwardAddVoter}. */
    static ApiHandler forwardRemoveVoter(BrokerContext context) {
        return forward(context, context.quorum() == null ? null : removeVoter(context, context.quorum()),
            io.strata.protocol.message.ApiMessageType.REMOVE_RAFT_VOTER, RemoveRaftVoterRequestData.class,
            body -> forwardTimeoutMs(30_000), RemoveRaftVoterResponseData::errorCode,
            failure -> removeResponse(ControllerErrors.of(failure), failure.getMessage()));
    }

    /** Sends the request as it came to the active controller (or to {@code local} on a node without one elsewhere). */
    private static <Q extends io.strata.protocol.ApiMessage, R extends io.strata.protocol.ApiMessage> ApiHandler forward(BrokerContext context,
            ApiHandler local, io.strata.protocol.message.ApiMessageType api, Class<Q> requestType, java.util.function.ToLongFunction<Q> timeoutMs,
            java.util.function.Function<R, Short> errorCode, java.util.function.Function<Throwable, R> failed) {
        return request -> {
            io.strata.server.cluster.RemoteController forwarder = context.forwarder();
            if (forwarder == null) {
                local.handle(request);
                return;
            }
            Q body = request.body(requestType);
            forwarder.<R>call(api, request.apiVersion(), body, response -> notTheLeader(errorCode.apply(response)), timeoutMs.applyAsLong(body))
                .whenComplete((response, failure) -> request.respond(failure == null ? response : failed.apply(failure)));
        };
    }

    private static boolean notTheLeader(short errorCode) {
        return errorCode == ErrorCode.NOT_LEADER_OR_FOLLOWER.code() || errorCode == ErrorCode.NOT_CONTROLLER.code();
    }

    /** The request's own timeout (at least a second; 30 s if it names none). */
    private static long forwardTimeoutMs(int requestTimeoutMs) {
        return requestTimeoutMs <= 0 ? 30_000 : Math.max(1_000, requestTimeoutMs);
    }

    /** A quorum that cannot take the change now (busy, stopping) answers REQUEST_TIMED_OUT, which the client retries. */
    private static void answer(CompletableFuture<RaftClient.VoterChangeResult> change, java.util.function.Consumer<RaftClient.VoterChangeResult> respond) {
        change.whenComplete((result, failure) -> respond.accept(failure == null ? result
            : new RaftClient.VoterChangeResult(ErrorCode.REQUEST_TIMED_OUT, "the metadata quorum could not take the change: " + failure.getMessage())));
    }

    private static AddRaftVoterResponseData addResponse(ErrorCode error, String message) {
        return new AddRaftVoterResponseData().setErrorCode(error.code()).setErrorMessage(error == ErrorCode.NONE ? null : message);
    }

    private static RemoveRaftVoterResponseData removeResponse(ErrorCode error, String message) {
        return new RemoveRaftVoterResponseData().setErrorCode(error.code()).setErrorMessage(error == ErrorCode.NONE ? null : message);
    }
}
