package io.strata.server.metrics;

import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.FetchRequestData;
import io.strata.server.network.NetworkObserver;
import io.strata.server.network.Request;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Kafka's {@code kafka.network:type=RequestMetrics} and the socket server's connection metrics:
 * per request type and version, the request count and the time spent in each stage of the
 * pipeline, and per request type, the error codes of the responses.
 *
 * <pre>
 *  received ──queue──▶ dequeued ──local──▶ handler returned ──remote──▶ respond() ──response send──▶ written
 *     │                                    (or respond(), if sooner)    (purgatory,                       │
 *     │                                                                  coordinator)                      │
 *     └───────────────────────────────────────────── total ───────────────────────────────────────────────┘
 * </pre>
 *
 * Queue time is time in the request channel; local time is the handler's own work; remote time
 * is the wait after the handler returned and before the answer (purgatory, coordinator thread);
 * response send time runs from the answer to the write completing (encoding, the event loop
 * hop, the socket write). A request answered before its handler returned has no remote time.
 *
 * <p>As in Kafka, Fetch requests are also recorded as {@code FetchConsumer} (or
 * {@code FetchFollower} when a replica sends them), so dashboards written for Kafka's names work.
 *
 * <p>Hot path: the stats of an (API, version) are created once, on its first request, and found
 * by array index afterwards; recording is {@link LongAdder} increments only (no lock, no
 * allocation). Thread-safe.
 */
