package io.strata.it.cluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A third-party client (kcat, node) run as a child process while a test changes the cluster under
 * it: its stdout and stderr lines are collected as they arrive, so that the test can wait on what
 * the client reported so far (acknowledged offsets, delivery reports), feed its stdin, and at the
 * end require a clean exit.
 *
 * <p>Memory is bounded: each stream keeps at most {@link #MAX_LINES_PER_STREAM} lines; a client
 * that prints more fails the test ({@link #stdout}/{@link #stderr} throw) rather than being
 * truncated silently. A reader that fails records the failure the same way.
 *
 * <p>Thread-safety: the line lists are appended to by one reader thread per stream and may be
 * read from any thread; {@link #write}, {@link #closeInput}, {@link #awaitExit} and {@link #close}
 * are for one controlling thread (or a feeder it hands stdin to, never both at once).
 */
final class ClientProcess implements AutoCloseable {
    /** Lines kept per stream: far above what one test's client prints (tens of thousands of reports). */
    static final int MAX_LINES_PER_STREAM = 500_000;
    /** Lines of stderr quoted when the client fails. */
    private static final int STDERR_TAIL_LINES = 30;

    private final String name;
    private final Process process;
    private final OutputStream stdin;
    private final List<String> stdout = new ArrayList<>();
    private final List<String> stderr = new ArrayList<>();
    private final AtomicReference<Throwable> readerFailure = new AtomicReference<>();

    private ClientProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        this.stdin = process.getOutputStream();
    }

    /** Starts {@code command}; {@code name} labels its reader threads and failure messages. */
    static ClientProcess start(String name, List<String> command) throws IOException {
        ClientProcess started = new ClientProcess(name, new ProcessBuilder(command).start());
        started.read(started.process.getInputStream(), started.stdout, "stdout");
        started.read(started.process.getErrorStream(), started.stderr, "stderr");
        return started;
    }

    private void read(InputStream stream, List<String> into, String streamName) {
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    synchronized (into) {
                        if (into.size() >= MAX_LINES_PER_STREAM) {
                            throw new IllegalStateException(name + " printed more than " + MAX_LINES_PER_STREAM + " lines on " + streamName);
                        }
                        into.add(line);
                    }
                }
            } catch (IOException e) {
                // The process was destroyed and its pipe closed: no more lines.
            } catch (RuntimeException e) {
                readerFailure.compareAndSet(null, e);
            }
        }, name + "-" + streamName);
        reader.setDaemon(true);
        reader.start();
    }

    /** Every stdout line so far. */
    List<String> stdout() {
        return snapshot(stdout);
    }

    /** Every stderr line so far. */
    List<String> stderr() {
        return snapshot(stderr);
    }

    private List<String> snapshot(List<String> lines) {
        Throwable failure = readerFailure.get();
        if (failure != null) {
            throw new AssertionError("reading the output of " + name + " failed", failure);
        }
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    /** Writes {@code text} to the client's stdin and flushes it. */
    void write(String text) throws IOException {
        stdin.write(text.getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    /** Closes the client's stdin: end of its input. */
    void closeInput() throws IOException {
        stdin.close();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Fails at once if the client exited with a non-zero code; for use inside wait conditions,
     * so that a crashed client fails the wait with its stderr instead of running it to the deadline.
     */
    void requireNotFailed() {
        if (!process.isAlive() && process.exitValue() != 0) {
            throw new AssertionError(name + " exited with " + process.exitValue() + "; stderr:\n" + stderrTail());
        }
    }

    /** Waits for the client to exit, failing with its stderr tail unless it exits 0 within {@code timeout}. */
    void awaitCleanExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError(name + " did not exit within " + timeout + "; stderr:\n" + stderrTail());
        }
        if (process.exitValue() != 0) {
            throw new AssertionError(name + " exited with " + process.exitValue() + "; stderr:\n" + stderrTail());
        }
    }

    /** The last lines of stderr, for failure messages. */
    String stderrTail() {
        synchronized (stderr) {
            return String.join("\n", stderr.subList(Math.max(0, stderr.size() - STDERR_TAIL_LINES), stderr.size()));
        }
    }

    /** Kills the client if it still runs (SIGKILL) and waits for it to go. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
        try {
            stdin.close();
        } catch (IOException e) {
            // the pipe is gone with the process
        }
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                throw new AssertionError(name + " (process " + process.pid() + ") still runs 30 s after SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the caller is being torn down; the kill was sent
        }
    }
}
