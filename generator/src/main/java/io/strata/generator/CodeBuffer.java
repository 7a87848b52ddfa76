package io.strata.generator;

/** Accumulates Java source with indentation. */
final class CodeBuffer {
    private final StringBuilder text = new StringBuilder();
    private int indent;

    CodeBuffer line(String format, Object... args) {
        String content = args.length == 0 ? format : String.format(format, args);
        if (!content.isEmpty()) {
            text.append("    ".repeat(indent)).append(content);
        }
        text.append('\n');
        return this;
    }

    CodeBuffer blank() {
        text.append('\n');
        return this;
    }

    /** Writes {@code header {} and indents. */
    CodeBuffer open(String format, Object... args) {
        line(format.isEmpty() ? "{" : format + " {", args);
        indent++;
        return this;
    }

    /** Closes a block opened with {@link #open}. */
    CodeBuffer close() {
        indent--;
        line("}");
        return this;
    }

    /** Closes the current block and opens a continuation, e.g. {@code } else {}. */
    CodeBuffer reopen(String format, Object... args) {
        indent--;
        line("} " + format + " {", args);
        indent++;
        return this;
    }

    @Override
    public String toString() {
        return text.toString();
    }
}
