package io.strata.server.security;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Test certificates made at test time with the {@code openssl} CLI and the JDK's {@code keytool}:
 * a CA, and certificates it signs for {@code localhost} / {@code 127.0.0.1} in every store format
 * Kafka reads (PKCS12, JKS, PEM file, PEM key encrypted with {@link #KEY_PASSWORD}), plus a second,
 * untrusted CA. Stores are protected by {@link #PASSWORD}.
 */
public final class TestCertificates {
    public static final String PASSWORD = "store-secret";
    public static final String KEY_PASSWORD = "key-secret";

    private final Path dir;

    /** One entity's files. */
    public record Entity(String subject, Path certificate, Path key, Path encryptedKey, Path pemStore, Path pkcs12, Path jks) {
        public String certificatePem() throws IOException {
            return Files.readString(certificate);
        }

        public String keyPem() throws IOException {
            return Files.readString(key);
        }
    }

    private TestCertificates(Path dir) {
        this.dir = dir;
    }

    /** A CA in {@code dir} ({@code ca.pem}, {@code ca.key}, trust stores {@code ca-trust.p12} / {@code .jks}). */
    public static TestCertificates create(Path dir, String caName) throws IOException, InterruptedException {
        TestCertificates certificates = new TestCertificates(dir);
        certificates.run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", caName + ".key", "-out", caName + ".pem",
            "-days", "3", "-subj", "/CN=" + caName, "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign");
        for (String type : List.of("PKCS12", "JKS")) {
            certificates.run("keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", caName + ".pem", "-keystore",
                caName + "-trust." + (type.equals("JKS") ? "jks" : "p12"), "-storetype", type, "-storepass", PASSWORD);
        }
        return certificates;
    }

    public Path caCertificate(String caName) {
        return dir.resolve(caName + ".pem");
    }

    public Path trustStorePkcs12(String caName) {
        return dir.resolve(caName + "-trust.p12");
    }

    public Path trustStoreJks(String caName) {
        return dir.resolve(caName + "-trust.jks");
    }

    /** A certificate for {@code name} (CN={name},O=Strata Test) signed by {@code caName}, valid for localhost and 127.0.0.1. */
    public Entity issue(String caName, String name) throws IOException, InterruptedException {
        Path extensions = dir.resolve(name + ".ext");
        Files.writeString(extensions, "subjectAltName=DNS:localhost,IP:127.0.0.1\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
            + "extendedKeyUsage=serverAuth,clientAuth\n");
        run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/O=Strata Test/CN=" + name);
        run("openssl", "x509", "-req", "-in", name + ".csr", "-CA", caName + ".pem", "-CAkey", caName + ".key", "-CAcreateserial",
            "-out", name + ".pem", "-days", "3", "-extfile", name + ".ext");
        run("openssl", "pkcs8", "-topk8", "-in", name + ".key", "-out", name + ".enc.key", "-v2", "aes-256-cbc", "-passout", "pass:" + KEY_PASSWORD);
        Files.writeString(dir.resolve(name + "-store.pem"), Files.readString(dir.resolve(name + ".key")) + Files.readString(dir.resolve(name + ".pem"))
            + Files.readString(dir.resolve(caName + ".pem")));
        run("openssl", "pkcs12", "-export", "-in", name + ".pem", "-inkey", name + ".key", "-certfile", caName + ".pem", "-name", name,
            "-out", name + ".p12", "-passout", "pass:" + PASSWORD);
        run("keytool", "-importkeystore", "-noprompt", "-srckeystore", name + ".p12", "-srcstoretype", "PKCS12", "-srcstorepass", PASSWORD,
            "-destkeystore", name + ".jks", "-deststoretype", "JKS", "-deststorepass", PASSWORD);
        return new Entity("CN=" + name + ",O=Strata Test", dir.resolve(name + ".pem"), dir.resolve(name + ".key"), dir.resolve(name + ".enc.key"),
            dir.resolve(name + "-store.pem"), dir.resolve(name + ".p12"), dir.resolve(name + ".jks"));
    }

    private void run(String... command) throws IOException, InterruptedException {
        Path log = dir.resolve("command.log");
        Process process = new ProcessBuilder(new ArrayList<>(List.of(command))).directory(dir.toFile()).redirectErrorStream(true)
            .redirectOutput(log.toFile()).start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException("timed out: " + String.join(" ", command));
        }
        if (process.exitValue() != 0) {
            throw new IOException("failed (" + process.exitValue() + "): " + String.join(" ", command) + "\n"
                + Files.readString(log, StandardCharsets.UTF_8));
        }
    }
}
