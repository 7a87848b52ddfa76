package io.strata.server.network;

/** What handler threads do with each request. Implementations answer every request exactly once. */
@FunctionalInterface
public interface RequestDispatcher {
    void dispatch(Request request);
}
