package io.strata.it;

import org.apache.kafka.common.utils.internals.Exit;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Runs one of Apache Kafka's command-line tools in this JVM through its {@code main}, as the
 * {@code kafka-*.sh} scripts do, with stdin given and stdout/stderr captured.
 *
 * <p>Kafka's tools end through {@link Exit#exit}; while a tool runs, the exit and halt
 * procedures throw {@link ExitCalled} instead of ending the JVM. The first status passed to them
 * is the tool's exit code (0 when {@code main} returns without one): some tools (TopicCommand)
 * catch every Throwable around their own {@code Exit.exit(0)} and exit again with 1, which the
 * script's JVM would never reach. Shutdown hooks the tools register are dropped: they belong to
 * the tool's own JVM and would run (and wait for the tool) when this test JVM ends. {@code System.in/out/err} are process-wide, so
 * runs are serialised on the class; the tests of this module run one at a time anyway.
 */
public final class KafkaTool {
    private KafkaTool() {
    }

    /** What a tool printed and its exit status. */
    public record Result(int exitCode, String stdout, String stderr) {
        /**
         * The non-blank stdout lines, without the log lines the admin client's logger writes to
         * the same System.out through this module's logback console appender (they start with
         * the {@code HH:mm:ss.SSS} of logback-test.xml's pattern; no tool output does).
         */
        public List<String> lines() {
            return stdout.lines().filter(line -> !line.isBlank() && !LOG_LINE.matcher(line).lookingAt()).toList();
        }

        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr;
        }
    }

    private static final java.util.regex.Pattern LOG_LINE = java.util.regex.Pattern.compile("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} ");

    private static final class ExitCalled extends RuntimeException {
        ExitCalled(int status) {
            super("Exit.exit(" + status + ")", null, false, false);
        }
    }

    @FunctionalInterface
    public interface Main {
        void main(String[] args) throws Exception;
    }

    public static Result run(Main main, String... args) {
        return runWithInput("", main, args);
    }

    public static synchronized Result runWithInput(String stdin, Main main, String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        InputStream in = System.in;
        ByteArrayOutputStream capturedOut = new ByteArrayOutputStream();
        ByteArrayOutputStream capturedErr = new ByteArrayOutputStream();
        int[] firstStatus = {-1};
        Exit.Procedure exit = (code, message) -> {
            if (firstStatus[0] < 0) {
                firstStatus[0] = code;
            }
            throw new ExitCalled(code);
        };
        Exit.setExitProcedure(exit);
        Exit.setHaltProcedure(exit);
        // ConsoleConsumer's hook waits for its loop to finish; in this JVM the loop is long gone when the hooks run.
        Exit.setShutdownHookAdder((name, hook) -> { });
        try {
            System.setOut(new PrintStream(capturedOut, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(capturedErr, true, StandardCharsets.UTF_8));
            System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
            main.main(args);
        } catch (ExitCalled exitCalled) {
            // The status is the first one recorded above.
        } catch (Exception e) {
            throw new AssertionError("tool failed with " + Arrays.toString(args) + "\n" + capturedErr.toString(StandardCharsets.UTF_8), e);
        } finally {
            System.out.flush();
            System.err.flush();
            System.setOut(out);
            System.setErr(err);
            System.setIn(in);
            Exit.resetExitProcedure();
            Exit.resetHaltProcedure();
            Exit.resetShutdownHookAdder();
        }
        return new Result(Math.max(firstStatus[0], 0), capturedOut.toString(StandardCharsets.UTF_8), capturedErr.toString(StandardCharsets.UTF_8));
    }
}
