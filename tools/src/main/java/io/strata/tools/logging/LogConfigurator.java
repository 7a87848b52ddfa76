package io.strata.tools.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * The logging set-up of the {@code strata} command, in code: one human-readable line per event
 * on stderr ({@link LineLayout}), level INFO or {@code STRATA_LOG_LEVEL}, Netty at WARN.
 *
 * <p>Found by logback through {@code META-INF/services}. It replaces a {@code logback.xml}
 * because parsing XML configuration is the slowest step of a broker's start (~150 ms of a
 * ~0.5 s start). A configuration file still wins: with {@code -Dlogback.configurationFile=...}
 * or a {@code logback-test.xml} on the class path this configurator steps aside and logback
 * reads the file as usual.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_NORMAL_PRIORITY)
public final class LogConfigurator extends ContextAwareBase implements Configurator {
    /** The environment variable that sets the root level (TRACE, DEBUG, INFO, WARN, ERROR, OFF). */
    public static final String LEVEL_VARIABLE = "STRATA_LOG_LEVEL";

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        if (System.getProperty("logback.configurationFile") != null
            || LogConfigurator.class.getClassLoader().getResource("logback-test.xml") != null) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        LineLayout layout = new LineLayout();
        layout.setContext(context);
        layout.start();
        LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
        encoder.setContext(context);
        encoder.setLayout(layout);
        encoder.start();
        ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
        appender.setContext(context);
        appender.setName("STDERR");
        appender.setTarget("System.err");
        appender.setEncoder(encoder);
        appender.start();

        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(rootLevel(System.getenv(LEVEL_VARIABLE)));
        root.addAppender(appender);
        context.getLogger("io.netty").setLevel(Level.WARN);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }

    /** The level named by {@code value} (case-insensitive), INFO when unset or unknown. */
    static Level rootLevel(String value) {
        return value == null || value.isBlank() ? Level.INFO : Level.toLevel(value.trim(), Level.INFO);
    }
}
