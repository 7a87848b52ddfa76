package io.strata.it.cluster;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

import java.lang.reflect.Field;

/**
 * On a failure of a test or of its {@code @BeforeAll}/{@code @BeforeEach}/{@code @AfterEach}, prints the tail of
 * every node's log of each {@link ClusterHarness} field of the test instance, and attaches it to
 * the failure as a suppressed exception so that it shows in the build output too. Runs before
 * {@code @AfterEach} closes the harness and before {@code @TempDir} deletes the logs.
 */
public final class PrintClusterLogsOnFailure implements TestExecutionExceptionHandler, LifecycleMethodExecutionExceptionHandler {
    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable throwable) throws Throwable {
        throw withLogs(context, throwable);
    }

    @Override
    public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable throwable) throws Throwable {
        throw withLogs(context, throwable); // the instance is there with @TestInstance(PER_CLASS), which @BeforeAll set-ups use
    }

    @Override
    public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable throwable) throws Throwable {
        throw withLogs(context, throwable);
    }

    @Override
    public void handleAfterEachMethodExecutionException(ExtensionContext context, Throwable throwable) throws Throwable {
        throw withLogs(context, throwable);
    }

    private static Throwable withLogs(ExtensionContext context, Throwable throwable) {
        Object instance = context.getTestInstance().orElse(null);
        if (instance == null) {
            return throwable;
        }
        for (Class<?> type = instance.getClass(); type != null; type = type.getSuperclass()) {
            for (Field field : type.getDeclaredFields()) {
                if (!ClusterHarness.class.isAssignableFrom(field.getType())) {
                    continue;
                }
                try {
                    field.setAccessible(true);
                    ClusterHarness cluster = (ClusterHarness) field.get(instance);
                    if (cluster != null) {
                        String tails = cluster.logTails();
                        System.out.println("Test " + context.getDisplayName() + " failed: " + throwable + "\n" + tails);
                        throwable.addSuppressed(new NodeLogs(tails));
                    }
                } catch (IllegalAccessException | RuntimeException e) {
                    throwable.addSuppressed(e);
                }
            }
        }
        return throwable;
    }

    /** Carries the node logs in its message; no stack trace of its own. */
    private static final class NodeLogs extends RuntimeException {
        NodeLogs(String tails) {
            super("node logs:\n" + tails, null, false, false);
        }
    }
}
