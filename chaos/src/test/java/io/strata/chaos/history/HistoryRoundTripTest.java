package io.strata.chaos.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HistoryRoundTripTest {
    @TempDir
    Path dir;

    static List<Op> oneOfEach() {
        List<Op> ops = new ArrayList<>();
        ops.add(new Op(0, Op.Type.INVOKE, Op.Function.SEND, new SendValue("p-0", 17, -1), 1_764_640_000_000L, 10));
        ops.add(new Op(0, Op.Type.OK, Op.Function.SEND, new SendValue("p-0", 17, 3), 1_764_640_000_001L, 20));
        ops.add(new Op(1, Op.Type.INVOKE, Op.Function.POLL, new PollValue(true, List.of()), 1_764_640_000_002L, 30));
        ops.add(new Op(1, Op.Type.OK, Op.Function.POLL, new PollValue(true, List.of(new Message("p-0", 3, 17))), 1_764_640_000_003L, 40));
        ops.add(new Op(2, Op.Type.INVOKE, Op.Function.TXN, new TxnValue(true, List.of(MicroOp.send("t-0", -1, 21))), 5, 50));
        ops.add(new Op(2, Op.Type.INFO, Op.Function.TXN,
                new TxnValue(true, List.of(MicroOp.send("t-0", -1, 21), MicroOp.poll("p-0", 3, 17))), 6, 60));
        ops.add(new Op(1, Op.Type.INVOKE, Op.Function.ASSIGN, new AssignValue("g", 4, List.of("p-0")), 7, 70));
        ops.add(new Op(1, Op.Type.OK, Op.Function.ASSIGN, new AssignValue("g", 4, List.of("p-0")), 8, 80));
        ops.add(new Op(9, Op.Type.INVOKE, Op.Function.DRAIN, new DrainValue(false, List.of(), Map.of()), 9, 90));
        ops.add(new Op(9, Op.Type.OK, Op.Function.DRAIN,
                new DrainValue(false, List.of(new Message("p-0", 3, 17)), Map.of("p-0", 4L, "t-0", 2L)), 10, 100));
        return ops;
    }

    @Test
    void everyFunctionSurvivesWriteAndRead() throws IOException {
        Path file = dir.resolve("history.jsonl");
        try (HistoryWriter writer = HistoryWriter.create(file)) {
            for (Op op : oneOfEach()) {
                writer.write(op);
            }
        }
        assertThat(Files.readAllLines(file)).hasSize(10);
        History history = History.read(file);
        assertThat(history.ops()).isEqualTo(oneOfEach());
        assertThat(history.operations()).hasSize(5);
        assertThat(history.operations().get(2).outcome()).isEqualTo(Op.Type.INFO);
    }

    @Test
    void everyLineIsOnDiskAsSoonAsItIsWritten() throws IOException {
        Path file = dir.resolve("history.jsonl");
        HistoryWriter writer = HistoryWriter.create(file);
        writer.write(oneOfEach().get(0));
        assertThat(Files.readAllLines(file)).hasSize(1);
        writer.close();
        assertThatThrownBy(() -> writer.write(oneOfEach().get(1))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void concurrentWritersNeverInterleaveLines() throws Exception {
        Path file = dir.resolve("history.jsonl");
        int threads = 4;
        int perThread = 500;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try (HistoryWriter writer = HistoryWriter.create(file)) {
            List<java.util.concurrent.Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int process = t;
                futures.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        writer.write(new Op(process, Op.Type.INVOKE, Op.Function.SEND, new SendValue("p-0", i, -1), i, i));
                        writer.write(new Op(process, Op.Type.OK, Op.Function.SEND, new SendValue("p-0", i, i), i, i));
                    }
                    return null;
                }));
            }
            start.countDown();
            for (java.util.concurrent.Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        History history = History.read(file);
        assertThat(history.ops()).hasSize(threads * perThread * 2);
        assertThat(history.operations()).allSatisfy(o -> assertThat(o.outcome()).isEqualTo(Op.Type.OK));
    }

    @Test
    void truncatedLastLineIsIgnored() throws IOException {
        String whole = lines(oneOfEach().subList(0, 3));
        String cut = OpJson.encode(oneOfEach().get(3));
        History history = read(whole + cut.substring(0, cut.length() / 2));
        assertThat(history.ops()).isEqualTo(oneOfEach().subList(0, 3));
    }

    @Test
    void malformedLineInTheMiddleIsAnErrorNamingItsLine() {
        String text = lines(oneOfEach().subList(0, 2)) + "{\"process\":1,\"type\":\"ok\"\n" + lines(oneOfEach().subList(2, 4));
        assertThatThrownBy(() -> read(text)).isInstanceOf(HistoryFormatException.class)
                .hasMessageContaining("line 3").satisfies(e -> assertThat(((HistoryFormatException) e).lineNumber()).isEqualTo(3));
    }

    @Test
    void completeButMalformedLastLineIsAnError() {
        String text = lines(oneOfEach().subList(0, 2)) + "{\"process\":0,\"type\":\"bogus\",\"f\":\"send\"}\n";
        assertThatThrownBy(() -> read(text)).isInstanceOf(HistoryFormatException.class).hasMessageContaining("line 3")
                .hasMessageContaining("unknown type");
    }

    @Test
    void valueOfTheWrongShapeIsAnError() {
        String text = "{\"process\":0,\"type\":\"invoke\",\"f\":\"poll\",\"value\":{\"readCommitted\":true,\"messages\":[[\"p-0\",1]]},"
                + "\"wallMs\":1,\"monoNs\":1}\n";
        assertThatThrownBy(() -> read(text)).isInstanceOf(HistoryFormatException.class).hasMessageContaining("line 1");
    }

    @Test
    void pairingRejectsACompletionWithoutInvoke() {
        List<Op> ops = oneOfEach().subList(1, 2);
        assertThatThrownBy(() -> History.of(ops)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("index 0").hasMessageContaining("without an invoke");
    }

    @Test
    void pairingRejectsASecondInvokeInFlight() {
        List<Op> ops = List.of(oneOfEach().get(0), oneOfEach().get(0));
        assertThatThrownBy(() -> History.of(ops)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("in flight");
    }

    @Test
    void opRejectsAValueOfAnotherFunction() {
        assertThatThrownBy(() -> new Op(0, Op.Type.INVOKE, Op.Function.POLL, new SendValue("p-0", 1, -1), 0, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PollValue");
    }

    private static String lines(List<Op> ops) {
        StringBuilder text = new StringBuilder();
        for (Op op : ops) {
            text.append(OpJson.encode(op)).append('\n');
        }
        return text.toString();
    }

    private static History read(String text) throws IOException {
        List<Op> ops = new ArrayList<>();
        try (HistoryReader reader = HistoryReader.from(new StringReader(text), "test")) {
            reader.forEach(ops::add);
        }
        return History.of(ops);
    }
}
