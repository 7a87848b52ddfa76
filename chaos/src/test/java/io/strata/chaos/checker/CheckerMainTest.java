package io.strata.chaos.checker;

import static io.strata.chaos.checker.HistoryBuilder.m;
import static org.assertj.core.api.Assertions.assertThat;

import io.strata.chaos.history.HistoryWriter;
import io.strata.chaos.history.Op;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckerMainTest {
    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @Test
    void cleanHistoryExitsZero() throws IOException {
        HistoryBuilder h = new HistoryBuilder();
        h.ack(0, "p-0", 10, 0);
        h.drain(true, Map.of("p-0", 1L), m("p-0", 0, 10));
        assertThat(run(write(h.ops()))).isZero();
        assertThat(out.toString()).contains("4 ops, 0 anomalies");
    }

    @Test
    void anomaliesArePrintedOneALineAndExitOne() throws IOException {
        HistoryBuilder h = new HistoryBuilder();
        h.ack(0, "p-0", 10, 0);
        h.ack(0, "p-0", 11, 1);
        h.drain(true, Map.of("p-0", 2L), m("p-0", 0, 10));
        assertThat(run(write(h.ops()))).isEqualTo(CheckerMain.EXIT_ANOMALIES);
        assertThat(out.toString()).contains("LOST_WRITE p-0").contains("UNEXPECTED_GAP p-0").contains("2 anomalies");
    }

    @Test
    void malformedHistoryExitsTwo() throws IOException {
        Path file = dir.resolve("history.jsonl");
        Files.writeString(file, "not json\n{}\n");
        assertThat(run(file)).isEqualTo(CheckerMain.EXIT_BAD_HISTORY);
        assertThat(err.toString()).contains("line 1");
    }

    private int run(Path file) {
        return CheckerMain.run(new String[] {"check", file.toString()}, new PrintWriter(out, true), new PrintWriter(err, true));
    }

    private Path write(List<Op> ops) throws IOException {
        Path file = dir.resolve("history.jsonl");
        try (HistoryWriter writer = HistoryWriter.create(file)) {
            for (Op op : ops) {
                writer.write(op);
            }
        }
        return file;
    }
}
