package io.strata.tools;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Runs {@link StrataCli#run} in-process with stdin, stdout and stderr redirected, as a shell
 * would run {@code bin/strata}. Tests using it must not run concurrently (the streams are
 * global), which is JUnit's default.
 */
final class CliRunner {
    /** What one invocation printed and returned. */
    record Result(int exitCode, String out, String err) {
        /** Stdout split into lines; empty lines are kept, the final newline ends the last line. */
        List<String> lines() {
            if (out.isEmpty()) {
                return List.of();
            }
            String text = out.endsWith("\n") ? out.substring(0, out.length() - 1) : out;
            return Arrays.asList(text.split("\n", -1));
        }

        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout ---\n" + out + "\n--- stderr ---\n" + err;
        }
    }

    private CliRunner() {
    }

    static Result run(String... args) {
        return runWithInput("", args);
    }

    static Result runWithInput(String stdin, String... args) {
        InputStream originalIn = System.in;
        PrintStream originalOut = System.out;
        PrintStream originalErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exitCode;
        try {
            System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            exitCode = StrataCli.run(args);
        } finally {
            System.setIn(originalIn);
            System.setOut(originalOut);
            System.setErr(originalErr);
        }
        return new Result(exitCode, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
