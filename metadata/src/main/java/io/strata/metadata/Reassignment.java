package io.strata.metadata;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A partition reassignment (KIP-455) as the controller holds it in a partition's registration:
 * the full replica list while it runs, the replicas being added and those being removed. Pure
 * value; immutable and thread-safe.
 *
 * <p>Starting: a target T over the current (original) replicas O gives replicas = T then O−T (in
 * that order, so the first target replica is the preferred leader), adding = T−O, removing = O−T.
 * O and T are both read back as {@link #original()} = replicas − adding and {@link #target()} =
 * replicas − removing. Worked example: O = [1,2,3], T = [3,4] → replicas [3,4,1,2], adding [4],
 * removing [1,2].
 *
 * <p>Completion ({@link #maybeComplete}): once every adding replica is in the ISR, the replicas
 * become T and the ISR becomes ISR ∩ T, unless that ISR would be empty. A target smaller than the
 * original also needs every member of T in the ISR, so that completing never shrinks the ISR
 * (KAFKA-15665 as relaxed by KAFKA-19975: a member of both O and T that is out of the ISR does not
 * block a reassignment that does not shrink the replica set).
 *
 * <p>Cancel ({@link #revert}), as Kafka 4.4's PartitionReassignmentRevert: replicas = O, ISR =
 * ISR − adding; if that ISR is empty it becomes [O[0]] and the revert is unclean (the controller
 * allows it only with unclean leader election enabled for the topic). O[0] then leads as an ISR
 * member, so the election that follows is a clean one unless O[0] cannot lead.
 *
 * @param replicas every replica while it runs (T then O−T); never empty
 * @param adding   T − O, in T's order
 * @param removing O − T, in O's order
 */
public record Reassignment(List<Integer> replicas, List<Integer> adding, List<Integer> removing) {
    public Reassignment {
        replicas = List.copyOf(replicas);
        adding = List.copyOf(adding);
        removing = List.copyOf(removing);
        if (replicas.isEmpty()) {
            throw new IllegalArgumentException("a reassignment needs replicas: replicas=" + replicas + ", adding=" + adding + ", removing=" + removing);
        }
        if (!replicas.containsAll(adding) || !replicas.containsAll(removing)) {
            throw new IllegalArgumentException("adding and removing must be replicas: replicas=" + replicas + ", adding=" + adding
                + ", removing=" + removing);
        }
        for (int id : adding) {
            if (removing.contains(id)) {
                throw new IllegalArgumentException("replica " + id + " is both added and removed: replicas=" + replicas + ", adding=" + adding
                    + ", removing=" + removing);
            }
        }
    }

    /** The reassignment from {@code original} to {@code target} (both duplicate-free and non-empty). */
    public static Reassignment of(List<Integer> original, List<Integer> target) {
        List<Integer> replicas = new ArrayList<>(target);
        List<Integer> removing = new ArrayList<>();
        for (int id : original) {
            if (!target.contains(id)) {
                replicas.add(id);
                removing.add(id);
            }
        }
        List<Integer> adding = new ArrayList<>();
        for (int id : target) {
            if (!original.contains(id)) {
                adding.add(id);
            }
        }
        return new Reassignment(replicas, adding, removing);
    }

    /** The reassignment recorded in {@code partition} (adding and removing empty when none runs). */
    public static Reassignment of(PartitionRegistration partition) {
        return new Reassignment(PartitionRegistration.toList(partition.replicas()), PartitionRegistration.toList(partition.addingReplicas()),
            PartitionRegistration.toList(partition.removingReplicas()));
    }

    /** True while replicas are being added or removed. */
    public boolean inProgress() {
        return !adding.isEmpty() || !removing.isEmpty();
    }

    /** The replicas before the reassignment: replicas − adding. */
    public List<Integer> original() {
        return without(replicas, adding);
    }

    /** The replicas after it: replicas − removing. */
    public List<Integer> target() {
        return without(replicas, removing);
    }

    /** The replicas and ISR a completed reassignment leaves. */
    public record Completed(List<Integer> replicas, List<Integer> isr) {
    }

    /** The completion that {@code targetIsr} allows, or empty (none in progress, or not yet caught up); see the class javadoc. */
    public Optional<Completed> maybeComplete(List<Integer> targetIsr) {
        if (!inProgress()) {
            return Optional.empty();
        }
        List<Integer> newIsr = without(targetIsr, removing);
        List<Integer> newReplicas = target();
        if (newIsr.isEmpty() || !newIsr.containsAll(adding)) {
            return Optional.empty();
        }
        boolean shrinks = newReplicas.size() < original().size();
        if (shrinks && !newIsr.containsAll(newReplicas)) {
            return Optional.empty();
        }
        return Optional.of(new Completed(newReplicas, newIsr));
    }

    /** What cancelling leaves: replicas = original, ISR = {@code isr} − adding, or [original[0]] (unclean) if that is empty. */
    public record Revert(List<Integer> replicas, List<Integer> isr, boolean unclean) {
    }

    /** The revert of this reassignment with the current {@code isr}; see the class javadoc. */
    public Revert revert(List<Integer> isr) {
        List<Integer> original = original();
        if (original.isEmpty()) {
            // Unreachable for a registration built by the controller: the original replicas are never all being added.
            throw new IllegalStateException("adding holds every replica: replicas=" + replicas + ", adding=" + adding + ", removing=" + removing);
        }
        List<Integer> revertedIsr = without(isr, adding);
        if (revertedIsr.isEmpty()) {
            return new Revert(original, List.of(original.get(0)), true);
        }
        return new Revert(original, revertedIsr, false);
    }

    private static List<Integer> without(List<Integer> values, List<Integer> removed) {
        List<Integer> kept = new ArrayList<>(values.size());
        for (int value : values) {
            if (!removed.contains(value)) {
                kept.add(value);
            }
        }
        return kept;
    }
}
