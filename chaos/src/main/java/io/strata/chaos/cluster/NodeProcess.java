package io.strata.chaos.cluster;

import io.strata.chaos.net.Commands;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One chaos node's server process and its state. Transitions (anything else throws
 * {@link IllegalStateException} naming the node, its state and the move):
 * <pre>
 *   STOPPED --started(process)--> RUNNING
 *   RUNNING --pause()-----------> PAUSED      kill -STOP PID
 *   PAUSED  --resume()----------> RUNNING     kill -CONT PID
 *   RUNNING|PAUSED --kill9()----> STOPPED     SIGKILL (Process.destroyForcibly), then wait for exit
 *   RUNNING --(process exits by itself; seen by refresh())--> STOPPED
 * </pre>
 * {@code ip netns exec} execs the server in place, so the process's pid is the JVM's own.
 *
 * <p>Thread-safe: every method is synchronized.
 */
final class NodeProcess {
    /** How long a SIGKILLed process may take to be reaped. */
    static final long KILL_WAIT_SECONDS = 30;

    enum State { STOPPED, RUNNING, PAUSED }

    private final int node;
    private State state = State.STOPPED;
    private Process process;

    NodeProcess(int node) {
        this.node = node;
    }

    synchronized State state() {
        refresh();
        return state;
    }

    /** The running process's pid, or -1 when stopped. */
    synchronized long pid() {
        refresh();
        return process == null || state == State.STOPPED ? -1 : process.pid();
    }

    synchronized void started(Process started) {
        refresh();
        require(State.STOPPED, "start");
        process = started;
        state = State.RUNNING;
    }

    synchronized void pause() {
        refresh();
        require(State.RUNNING, "pause");
        Commands.run(List.of("kill", "-STOP", Long.toString(process.pid())));
        state = State.PAUSED;
    }

    synchronized void resume() {
        refresh();
        require(State.PAUSED, "resume");
        Commands.run(List.of("kill", "-CONT", Long.toString(process.pid())));
        state = State.RUNNING;
    }

    synchronized void kill9() throws InterruptedException {
        refresh();
        if (state == State.STOPPED) {
            throw new IllegalStateException("cannot kill node " + node + ": state=" + state);
        }
        process.destroyForcibly();
        if (!process.waitFor(KILL_WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("node " + node + " (pid " + process.pid() + ") still alive "
                + KILL_WAIT_SECONDS + " s after SIGKILL");
        }
        state = State.STOPPED;
    }

    /** Kills the process if it runs, without state checks; for close(). Idempotent. */
    synchronized void destroy() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(KILL_WAIT_SECONDS, TimeUnit.SECONDS);
        }
        state = State.STOPPED;
    }

    /** A process that exited by itself (crash, failed start) is STOPPED. */
    private void refresh() {
        if (state != State.STOPPED && !process.isAlive()) {
            state = State.STOPPED;
        }
    }

    private void require(State expected, String move) {
        if (state != expected) {
            throw new IllegalStateException("cannot " + move + " node " + node + ": state=" + state + " expected=" + expected);
        }
    }
}
