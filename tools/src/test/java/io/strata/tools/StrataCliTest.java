package io.strata.tools;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class StrataCliTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private PrintStream originalOut;
    private PrintStream originalErr;

    @BeforeEach
    void captureOutput() {
        originalOut = System.out;
        originalErr = System.err;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restoreOutput() {
        System.setOut(originalOut);
        System.setErr(originalErr);
    }

    @Test
    void versionPrintsTheProjectVersionAndProtocolRelease() {
        assertThat(StrataCli.run("version")).isZero();
        String text = out.toString(StandardCharsets.UTF_8);
        assertThat(text).containsPattern("strata \\d+\\.\\d+\\.\\d+").contains("Apache Kafka 4.");
    }

    @Test
    void helpListsTheSubcommands() {
        assertThat(StrataCli.run("--help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("Usage: strata").contains("version");
    }

    @Test
    void unknownSubcommandFailsWithUsageError() {
        assertThat(StrataCli.run("no-such-command")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("no-such-command");
    }
}
