package io.strata.server.api;

import io.strata.metadata.MetadataImage;
import io.strata.metadata.TopicImage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.server.config.ServerConfig;
import io.strata.server.network.Request;
import io.strata.server.replica.ClientMetadata;
import io.strata.server.replica.FetchParams;
import io.strata.server.replica.FetchPartitionData;
import io.strata.server.replica.PartitionFetchInfo;
import io.strata.storage.AbortedTxn;
import io.strata.storage.FetchIsolation;
import io.strata.storage.TopicPartition;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Fetch for consumers and followers. A fetch whose replica id (ReplicaState.ReplicaId from v15,
 * ReplicaId before) is a broker id comes from a follower: it reads to the log end, its
 * LastFetchedEpoch is checked (DivergingEpoch, KIP-320) and its offsets are recorded on the
 * leader, which moves the high watermark; its fetch session is never evicted for a consumer's.
 * Full fetches, and incremental fetch sessions (KIP-227) in which the
 * request names only changed partitions and the response carries only partitions with new
 * data or changed offsets. Topics are addressed by id from v13. Reads go up to the high
 * watermark (read_uncommitted) or the last stable offset with the aborted transactions
 * (read_committed), within {@code max.bytes}, {@code partition.max.bytes} and
 * {@code fetch.max.bytes}, and wait in the purgatory for {@code min.bytes}. A partition this
 * broker does not lead is answered NOT_LEADER_OR_FOLLOWER (UNKNOWN_TOPIC_OR_PARTITION /
 * UNKNOWN_TOPIC_ID if the cluster has no such partition); that and FENCED_LEADER_EPOCH carry the
 * current leader from v12 and the leaders' endpoints from v16 (KIP-951).
 *
 * <p>Follower fetching (KIP-392): a consumer's Fetch v11+ carries its rack and may be read by a
 * follower (up to the follower's high watermark or last stable offset); on the leader, a
 * configured {@code replica.selector.class} may answer PreferredReadReplica instead of records.
 */
final class FetchHandler implements ApiHandler {
    private final BrokerContext context;
    private final FetchSessionCache sessions;

    FetchHandler(BrokerContext context) {
        this.context = context;
        this.sessions = new FetchSessionCache(context.config().getInt(ServerConfig.MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS),
            context.config().getInt(ServerConfig.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS));
    }

    /** The sessions this handler keeps, for the broker's metrics. */
    FetchSessionStatistics sessions() {
        return sessions;
    }

    @Override
    public void handle(Request request) {
        FetchRequestData body = request.body(FetchRequestData.class);
        short version = request.apiVersion();
        boolean byId = version >= 13;
        MetadataImage image = context.image();
        int replicaId = version >= 15 ? body.replicaState().replicaId() : body.replicaId();
        long brokerEpoch = version >= 15 ? body.replicaState().replicaEpoch() : -1L;
        boolean fromFollower = replicaId >= 0;

        // Resolve the session and the partitions to read.
        FetchSessionCache.Session session = null;
        LinkedHashMap<FetchSessionCache.Key, FetchSessionCache.CachedPartition> wanted;
        boolean incremental = false;
        if (body.sessionId() != FetchSessionCache.INVALID_SESSION_ID && body.sessionEpoch() > 0) {
            session = sessions.get(body.sessionId());
            if (session == null) {
                request.respond(sessionError(ErrorCode.FETCH_SESSION_ID_NOT_FOUND));
                return;
            }
            synchronized (session) {
                if (session.epoch != body.sessionEpoch()) {
                    request.respond(sessionError(ErrorCode.INVALID_FETCH_SESSION_EPOCH));
                    return;
                }
                applyIncrementalChanges(session, body, byId, version);
                wanted = new LinkedHashMap<>(session.partitions);
            }
            sessions.touch(session, context.time().milliseconds());
            incremental = true;
        } else {
            if (body.sessionId() != FetchSessionCache.INVALID_SESSION_ID) {
                sessions.remove(body.sessionId());
            }
            wanted = new LinkedHashMap<>();
            for (FetchRequestData.FetchTopic topic : body.topics()) {
                for (FetchRequestData.FetchPartition partition : topic.partitions()) {
                    wanted.put(key(topic, partition.partition(), byId), cached(partition, version));
                }
            }
            if (body.sessionEpoch() == FetchSessionCache.INITIAL_EPOCH && version >= 7) {
                session = sessions.create(fromFollower, wanted.size(), context.time().milliseconds());
                if (session != null) {
                    synchronized (session) {
                        session.partitions.putAll(wanted);
                    }
                }
            }
        }

        LinkedHashMap<TopicPartition, PartitionFetchInfo> fetchInfos = new LinkedHashMap<>();
        Map<FetchSessionCache.Key, TopicPartition> resolved = new LinkedHashMap<>();
        Map<FetchSessionCache.Key, FetchPartitionData> errors = new LinkedHashMap<>();
        // A follower needs CLUSTER_ACTION on the cluster, a consumer READ on each topic; else TOPIC_AUTHORIZATION_FAILED, as Kafka.
        boolean followerAuthorized = fromFollower && context.authorization().authorizeCluster(request, io.strata.metadata.authorizer.AclOperation.CLUSTER_ACTION);
        for (Map.Entry<FetchSessionCache.Key, FetchSessionCache.CachedPartition> entry : wanted.entrySet()) {
            FetchSessionCache.Key key = entry.getKey();
            TopicImage topic = byId ? image.topic(key.topicId()) : image.topic(key.topic());
            String name = topic != null ? topic.name() : byId ? null : key.topic();
            if (name != null && !(fromFollower ? followerAuthorized
                : context.authorization().authorize(request, io.strata.metadata.authorizer.AclOperation.READ, io.strata.metadata.authorizer.ResourceType.TOPIC, name))) {
                errors.put(key, FetchPartitionData.error(ErrorCode.TOPIC_AUTHORIZATION_FAILED, null));
                continue;
            }
            if (topic == null) {
                errors.put(key, FetchPartitionData.error(byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null));
                continue;
            }
            TopicPartition topicPartition = new TopicPartition(topic.name(), key.partition());
            FetchSessionCache.CachedPartition cached = entry.getValue();
            fetchInfos.put(topicPartition, new PartitionFetchInfo(cached.fetchOffset, cached.maxBytes, cached.currentLeaderEpoch,
                cached.lastFetchedEpoch, cached.followerLogStartOffset()));
            resolved.put(key, topicPartition);
        }
        int maxBytes = Math.min(version >= 3 ? body.maxBytes() : Integer.MAX_VALUE, context.config().getInt(ServerConfig.FETCH_MAX_BYTES));
        // A follower reads to the leader's log end whatever isolation level it sends.
        FetchIsolation isolation = fromFollower ? FetchIsolation.LOG_END
            : body.isolationLevel() == 1 ? FetchIsolation.TXN_COMMITTED : FetchIsolation.HIGH_WATERMARK;
        FetchParams params;
        if (fromFollower) {
            params = FetchParams.follower(body.maxWaitMs(), body.minBytes(), maxBytes, replicaId, brokerEpoch);
        } else if (version >= 11) {
            // KIP-392: from v11 a consumer says its rack; such a fetch may be served by a follower or sent to one.
            params = FetchParams.consumer(body.maxWaitMs(), body.minBytes(), maxBytes, isolation,
                new ClientMetadata(body.rackId(), request.header().clientId(), request.listenerName()));
        } else {
            params = new FetchParams(body.maxWaitMs(), body.minBytes(), maxBytes, isolation);
        }
        FetchSessionCache.Session finalSession = session;
        boolean finalIncremental = incremental;
        context.replicaManager().fetchMessages(params, fetchInfos, results ->
            request.respond(buildResponse(wanted, resolved, errors, results, finalSession, finalIncremental, isolation,
                version >= 12 ? new LeaderHints(context.image(), request.listenerName()) : null, version)));
    }

    private static FetchSessionCache.Key key(FetchRequestData.FetchTopic topic, int partition, boolean byId) {
        return byId ? new FetchSessionCache.Key(null, topic.topicId(), partition) : new FetchSessionCache.Key(topic.topic(), null, partition);
    }

    private static FetchSessionCache.CachedPartition cached(FetchRequestData.FetchPartition partition, short version) {
        FetchSessionCache.CachedPartition cached = new FetchSessionCache.CachedPartition(partition.fetchOffset(), partition.partitionMaxBytes(),
            partition.currentLeaderEpoch());
        cached.lastFetchedEpoch = lastFetchedEpoch(partition, version);
        cached.followerLogStartOffset(partition.logStartOffset());
        return cached;
    }

    /** LastFetchedEpoch exists from v12 (KIP-320); -1 before. */
    private static int lastFetchedEpoch(FetchRequestData.FetchPartition partition, short version) {
        return version >= 12 ? partition.lastFetchedEpoch() : -1;
    }

    private static void applyIncrementalChanges(FetchSessionCache.Session session, FetchRequestData body, boolean byId, short version) {
        for (FetchRequestData.ForgottenTopic forgotten : body.forgottenTopicsData()) {
            for (int partition : forgotten.partitions()) {
                session.partitions.remove(byId ? new FetchSessionCache.Key(null, forgotten.topicId(), partition)
                    : new FetchSessionCache.Key(forgotten.topic(), null, partition));
            }
        }
        for (FetchRequestData.FetchTopic topic : body.topics()) {
            for (FetchRequestData.FetchPartition partition : topic.partitions()) {
                FetchSessionCache.Key key = key(topic, partition.partition(), byId);
                FetchSessionCache.CachedPartition existing = session.partitions.get(key);
                if (existing == null) {
                    session.partitions.put(key, cached(partition, version));
                } else {
                    existing.fetchOffset = partition.fetchOffset();
                    existing.maxBytes = partition.partitionMaxBytes();
                    existing.currentLeaderEpoch = partition.currentLeaderEpoch();
                    existing.lastFetchedEpoch = lastFetchedEpoch(partition, version);
                    existing.followerLogStartOffset(partition.logStartOffset());
                }
            }
        }
    }

    private static FetchResponseData sessionError(ErrorCode error) {
        return new FetchResponseData().setErrorCode(error.code()).setSessionId(FetchSessionCache.INVALID_SESSION_ID);
    }

    private FetchResponseData buildResponse(LinkedHashMap<FetchSessionCache.Key, FetchSessionCache.CachedPartition> wanted,
                                            Map<FetchSessionCache.Key, TopicPartition> resolved,
                                            Map<FetchSessionCache.Key, FetchPartitionData> errors,
                                            Map<TopicPartition, FetchPartitionData> results, FetchSessionCache.Session session,
                                            boolean incremental, FetchIsolation isolation, LeaderHints hints, short version) {
        FetchResponseData response = new FetchResponseData().setErrorCode(ErrorCode.NONE.code())
            .setSessionId(session == null ? FetchSessionCache.INVALID_SESSION_ID : session.id);
        Map<String, FetchResponseData.FetchableTopicResponse> topics = new LinkedHashMap<>();
        if (session != null) {
            synchronized (session) {
                for (Map.Entry<FetchSessionCache.Key, FetchSessionCache.CachedPartition> entry : wanted.entrySet()) {
                    addPartition(response, topics, entry.getKey(), data(entry.getKey(), resolved, errors, results), session, incremental, isolation,
                        hints, resolved.get(entry.getKey()));
                }
                if (incremental) {
                    // A new session expects epoch 1 next; each incremental fetch then moves it on by one.
                    session.epoch = session.epoch == Integer.MAX_VALUE ? 1 : session.epoch + 1;
                }
            }
        } else {
            for (FetchSessionCache.Key key : wanted.keySet()) {
                addPartition(response, topics, key, data(key, resolved, errors, results), null, false, isolation, hints, resolved.get(key));
            }
        }
        if (hints != null && version >= 16) {
            for (LeaderHints.Node node : hints.nodes().values()) {
                response.nodeEndpoints().add(new FetchResponseData.NodeEndpoint().setNodeId(node.id()).setHost(node.host())
                    .setPort(node.port()).setRack(node.rack()));
            }
        }
        return response;
    }

    private static FetchPartitionData data(FetchSessionCache.Key key, Map<FetchSessionCache.Key, TopicPartition> resolved,
                                           Map<FetchSessionCache.Key, FetchPartitionData> errors, Map<TopicPartition, FetchPartitionData> results) {
        FetchPartitionData error = errors.get(key);
        if (error != null) {
            return error;
        }
        FetchPartitionData data = results.get(resolved.get(key));
        return data != null ? data : FetchPartitionData.error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null);
    }

    private static void addPartition(FetchResponseData response, Map<String, FetchResponseData.FetchableTopicResponse> topics,
                                     FetchSessionCache.Key key, FetchPartitionData data, FetchSessionCache.Session session,
                                     boolean incremental, FetchIsolation isolation, LeaderHints hints, TopicPartition topicPartition) {
        if (session != null) {
            FetchSessionCache.CachedPartition cached = session.partitions.get(key);
            if (cached != null) {
                boolean changed = cached.update(data.highWatermark(), data.lastStableOffset(), data.logStartOffset());
                if (incremental && !changed && data.error() == ErrorCode.NONE && data.records().sizeInBytes() == 0
                    && data.divergingEpoch() == null && !data.hasPreferredReadReplica()) {
                    return;
                }
                if (incremental && data.records().sizeInBytes() > 0) {
                    // Partitions that got data go to the end of the session's order, so a response size limit does not starve
                    // the partitions listed after them (Kafka's IncrementalFetchContext).
                    session.partitions.remove(key);
                    session.partitions.put(key, cached);
                }
            }
        }
        String topicKey = key.topicId() != null ? key.topicId().toString() : key.topic();
        FetchResponseData.FetchableTopicResponse topic = topics.computeIfAbsent(topicKey, k -> {
            FetchResponseData.FetchableTopicResponse created = new FetchResponseData.FetchableTopicResponse()
                .setTopic(key.topic()).setTopicId(key.topicId() == null ? io.strata.protocol.Uuids.ZERO : key.topicId());
            response.responses().add(created);
            return created;
        });
        FetchResponseData.PartitionData partition = new FetchResponseData.PartitionData()
            .setPartitionIndex(key.partition())
            .setErrorCode(data.error().code())
            .setHighWatermark(data.highWatermark())
            .setLastStableOffset(data.lastStableOffset())
            .setLogStartOffset(data.logStartOffset())
            .setPreferredReadReplica(data.preferredReadReplica())
            .setRecords(data.records());
        if (data.divergingEpoch() != null) {
            partition.setDivergingEpoch(new FetchResponseData.EpochEndOffset().setEpoch(data.divergingEpoch().epoch())
                .setEndOffset(data.divergingEpoch().endOffset()));
        }
        if (isolation == FetchIsolation.TXN_COMMITTED && data.abortedTransactions() != null) {
            List<FetchResponseData.AbortedTransaction> aborted = new ArrayList<>();
            for (AbortedTxn txn : data.abortedTransactions()) {
                aborted.add(new FetchResponseData.AbortedTransaction().setProducerId(txn.producerId()).setFirstOffset(txn.firstOffset()));
            }
            partition.setAbortedTransactions(aborted);
        } else {
            partition.setAbortedTransactions(null);
        }
        if (hints != null && (data.error() == ErrorCode.NOT_LEADER_OR_FOLLOWER || data.error() == ErrorCode.FENCED_LEADER_EPOCH)) {
            LeaderHints.Leader leader = hints.leaderOf(topicPartition == null ? null : topicPartition.topic(), key.partition());
            partition.setCurrentLeader(new FetchResponseData.LeaderIdAndEpoch().setLeaderId(leader.id()).setLeaderEpoch(leader.epoch()));
        }
        topic.partitions().add(partition);
    }

}
