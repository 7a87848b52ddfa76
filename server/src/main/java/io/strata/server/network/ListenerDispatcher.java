package io.strata.server.network;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Dispatches each request by the listener it arrived on: a node serves the controller's APIs on
 * its {@code controller.listener.names} and the broker's on the others, each with its own table
 * and ApiVersions answer, as Kafka's two socket servers do. A listener whose role has no
 * dispatcher yet (a broker still starting) closes the connection: clients reconnect with
 * back-off, and the listener is not bound before then anyway.
 */
public final class ListenerDispatcher implements RequestDispatcher {
    private final Map<String, RequestDispatcher> byListener = new ConcurrentHashMap<>();

    /** Serves {@code listenerName} with {@code dispatcher} from now on. */
    public void register(String listenerName, RequestDispatcher dispatcher) {
        byListener.put(listenerName, dispatcher);
    }

    @Override
    public void dispatch(Request request) {
        RequestDispatcher dispatcher = byListener.get(request.listenerName());
        if (dispatcher == null) {
            request.closeConnection("listener " + request.listenerName() + " is not serving yet");
            return;
        }
        dispatcher.dispatch(request);
    }
}
