package io.strata.server.metrics;

import io.strata.coordinator.group.GroupCoordinator;
import io.strata.coordinator.transaction.TransactionCoordinator;
import io.strata.storage.LogManager;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The broker's liveness and readiness, as {@code /health/live} and {@code /health/ready}
 * report them.
 *
 * <ul>
 *   <li>Live: the process answers and no threads are deadlocked (a deadlock is the one
 *       failure a restart fixes and nothing else detects).</li>
 *   <li>Ready, in start-up order: the metadata log is replayed, the partition logs are loaded
 *       (recovered after an unclean shutdown), the group and transaction coordinators have
 *       loaded the partitions they lead, and the listeners are bound with the request handlers
 *       running; and the broker is not shutting down. The first check that fails is the reason.
 *       A node without the broker role (a controller only) has no partition logs or
 *       coordinators: it is ready once it has replayed the metadata log and serves its listeners.</li>
 * </ul>
 *
 * <p>Thread-safe; every check reads volatile state.
 */
public final class HealthChecks {
    private final Sources sources;

    /**
     * What the checks read from the node, each at check time. A component supplier answers null
     * until start-up creates the component (and always on a node without the broker role).
     *
     * @param metadataLoaded                whether the metadata log has been replayed into the image
     * @param recoveringFromUncleanShutdown whether this start follows an unclean shutdown (so loading the logs recovers them)
     * @param started                       whether the listeners are bound and the request handlers run
     * @param shuttingDown                  whether the controlled shutdown has begun
     * @param brokerRole                    whether the node has the broker role (and so partition logs and coordinators to wait for)
     */
    public record Sources(BooleanSupplier metadataLoaded, BooleanSupplier recoveringFromUncleanShutdown, BooleanSupplier started,
                          BooleanSupplier shuttingDown, Supplier<LogManager> logManager, Supplier<GroupCoordinator> groupCoordinator,
                          Supplier<TransactionCoordinator> transactionCoordinator, boolean brokerRole) {
        /** The sources of a node with the broker role. */
        public Sources(BooleanSupplier metadataLoaded, BooleanSupplier recoveringFromUncleanShutdown, BooleanSupplier started,
                       BooleanSupplier shuttingDown, Supplier<LogManager> logManager, Supplier<GroupCoordinator> groupCoordinator,
                       Supplier<TransactionCoordinator> transactionCoordinator) {
            this(metadataLoaded, recoveringFromUncleanShutdown, started, shuttingDown, logManager, groupCoordinator, transactionCoordinator, true);
        }

        public Sources {
            Objects.requireNonNull(metadataLoaded, "metadataLoaded");
            Objects.requireNonNull(recoveringFromUncleanShutdown, "recoveringFromUncleanShutdown");
            Objects.requireNonNull(started, "started");
            Objects.requireNonNull(shuttingDown, "shuttingDown");
            Objects.requireNonNull(logManager, "logManager");
            Objects.requireNonNull(groupCoordinator, "groupCoordinator");
            Objects.requireNonNull(transactionCoordinator, "transactionCoordinator");
        }
    }

    /**
     * @param healthy whether every check passed
     * @param reason  the first failed check's explanation, or null
     * @param checks  every check by name: "ok" or what it waits for
     */
    public record Status(boolean healthy, String reason, Map<String, String> checks) {
        /** The JSON body: {@code {"status":"ready","checks":{...}}}, or "not ready" with the reason. */
        public String toJson(String healthyWord, String unhealthyWord) {
            StringBuilder json = new StringBuilder("{\"status\":");
            appendString(json, healthy ? healthyWord : unhealthyWord);
            if (reason != null) {
                json.append(",\"reason\":");
                appendString(json, reason);
            }
            json.append(",\"checks\":{");
            boolean first = true;
            for (Map.Entry<String, String> check : checks.entrySet()) {
                if (!first) {
                    json.append(',');
                }
                first = false;
                appendString(json, check.getKey());
                json.append(':');
                appendString(json, check.getValue());
            }
            return json.append("}}").toString();
        }

        private static void appendString(StringBuilder json, String value) {
            json.append('"');
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                switch (c) {
                    case '"' -> json.append("\\\"");
                    case '\\' -> json.append("\\\\");
                    case '\n' -> json.append("\\n");
                    case '\r' -> json.append("\\r");
                    case '\t' -> json.append("\\t");
                    default -> {
                        if (c < 0x20) {
                            json.append(String.format("\\u%04x", (int) c));
                        } else {
                            json.append(c);
                        }
                    }
                }
            }
            json.append('"');
        }
    }

    public HealthChecks(Sources sources) {
        this.sources = Objects.requireNonNull(sources, "sources");
    }

    public Status liveness() {
        Map<String, String> checks = new LinkedHashMap<>();
        long[] deadlocked = ManagementFactory.getThreadMXBean().findDeadlockedThreads();
        String threads = deadlocked == null ? "ok" : deadlocked.length + " threads are deadlocked";
        checks.put("threads", threads);
        return new Status(deadlocked == null, deadlocked == null ? null : threads, checks);
    }

    public Status readiness() {
        Map<String, String> checks = new LinkedHashMap<>();
        checks.put("metadata", sources.metadataLoaded().getAsBoolean() ? "ok" : "replaying the metadata log");
        if (sources.brokerRole()) {
            checks.put("logs", logsCheck());
            checks.put("coordinators", coordinatorsCheck());
        }
        checks.put("listeners", sources.started().getAsBoolean() ? "ok" : "listeners and request handlers not started");
        if (sources.shuttingDown().getAsBoolean()) {
            checks.put("shutdown", "shutting down");
        }
        String reason = null;
        for (Map.Entry<String, String> check : checks.entrySet()) {
            if (!check.getValue().equals("ok")) {
                reason = check.getKey() + ": " + check.getValue();
                break;
            }
        }
        return new Status(reason == null, reason, checks);
    }

    private String logsCheck() {
        LogManager logManager = sources.logManager().get();
        if (logManager == null) {
            return "log manager not created";
        }
        if (logManager.isLoaded()) {
            return "ok";
        }
        String what = sources.recoveringFromUncleanShutdown().getAsBoolean() ? "log recovery in progress (unclean shutdown)" : "loading partition logs";
        return what + ": " + logManager.loadingRemaining() + " partition logs remaining";
    }

    private String coordinatorsCheck() {
        GroupCoordinator groups = sources.groupCoordinator().get();
        TransactionCoordinator transactions = sources.transactionCoordinator().get();
        if (groups == null || transactions == null) {
            return "coordinators not created";
        }
        if (!groups.isLoaded()) {
            return "group coordinator loading __consumer_offsets";
        }
        if (!transactions.isLoaded()) {
            return "transaction coordinator loading __transaction_state";
        }
        return "ok";
    }
}
