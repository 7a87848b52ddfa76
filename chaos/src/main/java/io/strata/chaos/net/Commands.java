package io.strata.chaos.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs the short administrative commands of the harness ({@code ip}, {@code nft}, {@code tc},
 * {@code kill}) and turns a failure into a {@link CommandFailedException} with the command,
 * its exit code and its standard error. Every command gets {@link #COMMAND_TIMEOUT_SECONDS};
 * its output is captured through temporary files, so a chatty command cannot block on a full pipe.
 *
 * <p>Stateless and thread-safe.
 */
public final class Commands {
    /** An administrative command that takes longer than this is hung (a netns delete takes milliseconds). */
    public static final long COMMAND_TIMEOUT_SECONDS = 30;

    private Commands() {
    }

    /** Runs {@code command}; returns its standard output; throws if it exits non-zero or times out. */
    public static String run(List<String> command) {
        Result result = runAllowingFailure(command);
        if (result.exitCode() != 0) {
            throw new CommandFailedException(command, result.exitCode(), result.stderr());
        }
        return result.stdout();
    }

    /** Runs {@code command} and returns its outcome whatever the exit code; throws only if it times out. */
    public static Result runAllowingFailure(List<String> command) {
        Path out = null;
        Path err = null;
        try {
            out = Files.createTempFile("strata-chaos-cmd", ".out");
            err = Files.createTempFile("strata-chaos-cmd", ".err");
            Process process = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!process.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new CommandFailedException(command, -1, "timed out after " + COMMAND_TIMEOUT_SECONDS + " s; " + read(err));
            }
            return new Result(process.exitValue(), read(out), read(err));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CommandFailedException(command, -1, "interrupted");
        } finally {
            deleteQuietly(out);
            deleteQuietly(err);
        }
    }

    /** Whether {@code executable} runs at all (for the root-only tests' assumptions). */
    public static boolean available(List<String> versionCommand) {
        try {
            return runAllowingFailure(versionCommand).exitCode() == 0;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static String read(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static void deleteQuietly(Path file) {
        if (file == null) {
            return;
        }
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // A temporary file in /tmp; nothing depends on its removal.
        }
    }

    /** The outcome of a command. */
    public record Result(int exitCode, String stdout, String stderr) {
    }
}
