package io.strata.server.security;

import io.strata.common.config.ConfigException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every key-store format Kafka reads gives a working TLS server side (proved by a handshake
 * between two in-memory engines), the principal comes from the client certificate, and each
 * misconfiguration stops with a message naming the key that was set.
 */
class SslEngineFactoryTest {
    @TempDir
    static Path dir;
    private static TestCertificates certificates;
    private static TestCertificates.Entity server;
    private static TestCertificates.Entity client;

    @BeforeAll
    static void makeCertificates() throws Exception {
        certificates = TestCertificates.create(dir, "ca");
        server = certificates.issue("ca", "broker");
        client = certificates.issue("ca", "alice");
    }

    private static Map<String, String> pkcs12Server() {
        Map<String, String> config = new HashMap<>();
        config.put("ssl.keystore.type", "PKCS12");
        config.put("ssl.keystore.location", server.pkcs12().toString());
        config.put("ssl.keystore.password", TestCertificates.PASSWORD);
        config.put("ssl.truststore.type", "PKCS12");
        config.put("ssl.truststore.location", certificates.trustStorePkcs12("ca").toString());
        config.put("ssl.truststore.password", TestCertificates.PASSWORD);
        return config;
    }

    private static Map<String, String> pemClient(TestCertificates.Entity who) {
        Map<String, String> config = new HashMap<>();
        config.put("ssl.truststore.type", "PEM");
        config.put("ssl.truststore.location", certificates.caCertificate("ca").toString());
        if (who != null) {
            config.put("ssl.keystore.type", "PEM");
            config.put("ssl.keystore.location", who.pemStore().toString());
        }
        return config;
    }

    private static SslEngineFactory serverSide(Map<String, String> config) {
        return SslEngineFactory.create(SslSettings.forListener(config, "SECURE"), true);
    }

    private static SslEngineFactory clientSide(Map<String, String> config) {
        return SslEngineFactory.create(SslSettings.of(config), false);
    }

    @Test
    void everyKeyStoreFormatServesAHandshakeThatChecksTheHostName() throws Exception {
        Map<String, String> jks = pkcs12Server();
        jks.put("ssl.keystore.type", "JKS");
        jks.put("ssl.keystore.location", server.jks().toString());
        Map<String, String> pemFile = new HashMap<>();
        pemFile.put("ssl.keystore.type", "PEM");
        pemFile.put("ssl.keystore.location", server.pemStore().toString());
        Map<String, String> pemInline = new HashMap<>();
        pemInline.put("ssl.keystore.type", "PEM");
        pemInline.put("ssl.keystore.key", server.keyPem());
        pemInline.put("ssl.keystore.certificate.chain", server.certificatePem() + Files.readString(certificates.caCertificate("ca")));
        Map<String, String> pemEncrypted = new HashMap<>(pemInline);
        pemEncrypted.put("ssl.keystore.key", Files.readString(server.encryptedKey()));
        pemEncrypted.put("ssl.key.password", TestCertificates.KEY_PASSWORD);
        for (Map<String, String> config : java.util.List.of(pkcs12Server(), jks, pemFile, pemInline, pemEncrypted)) {
            SSLEngine serverEngine = serverSide(config).createServerEngine();
            SSLEngine clientEngine = clientSide(pemClient(null)).createClientEngine("127.0.0.1", 9093);
            handshake(clientEngine, serverEngine);
            assertThat(clientEngine.getSession().getPeerPrincipal().getName()).as("%s", config.keySet()).isEqualTo(server.subject());
            assertThat(serverSide(config).keyStoreCertificates()).isNotEmpty();
        }
    }

    @Test
    void theClientSideRefusesAServerWhoseCertificateDoesNotNameTheHost() throws Exception {
        SSLEngine serverEngine = serverSide(pkcs12Server()).createServerEngine();
        SSLEngine clientEngine = clientSide(pemClient(null)).createClientEngine("broker.example.com", 9093);
        assertThatThrownBy(() -> handshake(clientEngine, serverEngine)).isInstanceOf(SSLException.class);
        // Kafka's empty ssl.endpoint.identification.algorithm turns the check off.
        Map<String, String> unchecked = pemClient(null);
        unchecked.put("ssl.endpoint.identification.algorithm", "");
        handshake(clientSide(unchecked).createClientEngine("broker.example.com", 9093), serverSide(pkcs12Server()).createServerEngine());
    }