public final class RequestMetrics implements NetworkObserver, ErrorCounts.Sink, MetricsCollector {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RequestMetrics.class);
    static final String CONSUMER_FETCH = "FetchConsumer";
    static final String FOLLOWER_FETCH = "FetchFollower";

    private static final int API_SLOTS = maxApiKey() + 1;
    private static final ErrorCode[] ERRORS = ErrorCode.values();

    /** [apiKey] → stats per version, created on first use. */
    private final AtomicReferenceArray<AtomicReferenceArray<Stats>> stats = new AtomicReferenceArray<>(API_SLOTS);
    private final AtomicReferenceArray<Stats> consumerFetch = new AtomicReferenceArray<>(versionSlots(ApiMessageType.FETCH));
    private final AtomicReferenceArray<Stats> followerFetch = new AtomicReferenceArray<>(versionSlots(ApiMessageType.FETCH));
    /** [apiKey] → count per error code ordinal, created on first use. */
    private final AtomicReferenceArray<AtomicReferenceArray<LongAdder>> errors = new AtomicReferenceArray<>(API_SLOTS);
    private final Map<String, ListenerStats> listeners = new ConcurrentHashMap<>();
    /** Benign race: at worst a failure is logged more than once. */
    private volatile boolean failureReported;

    /** The counters of one (request name, version). */
    static final class Stats {
        final String request;
        final String version;
        final LongAdder requests = new LongAdder();
        final Histogram queueTime = Histogram.latency();
        final Histogram localTime = Histogram.latency();
        final Histogram remoteTime = Histogram.latency();
        final Histogram responseSendTime = Histogram.latency();
        final Histogram totalTime = Histogram.latency();

        Stats(String request, int version) {
            this.request = request;
            this.version = Integer.toString(version);
        }

        void record(long received, long dequeued, long localComplete, long responded, long completed) {
            requests.increment();
            queueTime.record(dequeued - received);
            localTime.record(localComplete - dequeued);
            remoteTime.record(responded - localComplete);
            responseSendTime.record(completed - responded);
            totalTime.record(completed - received);
        }
    }

    /** Connection counts of one listener. */
    static final class ListenerStats {
        final LongAdder open = new LongAdder();
        final LongAdder created = new LongAdder();
        final LongAdder closed = new LongAdder();
        final LongAdder authenticated = new LongAdder();
        final LongAdder authenticationFailed = new LongAdder();
    }

    private static int maxApiKey() {
        int max = 0;
        for (ApiMessageType api : ApiMessageType.values()) {
            max = Math.max(max, api.apiKey);
        }
        return max;
    }

    private static int versionSlots(ApiMessageType api) {
        return api.highestSchemaVersion + 1;
    }

    // ---------------------------------------------------------------- recording (hot path)

    @Override
    public void connectionOpened(String listenerName) {
        ListenerStats listener = listener(listenerName);
        listener.open.increment();
        listener.created.increment();
    }

    @Override
    public void connectionClosed(String listenerName) {
        ListenerStats listener = listener(listenerName);
        listener.open.decrement();
        listener.closed.increment();
    }

    @Override
    public void authenticationSucceeded(String listenerName) {
        listener(listenerName).authenticated.increment();
    }

    @Override
    public void authenticationFailed(String listenerName) {
        listener(listenerName).authenticationFailed.increment();
    }

    private ListenerStats listener(String listenerName) {
        ListenerStats listener = listeners.get(listenerName);
        return listener != null ? listener : listeners.computeIfAbsent(listenerName, name -> new ListenerStats());
    }

    @Override
    public void responseCreated(Request request, ApiMessage response) {
        try {
            ErrorCounts.count(response, request.header().api().apiKey, this);
        } catch (RuntimeException e) {
            reportFailure(e); // a metrics bug must not cost the client its answer
        }
    }

    private void reportFailure(RuntimeException e) {
        if (!failureReported) {
            failureReported = true;
            LOG.error("Recording request metrics failed; the metrics may be incomplete (logged once)", e);
        }
    }

    @Override
    public void error(int apiKey, short errorCode) {
        AtomicReferenceArray<LongAdder> perError = errors.get(apiKey);
        if (perError == null) {
            errors.compareAndSet(apiKey, null, new AtomicReferenceArray<>(ERRORS.length));
            perError = errors.get(apiKey);
        }
        int index = ErrorCode.forCode(errorCode).ordinal();
        LongAdder count = perError.get(index);
        if (count == null) {
            perError.compareAndSet(index, null, new LongAdder());
            count = perError.get(index);
        }
        count.increment();
    }

    @Override
    public void requestCompleted(Request request, long completedNanos) {
        ApiMessageType api = request.header().api();
        int version = request.apiVersion();
        if (version < 0 || version > api.highestSchemaVersion) {
            return; // a version no schema has: the request was refused; not worth a series
        }
        long received = request.receivedNanos();
        long responded = request.responseNanos() == 0 ? completedNanos : request.responseNanos();
        // Never dequeued: refused before a handler saw it; its whole time counts as queue time.
        long dequeued = request.dequeuedNanos() == 0 ? responded : request.dequeuedNanos();
        long handlerReturned = request.localCompleteNanos();
        long localComplete = handlerReturned == 0 || handlerReturned > responded ? responded : handlerReturned;
        try {
            record(api, version, api == ApiMessageType.FETCH && isFromFollower(request), received, dequeued, localComplete, responded,
                completedNanos);
        } catch (RuntimeException e) {
            reportFailure(e); // the event loop must go on releasing the request and serving the connection
        }
    }

    /** Records one request whose stage boundaries are known (nanoseconds, non-decreasing). */
    void record(ApiMessageType api, int version, boolean fromFollower, long received, long dequeued, long localComplete, long responded,
                long completed) {
        stats(api, version).record(received, dequeued, localComplete, responded, completed);
        if (api == ApiMessageType.FETCH) {
            AtomicReferenceArray<Stats> fetchStats = fromFollower ? followerFetch : consumerFetch;
            slot(fetchStats, version, fromFollower ? FOLLOWER_FETCH : CONSUMER_FETCH).record(received, dequeued, localComplete, responded, completed);
        }
    }

    private static boolean isFromFollower(Request request) {
        if (request.body() instanceof FetchRequestData fetch) {
            int replicaId = request.apiVersion() >= 15 ? fetch.replicaState().replicaId() : fetch.replicaId();
            return replicaId >= 0;
        }
        return false;
    }

    private Stats stats(ApiMessageType api, int version) {
        AtomicReferenceArray<Stats> versions = stats.get(api.apiKey);
        if (versions == null) {
            stats.compareAndSet(api.apiKey, null, new AtomicReferenceArray<>(versionSlots(api)));
            versions = stats.get(api.apiKey);
        }
        return slot(versions, version, api.apiName);
    }

    private static Stats slot(AtomicReferenceArray<Stats> versions, int version, String requestName) {
        Stats existing = versions.get(version);
        if (existing != null) {
            return existing;
        }
        versions.compareAndSet(version, null, new Stats(requestName, version));
        return versions.get(version);
    }

    // ---------------------------------------------------------------- scrape

    @Override
    public void collect(List<MetricFamily> out) {
        MetricFamily requests = MetricFamily.counter("kafka_network_requestmetrics_requests_total",
            "Requests completed, by request type and version (Kafka's RequestsPerSec).", "request", "version");
        MetricFamily queue = latencyFamily("kafka_network_requestmetrics_requestqueuetimems",
            "Time a request waited in the request channel, ms.");
        MetricFamily local = latencyFamily("kafka_network_requestmetrics_localtimems", "Time the request handler worked on a request, ms.");
        MetricFamily remote = latencyFamily("kafka_network_requestmetrics_remotetimems",
            "Time a request waited after its handler returned (purgatory, coordinator), ms.");
        MetricFamily send = latencyFamily("kafka_network_requestmetrics_responsesendtimems",
            "Time from a request's answer to its response being written, ms.");
        MetricFamily total = latencyFamily("kafka_network_requestmetrics_totaltimems",
            "Time from a request's arrival to its response being written, ms.");
        for (int api = 0; api < API_SLOTS; api++) {
            collectVersions(stats.get(api), requests, queue, local, remote, send, total);
        }
        collectVersions(consumerFetch, requests, queue, local, remote, send, total);
        collectVersions(followerFetch, requests, queue, local, remote, send, total);
        out.addAll(List.of(requests, queue, local, remote, send, total));
        out.add(errorFamily());
        collectConnections(out);
    }

    private static MetricFamily latencyFamily(String name, String help) {
        return MetricFamily.histogram(name, help, "request", "version");
    }

    private static void collectVersions(AtomicReferenceArray<Stats> versions, MetricFamily requests, MetricFamily queue, MetricFamily local,
                                        MetricFamily remote, MetricFamily send, MetricFamily total) {
        if (versions == null) {
            return;
        }
        for (int version = 0; version < versions.length(); version++) {
            Stats each = versions.get(version);
            if (each == null) {
                continue;
            }
            requests.add(each.requests.sum(), each.request, each.version);
            queue.addHistogram(each.queueTime.snapshot(), Histogram.NANOS_PER_MS, each.request, each.version);
            local.addHistogram(each.localTime.snapshot(), Histogram.NANOS_PER_MS, each.request, each.version);
            remote.addHistogram(each.remoteTime.snapshot(), Histogram.NANOS_PER_MS, each.request, each.version);
            send.addHistogram(each.responseSendTime.snapshot(), Histogram.NANOS_PER_MS, each.request, each.version);
            total.addHistogram(each.totalTime.snapshot(), Histogram.NANOS_PER_MS, each.request, each.version);
        }
    }

    private MetricFamily errorFamily() {
        MetricFamily family = MetricFamily.counter("kafka_network_requestmetrics_errors_total",
            "Error codes in responses, by request type and error (NONE included, as in Kafka's ErrorsPerSec).", "request", "error");
        for (ApiMessageType api : ApiMessageType.values()) {
            AtomicReferenceArray<LongAdder> perError = errors.get(api.apiKey);
            if (perError == null) {
                continue;
            }
            for (int i = 0; i < perError.length(); i++) {
                LongAdder count = perError.get(i);
                if (count != null) {
                    family.add(count.sum(), api.apiName, ERRORS[i].name());
                }
            }
        }
        return family;
    }

    private void collectConnections(List<MetricFamily> out) {
        MetricFamily open = MetricFamily.gauge("kafka_server_socketservermetrics_connections",
            "Open connections, by listener (Kafka's connection-count).", "listener");
        MetricFamily created = MetricFamily.counter("kafka_server_socketservermetrics_connection_creation_total",
            "Connections accepted, by listener.", "listener");
        MetricFamily closed = MetricFamily.counter("kafka_server_socketservermetrics_connection_close_total",
            "Connections closed, by listener.", "listener");
        MetricFamily authenticated = MetricFamily.counter("kafka_server_socketservermetrics_successful_authentication_total",
            "Connections that authenticated (TLS handshakes completed), by listener.", "listener");
        MetricFamily failed = MetricFamily.counter("kafka_server_socketservermetrics_failed_authentication_total",
            "Connections refused in authentication (failed TLS handshakes), by listener.", "listener");
        for (Map.Entry<String, ListenerStats> entry : new java.util.TreeMap<>(listeners).entrySet()) {
            open.add(entry.getValue().open.sum(), entry.getKey());
            created.add(entry.getValue().created.sum(), entry.getKey());
            closed.add(entry.getValue().closed.sum(), entry.getKey());
            authenticated.add(entry.getValue().authenticated.sum(), entry.getKey());
            failed.add(entry.getValue().authenticationFailed.sum(), entry.getKey());
        }
        out.addAll(List.of(open, created, closed, authenticated, failed));
    }

    /** Registers a listener so its series exist (at 0) before its first connection. */
    public void registerListener(String listenerName) {
        listener(listenerName);
    }
}
