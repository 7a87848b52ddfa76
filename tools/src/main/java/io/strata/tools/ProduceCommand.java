package io.strata.tools;

import io.strata.common.Time;
import io.strata.protocol.records.CompressionType;
import io.strata.protocol.records.Header;
import io.strata.tools.client.ClientException;
import io.strata.tools.client.ClientLimits;
import io.strata.tools.client.ClusterClient;
import io.strata.tools.client.Partitioner;
import io.strata.tools.client.RecordProducer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;

/**
 * {@code strata produce TOPIC}: one record per line of stdin (UTF-8), like Kafka's console
 * producer.
 *
 * <p>Batching: records collect in per-partition batches; a full batch is sent at once, and
 * whenever stdin has nothing more ready to read (a person typing, or a pause in a pipe)
 * everything collected is sent, so interactive lines go out as they are typed while piped
 * input travels in full batches. EOF sends the rest.
 *
 * <p>Idempotence is on by default, as in Kafka's producer since 3.0; like Kafka, choosing
 * {@code --acks 0} or {@code 1} without {@code --idempotence} turns it off, and asking for
 * both is an error.
 */
@Command(name = "produce", description = "Write lines from stdin to a topic, one record per line.")
final class ProduceCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Mixin
    ProducerOptions producerOptions;

    @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic to write to.")
    String topic;

    @Option(names = "--key-separator", paramLabel = "SEP",
        description = "Split each line at the first SEP into key and value (a line without SEP is an error).")
    String keySeparator;

    @Option(names = "--header", paramLabel = "KEY=VALUE", description = "A header added to every record (repeatable).")
    List<String> headers = List.of();

    @Option(names = "--partition", paramLabel = "N",
        description = "Write every record to partition N (default: murmur2 of the key, or sticky partitions for records without one).")
    Integer partition;

    @Option(names = "--delivery-timeout-ms", paramLabel = "MS", defaultValue = "" + ClientLimits.DEFAULT_DELIVERY_TIMEOUT_MS,
        description = "How long to retry a batch after retriable errors (default: ${DEFAULT-VALUE}).")
    int deliveryTimeoutMs;

    @Override
    public Integer call() {
        RecordProducer.Settings settings = settings();
        List<Header> recordHeaders = parseHeaders();
        if (keySeparator != null && keySeparator.isEmpty()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--key-separator must not be empty");
        }
        Time time = Time.SYSTEM;
        long startMs = time.hiResClockMs();
        BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 64 * 1024);
        try (ClusterClient cluster = connection.connect()) {
            RecordProducer producer = new RecordProducer(cluster, topic, settings, new Partitioner(producerOptions.batchSizeBytes, new Random()));
            try {
                produceLines(input, producer, recordHeaders, time);
                producer.flush();
            } catch (MalformedLineException e) {
                producer.flush(); // the lines before the bad one are sent, as Kafka's console producer sends them
                throw e;
            } finally {
                printSummary(producer, time.hiResClockMs() - startMs);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading stdin", e);
        }
        return 0;
    }

    private RecordProducer.Settings settings() {
        if (partition != null && partition < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--partition must not be negative, got " + partition);
        }
        return producerOptions.settings(spec.commandLine(), deliveryTimeoutMs);
    }

    private List<Header> parseHeaders() {
        List<Header> parsed = new ArrayList<>();
        for (String header : headers) {
            int equals = header.indexOf('=');
            if (equals <= 0) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--header needs key=value, got: '" + header + "'");
            }
            parsed.add(Header.of(header.substring(0, equals), header.substring(equals + 1).getBytes(StandardCharsets.UTF_8)));
        }
        return List.copyOf(parsed);
    }

    private void produceLines(BufferedReader input, RecordProducer producer, List<Header> recordHeaders, Time time) throws IOException {
        long lineNumber = 0;
        String line;
        while ((line = input.readLine()) != null) {
            lineNumber++;
            byte[] key = null;
            String value = line;
            if (keySeparator != null) {
                int at = line.indexOf(keySeparator);
                if (at < 0) {
                    throw new MalformedLineException("line " + lineNumber + " has no key separator '" + keySeparator + "': " + abbreviate(line));
                }
                key = line.substring(0, at).getBytes(StandardCharsets.UTF_8);
                value = line.substring(at + keySeparator.length());
            }
            producer.append(partition, time.milliseconds(), key, value.getBytes(StandardCharsets.UTF_8), recordHeaders);
            if (!input.ready()) {
                producer.flush();
            } else if (producer.hasReadyBatches()) {
                producer.sendReadyBatches();
            }
        }
    }

    private static String abbreviate(String line) {
        return line.length() <= 80 ? line : line.substring(0, 77) + "...";
    }

    private void printSummary(RecordProducer producer, long elapsedMs) {
        RecordProducer.Summary summary = producer.summary();
        int partitions = summary.partitions().size();
        System.err.println("strata: " + (producerOptions.acks == 0 ? "sent " : "produced ") + summary.records() + (summary.records() == 1 ? " record" : " records")
            + " to " + partitions + (partitions == 1 ? " partition" : " partitions") + " of " + producer.topic().name()
            + " in " + elapsedMs + " ms (" + summary.batches() + (summary.batches() == 1 ? " batch, " : " batches, ")
            + summary.requests() + (summary.requests() == 1 ? " request" : " requests")
            + (producerOptions.acks == 0 ? ", not acknowledged: acks=0)" : ")"));
    }

    /** A line of input the options cannot turn into a record. */
    private static final class MalformedLineException extends ClientException {
        private static final long serialVersionUID = 1L;

        MalformedLineException(String message) {
            super(message);
        }
    }

    /** "all" or -1, 0, 1. */
    static final class AcksConverter implements CommandLine.ITypeConverter<Short> {
        @Override
        public Short convert(String value) {
            return switch (value.toLowerCase(Locale.ROOT)) {
                case "all", "-1" -> (short) -1;
                case "0" -> (short) 0;
                case "1" -> (short) 1;
                default -> throw new CommandLine.TypeConversionException("expected -1 (or all), 0 or 1, got '" + value + "'");
            };
        }
    }

    /** A compression type by its config name. */
    static final class CompressionConverter implements CommandLine.ITypeConverter<CompressionType> {
        @Override
        public CompressionType convert(String value) {
            try {
                return CompressionType.forConfigName(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException("expected none, gzip, snappy, lz4 or zstd, got '" + value + "'");
            }
        }
    }
}
