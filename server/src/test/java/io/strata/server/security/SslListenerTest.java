package io.strata.server.security;

import io.strata.common.Time;
import io.strata.server.StrataServer;
import io.strata.server.config.ServerConfig;
import io.strata.server.metrics.ExpositionFormat;
import io.strata.server.metrics.PrometheusText;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Real clients over a real SSL listener: kafka-clients producer, consumer and admin with PKCS12
 * and PEM stores (the fetched records take the copying path, not sendfile), mTLS with
 * {@code ssl.client.auth=required} (no client certificate: {@link SslAuthenticationException}),
 * a server certificate the client does not trust refused, handshake outcomes counted per
 * listener, and kcat (librdkafka) over TLS and mTLS when kcat is installed.
 */
class SslListenerTest {
    private static final String TOPIC = "secure-topic";
    private static final int RECORDS = 2000;

    @TempDir
    static Path certificateDir;
    @TempDir
    Path dataDir;

    private static TestCertificates certificates;
    private static TestCertificates untrusted;
    private static TestCertificates.Entity broker;
    private static TestCertificates.Entity alice;
    private static TestCertificates.Entity impostor;

    private StrataServer server;

    @BeforeAll
    static void makeCertificates() throws Exception {
        certificates = TestCertificates.create(certificateDir, "ca");
        untrusted = TestCertificates.create(certificateDir, "other-ca");
        broker = certificates.issue("ca", "broker");
        alice = certificates.issue("ca", "alice");
        impostor = untrusted.issue("other-ca", "impostor");
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private String start(Map<String, String> ssl) throws Exception {
        Map<String, String> properties = new HashMap<>();
        properties.put("listeners", "SSL://127.0.0.1:0");
        properties.put("log.dirs", dataDir.toString());
        properties.put("num.io.threads", "2");
        properties.put("num.network.threads", "1");
        properties.put("metrics.listener", "http://127.0.0.1:0");
        properties.put("group.initial.rebalance.delay.ms", "0");
        properties.putAll(ssl);
        server = new StrataServer(ServerConfig.fromMap(properties), Time.SYSTEM);
        server.startup();
        return "127.0.0.1:" + server.boundPort("SSL");
    }

    private static Map<String, String> pkcs12Broker() {
        return Map.of("ssl.keystore.type", "PKCS12", "ssl.keystore.location", broker.pkcs12().toString(),
            "ssl.keystore.password", TestCertificates.PASSWORD, "ssl.truststore.type", "PKCS12",
            "ssl.truststore.location", certificates.trustStorePkcs12("ca").toString(), "ssl.truststore.password", TestCertificates.PASSWORD);
    }

    private static Map<String, String> pemBrokerRequiringClientCertificates() throws Exception {
        // Per-listener keys (listener.name.ssl.*), inline PEM with an encrypted key, PEM trust store file.
        return Map.of("listener.name.ssl.ssl.keystore.type", "PEM",
            "listener.name.ssl.ssl.keystore.key", Files.readString(broker.encryptedKey()),
            "listener.name.ssl.ssl.keystore.certificate.chain", broker.certificatePem() + Files.readString(certificates.caCertificate("ca")),
            "listener.name.ssl.ssl.key.password", TestCertificates.KEY_PASSWORD,
            "listener.name.ssl.ssl.truststore.type", "PEM",
            "listener.name.ssl.ssl.truststore.location", certificates.caCertificate("ca").toString(),
            "listener.name.ssl.ssl.client.auth", "required");
    }

    /** A client trusting {@code ca} (PKCS12 trust store), presenting {@code identity}'s PKCS12 key store when not null. */
    private static Properties client(String bootstrap, TestCertificates ca, String caName, TestCertificates.Entity identity) {
        Properties properties = new Properties();
        properties.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
        properties.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PKCS12");
        properties.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, ca.trustStorePkcs12(caName).toString());
        properties.put(SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, TestCertificates.PASSWORD);
        if (identity != null) {
            properties.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PKCS12");
            properties.put(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, identity.pkcs12().toString());
            properties.put(SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG, TestCertificates.PASSWORD);
        }
        properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return properties;
    }