    @Test
    void thePrincipalIsTheClientCertificatesSubjectMappedByTheRules() throws Exception {
        Map<String, String> required = pkcs12Server();
        required.put("ssl.client.auth", "required");
        SslEngineFactory factory = serverSide(required);
        SSLEngine serverEngine = factory.createServerEngine();
        handshake(clientSide(pemClient(client)).createClientEngine("127.0.0.1", 9093), serverEngine);
        assertThat(factory.principal(serverEngine.getSession())).contains("User:CN=alice,O=Strata Test");

        Map<String, String> mapped = new HashMap<>(required);
        mapped.put("listener.name.secure.ssl.principal.mapping.rules", "RULE:^CN=(.*?),O=Strata Test$/$1/U,DEFAULT");
        SslEngineFactory mapping = serverSide(mapped);
        SSLEngine mappedEngine = mapping.createServerEngine();
        handshake(clientSide(pemClient(client)).createClientEngine("127.0.0.1", 9093), mappedEngine);
        assertThat(mapping.principal(mappedEngine.getSession())).contains("User:ALICE");

        // Requested: a client without a certificate connects as ANONYMOUS. (A required certificate missing, or one from a
        // CA the broker does not trust, is refused: SslListenerTest shows it with kafka-clients over real sockets.)
        Map<String, String> requested = pkcs12Server();
        requested.put("ssl.client.auth", "requested");
        SslEngineFactory lenient = serverSide(requested);
        SSLEngine lenientEngine = lenient.createServerEngine();
        handshake(clientSide(pemClient(null)).createClientEngine("127.0.0.1", 9093), lenientEngine);
        assertThat(lenient.principal(lenientEngine.getSession())).contains("User:ANONYMOUS");
        assertThat(factory.createServerEngine().getNeedClientAuth()).isTrue();
        assertThat(lenient.createServerEngine().getWantClientAuth()).isTrue();
    }

    @Test
    void perListenerKeysOverrideTheBrokerWideOnes() {
        Map<String, String> config = pkcs12Server();
        config.put("ssl.keystore.location", dir.resolve("missing.p12").toString());
        config.put("listener.name.secure.ssl.keystore.location", server.pkcs12().toString());
        serverSide(config).createServerEngine();
        config.put("listener.name.secure.ssl.enabled.protocols", "TLSv1.3");
        assertThat(serverSide(config).createServerEngine().getEnabledProtocols()).containsExactly("TLSv1.3");
        // Another listener reads the broker-wide key and its missing file.
        assertThatThrownBy(() -> SslEngineFactory.create(SslSettings.forListener(config, "OTHER"), true))
            .isInstanceOf(ConfigException.class).hasMessageContaining("ssl.keystore.location").hasMessageContaining("OTHER");
    }

    @Test
    void eachMisconfigurationNamesItsKey() {
        assertRefused(Map.of(), "ssl.keystore.location");
        Map<String, String> wrongPassword = pkcs12Server();
        wrongPassword.put("ssl.keystore.password", "wrong");
        assertRefused(wrongPassword, "ssl.keystore.password");
        Map<String, String> noPassword = pkcs12Server();
        noPassword.remove("ssl.keystore.password");
        assertRefused(noPassword, "ssl.keystore.password");
        Map<String, String> wrongKeyPassword = pkcs12Server();
        wrongKeyPassword.put("ssl.key.password", "wrong");
        assertRefused(wrongKeyPassword, "ssl.key.password");
        Map<String, String> unknownType = pkcs12Server();
        unknownType.put("ssl.keystore.type", "BOGUS");
        assertRefused(unknownType, "ssl.keystore.type");
        Map<String, String> protocols = pkcs12Server();
        protocols.put("ssl.enabled.protocols", "TLSv1.2,TLSv9");
        assertRefused(protocols, "ssl.enabled.protocols");
        Map<String, String> protocol = pkcs12Server();
        protocol.put("ssl.protocol", "TLSv9");
        assertRefused(protocol, "ssl.protocol");
        Map<String, String> suites = pkcs12Server();
        suites.put("ssl.cipher.suites", "TLS_NO_SUCH_SUITE");
        assertRefused(suites, "ssl.cipher.suites");
        Map<String, String> clientAuth = pkcs12Server();
        clientAuth.put("listener.name.secure.ssl.client.auth", "sometimes");
        assertRefused(clientAuth, "listener.name.secure.ssl.client.auth");
        Map<String, String> pemWithStorePassword = new HashMap<>();
        pemWithStorePassword.put("ssl.keystore.type", "PEM");
        pemWithStorePassword.put("ssl.keystore.location", server.pemStore().toString());
        pemWithStorePassword.put("ssl.keystore.password", "x");
        assertRefused(pemWithStorePassword, "ssl.keystore.password");
        Map<String, String> encryptedWithoutPassword = new HashMap<>();
        encryptedWithoutPassword.put("ssl.keystore.type", "PEM");
        encryptedWithoutPassword.put("ssl.keystore.location", server.encryptedKey().toString());
        assertRefused(encryptedWithoutPassword, "ssl.keystore.location");
        Map<String, String> inlineWithoutPem = pkcs12Server();
        inlineWithoutPem.put("ssl.keystore.key", "-----BEGIN PRIVATE KEY-----");
        assertRefused(inlineWithoutPem, "ssl.keystore.key");
        Map<String, String> rules = pkcs12Server();
        rules.put("ssl.principal.mapping.rules", "RULE:unclosed");
        assertRefused(rules, "ssl.principal.mapping.rules");
    }

