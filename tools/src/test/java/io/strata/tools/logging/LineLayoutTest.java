package io.strata.tools.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import org.junit.jupiter.api.Test;

import java.time.LocalDateTime;
import java.time.ZoneId;

import static org.assertj.core.api.Assertions.assertThat;

class LineLayoutTest {
    private final LoggerContext context = new LoggerContext();
    private final Logger logger = context.getLogger("io.strata.server.StrataServer");

    private String layout(Level level, String message, Throwable thrown, Object... arguments) {
        LineLayout layout = new LineLayout();
        layout.setContext(context);
        layout.start();
        LoggingEvent event = new LoggingEvent(Logger.FQCN, logger, level, message, thrown, arguments);
        event.setThreadName("main");
        long millis = LocalDateTime.of(2026, 11, 29, 20, 11, 5, 123_000_000).atZone(ZoneId.systemDefault()).toInstant().toEpochMilli();
        event.setTimeStamp(millis);
        return layout.doLayout(event);
    }

    @Test
    void oneLineWithPaddedLevelThreadAndSimpleLoggerName() {
        assertThat(layout(Level.INFO, "started in {} ms", null, 42))
            .isEqualTo("2026-11-29 20:11:05.123 INFO  [main] StrataServer: started in 42 ms" + System.lineSeparator());
        assertThat(layout(Level.ERROR, "x", null)).startsWith("2026-11-29 20:11:05.123 ERROR [main] StrataServer: x");
    }

    @Test
    void exceptionFollowsTheLineWithItsStackTrace() {
        String text = layout(Level.WARN, "failed", new IllegalStateException("boom"));
        assertThat(text).startsWith("2026-11-29 20:11:05.123 WARN  [main] StrataServer: failed" + System.lineSeparator()
            + "java.lang.IllegalStateException: boom");
        assertThat(text).contains("at io.strata.tools.logging.LineLayoutTest");
    }

    @Test
    void rootLevelFromTheEnvironmentDefaultsToInfo() {
        assertThat(LogConfigurator.rootLevel(null)).isEqualTo(Level.INFO);
        assertThat(LogConfigurator.rootLevel(" ")).isEqualTo(Level.INFO);
        assertThat(LogConfigurator.rootLevel("debug")).isEqualTo(Level.DEBUG);
        assertThat(LogConfigurator.rootLevel("WARN")).isEqualTo(Level.WARN);
        assertThat(LogConfigurator.rootLevel("nonsense")).isEqualTo(Level.INFO);
    }

    @Test
    void configuresTheContextUnlessAConfigurationFileIsGiven() {
        // Tests have logback-test.xml on the class path, so the configurator steps aside for it.
        LoggerContext fresh = new LoggerContext();
        LogConfigurator configurator = new LogConfigurator();
        configurator.setContext(fresh);
        assertThat(configurator.configure(fresh)).isEqualTo(ch.qos.logback.classic.spi.Configurator.ExecutionStatus.INVOKE_NEXT_IF_ANY);
        assertThat(fresh.getLogger(Logger.ROOT_LOGGER_NAME).iteratorForAppenders().hasNext()).isFalse();
    }
}
