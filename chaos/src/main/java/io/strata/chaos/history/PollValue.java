package io.strata.chaos.history;

import java.util.List;

/**
 * The value of a {@code poll}: the messages one consumer (the process) got from one {@code poll()}.
 *
 * @param readCommitted whether the consumer reads with {@code isolation.level=read_committed}
 * @param messages in the order returned (empty on the invoke)
 */
public record PollValue(boolean readCommitted, List<Message> messages) implements OpValue {
    public PollValue {
        messages = List.copyOf(messages);
    }
}