    private static void assertRefused(Map<String, String> config, String key) {
        assertThatThrownBy(() -> serverSide(config)).as("%s", config).isInstanceOf(ConfigException.class)
            .hasMessageContaining("configuration " + key + ":").hasMessageContaining("listener SECURE")
            .satisfies(e -> assertThat(e.getMessage()).doesNotContain(TestCertificates.PASSWORD));
    }

    /** Runs the two engines' handshake in memory to completion, or throws the first SSLException. */
    static void handshake(SSLEngine clientEngine, SSLEngine serverEngine) throws SSLException {
        int packet = Math.max(clientEngine.getSession().getPacketBufferSize(), serverEngine.getSession().getPacketBufferSize());
        int application = Math.max(clientEngine.getSession().getApplicationBufferSize(), serverEngine.getSession().getApplicationBufferSize());
        ByteBuffer clientToServer = ByteBuffer.allocate(packet * 4);
        ByteBuffer serverToClient = ByteBuffer.allocate(packet * 4);
        ByteBuffer empty = ByteBuffer.allocate(0);
        ByteBuffer sink = ByteBuffer.allocate(application * 4);
        clientEngine.beginHandshake();
        serverEngine.beginHandshake();
        for (int step = 0; step < 1000; step++) {
            boolean clientDone = done(clientEngine);
            boolean serverDone = done(serverEngine);
            if (clientDone && serverDone && clientToServer.position() == 0 && serverToClient.position() == 0) {
                // A failure inside a delegated task ends the handshake silently; the next wrap throws it.
                ByteBuffer scratch = ByteBuffer.allocate(packet * 4);
                serverEngine.wrap(empty, scratch);
                clientEngine.wrap(empty, scratch);
                return;
            }
            advance(clientEngine, serverToClient, clientToServer, empty, sink);
            advance(serverEngine, clientToServer, serverToClient, empty, sink);
        }
        throw new AssertionError("handshake did not finish: client " + clientEngine.getHandshakeStatus() + ", server " + serverEngine.getHandshakeStatus());
    }

    private static boolean done(SSLEngine engine) {
        SSLEngineResult.HandshakeStatus status = engine.getHandshakeStatus();
        return status == SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING || status == SSLEngineResult.HandshakeStatus.FINISHED;
    }

    private static void advance(SSLEngine engine, ByteBuffer incoming, ByteBuffer outgoing, ByteBuffer empty, ByteBuffer sink) throws SSLException {
        SSLEngineResult.HandshakeStatus status = engine.getHandshakeStatus();
        if (status == SSLEngineResult.HandshakeStatus.NEED_TASK) {
            Runnable task;
            while ((task = engine.getDelegatedTask()) != null) {
                task.run();
            }
        } else if (status == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
            engine.wrap(empty, outgoing);
        } else if (status == SSLEngineResult.HandshakeStatus.NEED_UNWRAP || status == SSLEngineResult.HandshakeStatus.NEED_UNWRAP_AGAIN
            || incoming.position() > 0) {
            incoming.flip();
            sink.clear();
            engine.unwrap(incoming, sink);
            incoming.compact();
        }
    }
}
