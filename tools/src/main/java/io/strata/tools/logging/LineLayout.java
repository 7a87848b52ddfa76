package io.strata.tools.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;

import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;

/**
 * One line per event: {@code 2026-11-29 20:11:05.123 INFO  [thread] Logger: message}, the
 * logger's simple class name, then the stack trace of an exception if there is one. The same
 * format the pattern {@code %d{yyyy-MM-dd HH:mm:ss.SSS} %-5level [%thread] %logger{0}: %msg%n}
 * gives, without building a pattern parser at start-up.
 */
public final class LineLayout extends LayoutBase<ILoggingEvent> {
    private static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS");

    private final ZoneId zone = ZoneId.systemDefault();

    @Override
    public String doLayout(ILoggingEvent event) {
        StringBuilder line = new StringBuilder(128);
        TIMESTAMP.formatTo(Instant.ofEpochMilli(event.getTimeStamp()).atZone(zone), line);
        line.append(' ');
        String level = event.getLevel().toString();
        line.append(level);
        for (int i = level.length(); i < 5; i++) {
            line.append(' ');
        }
        line.append(" [").append(event.getThreadName()).append("] ");
        String logger = event.getLoggerName();
        line.append(logger, logger.lastIndexOf('.') + 1, logger.length()).append(": ");
        line.append(event.getFormattedMessage()).append(CoreConstants.LINE_SEPARATOR);
        IThrowableProxy thrown = event.getThrowableProxy();
        if (thrown != null) {
            line.append(ThrowableProxyUtil.asString(thrown)).append(CoreConstants.LINE_SEPARATOR);
        }
        return line.toString();
    }
}
