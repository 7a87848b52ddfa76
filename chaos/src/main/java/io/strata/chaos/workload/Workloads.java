package io.strata.chaos.workload;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.LongFunction;

/**
 * The workloads by name, for the campaign runner ({@code --workloads idempotent,txn,...}). Each uses topics of
 * its own ({@code chaos-<name>...}), so any set of them runs together in one cluster. The seed reaches the
 * workload through its {@link WorkloadContext}; the factory takes it too so that a future workload may shape
 * itself by it.
 *
 * <table>
 *   <caption>names</caption>
 *   <tr><th>name</th><th>workload</th><th>topics</th></tr>
 *   <tr><td>idempotent</td><td>3 idempotent producers</td><td>chaos-idempotent (6 partitions)</td></tr>
 *   <tr><td>txn</td><td>2 consume-transform-produce workers, 20% aborted</td><td>chaos-txn-in, chaos-txn-out (3 each)</td></tr>
 *   <tr><td>group-classic</td><td>3 consumers, classic protocol, read_uncommitted</td><td>chaos-group-classic (4)</td></tr>
 *   <tr><td>group-consumer</td><td>3 consumers, consumer protocol (KIP-848), read_committed</td><td>chaos-group-consumer (4)</td></tr>
 *   <tr><td>kcat</td><td>kcat -P batches (librdkafka, idempotent)</td><td>chaos-kcat (3)</td></tr>
 * </table>
 *
 * <p>Stateless; thread-safe.
 */
public final class Workloads {
    private static final Map<String, LongFunction<Workload>> FACTORIES = new LinkedHashMap<>();

    static {
        FACTORIES.put("idempotent", seed -> new IdempotentProducerWorkload("chaos-idempotent", 6, 3));
        FACTORIES.put("txn", seed -> new TransactionalWorkload("chaos-txn-in", "chaos-txn-out", 3, 2));
        FACTORIES.put("group-classic", seed -> new ConsumerGroupWorkload("chaos-group-classic", 4, 3, "classic", false));
        FACTORIES.put("group-consumer", seed -> new ConsumerGroupWorkload("chaos-group-consumer", 4, 3, "consumer", true));
        FACTORIES.put("kcat", seed -> new KcatProducerWorkload("chaos-kcat", 3, 2));
    }

    private Workloads() {
    }

    /**
     * @return a new workload of that name
     * @throws IllegalArgumentException for an unknown name, listing the known ones
     */
    public static Workload create(String name, long seed) {
        LongFunction<Workload> factory = FACTORIES.get(name);
        if (factory == null) {
            throw new IllegalArgumentException("unknown workload: name=" + name + "; known: " + FACTORIES.keySet());
        }
        return factory.apply(seed);
    }

    /** @return the known names, in the order of the table above */
    public static Set<String> names() {
        return java.util.Collections.unmodifiableSet(new java.util.LinkedHashSet<>(FACTORIES.keySet()));
    }
}
