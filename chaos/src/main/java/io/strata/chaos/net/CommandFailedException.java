package io.strata.chaos.net;

import java.util.List;

/**
 * A harness command (ip, nft, tc, kill) that exited with a non-zero status or did not finish in
 * time. Carries the command, its exit code (-1 when it timed out) and its standard error, so a
 * failed fault injection names exactly what was run.
 */
public final class CommandFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final List<String> command;
    private final int exitCode;
    private final String stderr;

    public CommandFailedException(List<String> command, int exitCode, String stderr) {
        super("command failed: " + String.join(" ", command) + " exitCode=" + exitCode + " stderr=" + stderr.strip());
        this.command = List.copyOf(command);
        this.exitCode = exitCode;
        this.stderr = stderr;
    }

    public List<String> command() {
        return command;
    }

    /** The exit status, or -1 when the command was killed after its timeout. */
    public int exitCode() {
        return exitCode;
    }

    public String stderr() {
        return stderr;
    }
}