    /** The same trust through a PEM file and, with an identity, its PEM key store file (Kafka's KIP-651 client keys). */
    private static Properties pemClient(String bootstrap, TestCertificates.Entity identity) {
        Properties properties = new Properties();
        properties.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
        properties.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        properties.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certificates.caCertificate("ca").toString());
        if (identity != null) {
            properties.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PEM");
            properties.put(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, identity.pemStore().toString());
        }
        properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return properties;
    }

    private static void produceAndConsume(Properties clientProperties) throws Exception {
        try (Admin admin = Admin.create(clientProperties)) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
            assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
        }
        Properties producerProperties = new Properties();
        producerProperties.putAll(clientProperties);
        producerProperties.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(TOPIC, "key-" + i, "value-" + i + "-" + "x".repeat(i % 300)));
            }
            producer.flush();
        }
        Properties consumerProperties = new Properties();
        consumerProperties.putAll(clientProperties);
        consumerProperties.put(ConsumerConfig.GROUP_ID_CONFIG, "secure-group");
        consumerProperties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProperties, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(TOPIC));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (values.size() < RECORDS && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    values.add(record.value());
                }
            }
            consumer.commitSync();
            assertThat(consumer.committed(java.util.Set.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1))).values())
                .allSatisfy(offset -> assertThat(offset).isNotNull());
        }
        assertThat(values).hasSize(RECORDS).doesNotHaveDuplicates();
        for (int i = 0; i < RECORDS; i += 97) {
            assertThat(values).contains("value-" + i + "-" + "x".repeat(i % 300));
        }
    }

    private double listenerCounter(String name) {
        PrometheusText metrics = PrometheusText.parse(server.metrics().scrape(ExpositionFormat.PROMETHEUS_TEXT));
        return metrics.sum(name, "listener", "SSL");
    }

    @Test
    void producerConsumerAndAdminWorkOverTlsWithPkcs12Stores() throws Exception {
        String bootstrap = start(pkcs12Broker());
        produceAndConsume(client(bootstrap, certificates, "ca", null));
        assertThat(listenerCounter("kafka_server_socketservermetrics_successful_authentication_total")).isGreaterThanOrEqualTo(3);
        assertThat(listenerCounter("kafka_server_socketservermetrics_failed_authentication_total")).isZero();
    }

    @Test
    void mutualTlsWithPemStoresAdmitsACertifiedClientAndRefusesOneWithoutACertificate() throws Exception {
        String bootstrap = start(pemBrokerRequiringClientCertificates());
        produceAndConsume(pemClient(bootstrap, alice));

        try (Admin admin = Admin.create(pemClient(bootstrap, null))) {
            assertThatThrownBy(() -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(SslAuthenticationException.class);
        }
        Properties producerProperties = pemClient(bootstrap, null);
        producerProperties.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties, new StringSerializer(), new StringSerializer())) {
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(TOPIC, "k", "v")).get(30, TimeUnit.SECONDS))
                .satisfies(e -> assertThat(e instanceof SslAuthenticationException || e.getCause() instanceof SslAuthenticationException)
                    .as("%s", e).isTrue());
        }
        // A certificate from a CA the broker does not trust is refused too.
        try (Admin admin = Admin.create(client(bootstrap, certificates, "ca", impostor))) {
            assertThatThrownBy(() -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(SslAuthenticationException.class);
        }
        assertThat(listenerCounter("kafka_server_socketservermetrics_failed_authentication_total")).isGreaterThanOrEqualTo(3);
    }

    @Test
    void aClientRefusesABrokerWhoseCertificateItDoesNotTrust() throws Exception {
        String bootstrap = start(pkcs12Broker());
        try (Admin admin = Admin.create(client(bootstrap, untrusted, "other-ca", null))) {
            assertThatThrownBy(() -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(SslAuthenticationException.class);
        }
        // The broker survives it and serves the next client.
        try (Admin admin = Admin.create(client(bootstrap, certificates, "ca", null))) {
            assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
        }
    }

    @Test
    void aPlaintextClientOnAnSslListenerIsDisconnectedAndCounted() throws Exception {
        String bootstrap = start(pkcs12Broker());
        Properties plaintext = new Properties();
        plaintext.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        plaintext.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "3000");
        plaintext.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
        try (Admin admin = Admin.create(plaintext)) {
            assertThatThrownBy(() -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (listenerCounter("kafka_server_socketservermetrics_failed_authentication_total") == 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(listenerCounter("kafka_server_socketservermetrics_failed_authentication_total")).isGreaterThanOrEqualTo(1);
    }

    @Test
    void kcatProducesAndConsumesOverTlsAndMutualTls() throws Exception {
        Assumptions.assumeTrue(onPath("kcat"), "kcat is not installed (CI installs it)");
        Map<String, String> ssl = new HashMap<>(pkcs12Broker());
        ssl.put("ssl.client.auth", "requested");
        String bootstrap = start(ssl);
        List<String> tls = List.of("-b", bootstrap, "-X", "security.protocol=ssl", "-X", "ssl.ca.location=" + certificates.caCertificate("ca"));
        assertThat(kcat(tls, List.of("-L"), null)).contains("1 brokers:").contains("broker 1 at " + bootstrap);
        StringBuilder input = new StringBuilder();
        for (int i = 0; i < 500; i++) {
            input.append("k").append(i).append(":v").append(i).append('\n');
        }
        kcat(tls, List.of("-P", "-t", "kcat-tls", "-K:"), input.toString());
        List<String> mtls = new ArrayList<>(tls);
        mtls.addAll(List.of("-X", "ssl.certificate.location=" + alice.certificate(), "-X", "ssl.key.location=" + alice.key()));
        String consumed = kcat(mtls, List.of("-C", "-t", "kcat-tls", "-o", "beginning", "-e", "-f", "%k=%s\\n"), null);
        List<String> lines = consumed.lines().filter(line -> !line.isEmpty()).toList();
        assertThat(lines).hasSize(500).contains("k0=v0", "k499=v499");
        // kcat refuses a broker its CA file does not vouch for.
        List<String> wrongCa = List.of("-b", bootstrap, "-X", "security.protocol=ssl", "-X", "ssl.ca.location=" + untrusted.caCertificate("other-ca"),
            "-m", "5");
        assertThatThrownBy(() -> kcat(wrongCa, List.of("-L"), null)).hasMessageContaining("exit");
    }

    private static boolean onPath(String command) {
        String path = System.getenv("PATH");
        return path != null && java.util.Arrays.stream(path.split(File.pathSeparator)).anyMatch(dir -> Files.isExecutable(Path.of(dir, command)));
    }

    private String kcat(List<String> connection, List<String> arguments, String stdin) throws Exception {
        List<String> command = new ArrayList<>();
        command.add("kcat");
        command.addAll(connection);
        command.addAll(arguments);
        Path output = Files.createTempFile(dataDir, "kcat", ".out");
        Path errors = Files.createTempFile(dataDir, "kcat", ".err");
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(output.toFile()).redirectError(errors.toFile());
        Process process = builder.start();
        try (var in = process.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        }
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("kcat timed out: " + command + "\n" + Files.readString(output) + Files.readString(errors));
        }
        String text = Files.readString(output);
        if (process.exitValue() != 0) {
            throw new IllegalStateException("kcat exit " + process.exitValue() + ": " + command + "\n" + text + Files.readString(errors));
        }
        return text;
    }
}
