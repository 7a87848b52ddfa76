package io.strata.server.replica.fetcher;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.strata.common.Time;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.FetchRequestData;
import io.strata.protocol.message.FetchResponseData;
import io.strata.protocol.message.ListOffsetsRequestData;
import io.strata.protocol.message.ListOffsetsResponseData;
import io.strata.protocol.message.OffsetForLeaderEpochRequestData;
import io.strata.protocol.message.OffsetForLeaderEpochResponseData;
import io.strata.server.network.client.InterBrokerClient;

import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * A leader on another broker, reached over an {@link InterBrokerClient} of this endpoint's own.
 *
 * <p>Why a client of its own: {@code InterBrokerClient} keeps one connection per destination and
 * pipelines requests on it, and a broker answers one request per connection at a time; a fetcher's
 * Fetch waits up to {@code replica.fetch.wait.max.ms} on the leader, so sharing the connection with
 * other fetchers (or with control traffic) would queue them behind the long poll. Each endpoint
 * therefore owns a client, on an event loop of its own (one thread) that the endpoint exposes through
 * {@link #eventLoop()}: the fetcher's runner polls the fetcher on that same thread
 * ({@link EventLoopFetcherRunner}), so a request is written and its answer handled without a thread
 * hand-off, as Kafka's {@code ReplicaFetcherThread} sends and polls its own network client.
 *
 * <p>Versions: Fetch v18, OffsetForLeaderEpoch v4, ListOffsets v11 — the highest this build's
 * brokers serve (every broker of a Strata cluster runs the same build; Kafka negotiates through
 * the metadata version instead). Requests time out after {@code replica.socket.timeout.ms}.
 *
 * <p>Thread-safe.
 */
public final class RemoteLeaderEndpoint implements LeaderEndpoint {
    static final short FETCH_VERSION = 18;
    static final short OFFSET_FOR_LEADER_EPOCH_VERSION = 4;
    static final short LIST_OFFSETS_VERSION = 11;
    /** Kafka's {@code reconnect.backoff.ms} / {@code reconnect.backoff.max.ms} defaults. */
    private static final long RECONNECT_BACKOFF_MS = 50;
    private static final long RECONNECT_BACKOFF_MAX_MS = 1_000;
    /** At most one request of a fetcher waits at a time; a few more cover a close racing a send. */
    private static final int MAX_QUEUED_REQUESTS = 4;
    /** Answers larger than the fetch response limit plus this are refused (headers, per-partition fields). */
    private static final int RESPONSE_OVERHEAD_BYTES = 1024 * 1024;

    /** How long close waits for the endpoint's event loop to end. */
    private static final long CLOSE_TIMEOUT_MS = 5_000;

    private final int leaderId;
    private final IntFunction<Optional<InterBrokerClient.Endpoint>> addresses;
    private final InterBrokerClient client;
    /** The endpoint's own one-thread group: its client's connection and the fetcher's polls run on it. */
    private final EventLoopGroup group;
    private final EventLoop eventLoop;

    RemoteLeaderEndpoint(int leaderId, IntFunction<Optional<InterBrokerClient.Endpoint>> addresses, InterBrokerClient client,
                         EventLoopGroup group) {
        this.leaderId = leaderId;
        this.addresses = addresses;
        this.client = client;
        this.group = group;
        this.eventLoop = group.next();
    }

    @Override
    public Optional<EventLoop> eventLoop() {
        return Optional.of(eventLoop);
    }

    @Override
    public int leaderId() {
        return leaderId;
    }

    @Override
    public CompletableFuture<FetchResponseData> fetch(FetchRequestData request) {
        return send(ApiMessageType.FETCH, FETCH_VERSION, request, FetchResponseData.class);
    }

    @Override
    public CompletableFuture<OffsetForLeaderEpochResponseData> fetchEpochEndOffsets(OffsetForLeaderEpochRequestData request) {
        return send(ApiMessageType.OFFSET_FOR_LEADER_EPOCH, OFFSET_FOR_LEADER_EPOCH_VERSION, request, OffsetForLeaderEpochResponseData.class);
    }

    @Override
    public CompletableFuture<ListOffsetsResponseData> listOffsets(ListOffsetsRequestData request) {
        return send(ApiMessageType.LIST_OFFSETS, LIST_OFFSETS_VERSION, request, ListOffsetsResponseData.class);
    }

    /** The leader's address is looked up per request: a broker that re-registers elsewhere is found at its new address. */
    private <T> CompletableFuture<T> send(ApiMessageType api, short version, ApiMessage request, Class<T> responseType) {
        Optional<InterBrokerClient.Endpoint> address = addresses.apply(leaderId);
        if (address.isEmpty()) {
            return CompletableFuture.failedFuture(new InterBrokerClient.RequestFailedException("no " + api.apiName
                + " endpoint of leader " + leaderId + " in the metadata", null));
        }
        return client.send(address.get(), api, version, request).thenApply(responseType::cast);
    }

    /**
     * Closes the connection, then the event loop; waits for the loop to end unless called on it
     * (a runner on the loop has stopped polling by then: the manager closes runners first).
     */
    @Override
    public void close() {
        client.close();
        var terminated = group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        if (!eventLoop.inEventLoop()) {
            terminated.awaitUninterruptibly(CLOSE_TIMEOUT_MS);
        }
    }

    @Override
    public String toString() {
        return "RemoteLeaderEndpoint(leader " + leaderId + ")";
    }

    /**
     * Makes the endpoints of one broker's fetchers: one {@link InterBrokerClient} per endpoint, each on
     * an event-loop thread of its own ({@code strata-replica-fetcher-<broker>-<leader>-N} until its
     * runner renames it after the fetcher). Each endpoint closes its own loop.
     */
    public static final class Factory implements IntFunction<LeaderEndpoint>, AutoCloseable {
        private final int brokerId;
        private final IntFunction<Optional<InterBrokerClient.Endpoint>> addresses;
        private final InterBrokerClient.Settings settings;
        private final Time time;
        private final Random random;
        private volatile io.strata.server.security.SslEngineFactory tls;

        /**
         * @param addresses a broker's endpoint on the inter-broker listener, from the metadata image's
         *                  registrations; empty while unknown (requests then fail and the fetcher backs off)
         */
        public Factory(int brokerId, ReplicaFetcherConfig config, IntFunction<Optional<InterBrokerClient.Endpoint>> addresses, Time time,
                       Random random) {
            this.brokerId = brokerId;
            this.addresses = addresses;
            this.settings = new InterBrokerClient.Settings("broker-" + brokerId + "-fetcher", config.socketTimeoutMs(), config.socketTimeoutMs(),
                RECONNECT_BACKOFF_MS, RECONNECT_BACKOFF_MAX_MS, Math.addExact(config.fetchResponseMaxBytes(), RESPONSE_OVERHEAD_BYTES)
                    + config.fetchMaxBytes(), MAX_QUEUED_REQUESTS);
            this.time = time;
            this.random = random;
        }

        @Override
        public LeaderEndpoint apply(int leaderId) {
            EventLoopGroup group = new MultiThreadIoEventLoopGroup(1,
                new DefaultThreadFactory("strata-replica-fetcher-" + brokerId + "-" + leaderId, true), NioIoHandler.newFactory());
            return new RemoteLeaderEndpoint(leaderId, addresses, new InterBrokerClient(settings, group, time, random).useTls(tls), group);
        }

        /** Fetches over TLS (the inter-broker listener's client side), or PLAINTEXT when null; set before the first endpoint. Returns this. */
        public Factory useTls(io.strata.server.security.SslEngineFactory clientSide) {
            this.tls = clientSide;
            return this;
        }

        /** Nothing of its own to release: every endpoint owns and closes its event loop. */
        @Override
        public void close() {
        }
    }
}
