package io.strata.metadata;

/** Receives every new metadata image, on the controller thread, before the change is acknowledged. */
@FunctionalInterface
public interface MetadataPublisher {
    void publish(MetadataImage previous, MetadataImage current);
}
