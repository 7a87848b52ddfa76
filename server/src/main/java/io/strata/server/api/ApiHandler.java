package io.strata.server.api;

import io.strata.server.network.Request;

/**
 * Handles one API. The dispatcher has already checked that the version is advertised and
 * parsed the body ({@link Request#body()}). The handler answers the request exactly once,
 * now or later (from the purgatory), with Kafka's error codes for every failure it knows.
 */
@FunctionalInterface
public interface ApiHandler {
    void handle(Request request);
}
