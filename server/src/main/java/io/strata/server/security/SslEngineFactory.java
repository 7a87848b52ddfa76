package io.strata.server.security;

import io.strata.common.config.ConfigException;
import io.strata.server.security.SslSettings.ClientAuth;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.TrustManagerFactory;
import javax.security.auth.x500.X500Principal;

/**
 * The TLS side of one listener: an {@link SSLContext} built once from the listener's
 * {@link SslSettings} (JDK provider), and engines for its connections, server side (a listener's
 * accepted connections) or client side (the broker's own connections to that listener on other
 * nodes). Everything is checked at construction, so a bad key store, password, protocol or
 * cipher suite stops the start with a {@link ConfigException} naming the key and the listener.
 *
 * <p>Key store ({@code ssl.keystore.type}): JKS (Kafka's default), PKCS12, any other type the JDK
 * has, or PEM ({@link PemKeyStores}) from {@code ssl.keystore.location} or inline
 * {@code ssl.keystore.key} + {@code ssl.keystore.certificate.chain}. As in Kafka a PEM store has no
 * store password, only {@code ssl.key.password} for an encrypted key; the key of a file store is
 * unlocked with {@code ssl.key.password}, else the store password. Trust store likewise
 * ({@code ssl.truststore.certificates} inline); with none, the JDK's default trusted CAs.
 *
 * <p>Immutable; engines may be created from any thread.
 */
public final class SslEngineFactory {
    private static final String PEM = "PEM";

    private final SslSettings settings;
    private final SSLContext context;
    private final String[] enabledProtocols;
    private final String[] cipherSuites;
    private final ClientAuth clientAuth;
    private final String endpointIdentificationAlgorithm;
    private final SslPrincipalMapper principalMapper;
    private final List<X509Certificate> keyStoreCertificates;

    private SslEngineFactory(SslSettings settings, SSLContext context, String[] enabledProtocols, String[] cipherSuites,
                             SslPrincipalMapper principalMapper, List<X509Certificate> keyStoreCertificates) {
        this.settings = settings;
        this.context = context;
        this.enabledProtocols = enabledProtocols;
        this.cipherSuites = cipherSuites;
        this.clientAuth = settings.clientAuth();
        this.endpointIdentificationAlgorithm = settings.get(SslSettings.ENDPOINT_IDENTIFICATION_ALGORITHM);
        this.principalMapper = principalMapper;
        this.keyStoreCertificates = keyStoreCertificates;
    }

    /**
     * @param requireKeyStore whether a key store must be configured (a server side must present a certificate)
     * @throws ConfigException naming the key (per-listener form when that is what was set) and the problem
     */
    public static SslEngineFactory create(SslSettings settings, boolean requireKeyStore) {
        KeyStore keyStore = loadKeyStore(settings);
        if (keyStore == null && requireKeyStore) {
            throw problem(settings, SslSettings.KEYSTORE_LOCATION, null, "an SSL listener needs a key store (" + SslSettings.KEYSTORE_LOCATION
                + ", or " + SslSettings.KEYSTORE_KEY + " and " + SslSettings.KEYSTORE_CERTIFICATE_CHAIN + " with " + SslSettings.KEYSTORE_TYPE + "=PEM)");
        }
        KeyStore trustStore = loadTrustStore(settings);
        SSLContext context;
        String protocol = settings.get(SslSettings.PROTOCOL);
        try {
            context = SSLContext.getInstance(protocol);
        } catch (GeneralSecurityException e) {
            throw problem(settings, SslSettings.PROTOCOL, protocol, "not supported by this JVM: " + e.getMessage());
        }
        try {
            context.init(keyStore == null ? null : keyManagers(settings, keyStore), trustManagers(settings, trustStore), secureRandom(settings));
        } catch (GeneralSecurityException e) {
            throw problem(settings, SslSettings.KEYSTORE_LOCATION, settings.get(SslSettings.KEYSTORE_LOCATION), "cannot initialise TLS: " + e.getMessage());
        }
        SSLEngine probe = context.createSSLEngine();
        String[] protocols = supported(settings, SslSettings.ENABLED_PROTOCOLS, probe.getSupportedProtocols());
        String[] suites = supported(settings, SslSettings.CIPHER_SUITES, probe.getSupportedCipherSuites());
        SslPrincipalMapper mapper;
        String rules = settings.get(SslSettings.PRINCIPAL_MAPPING_RULES);
        try {
            mapper = SslPrincipalMapper.parse(rules);
        } catch (IllegalArgumentException e) {
            throw problem(settings, SslSettings.PRINCIPAL_MAPPING_RULES, rules, e.getMessage());
        }
        return new SslEngineFactory(settings, context, protocols, suites, mapper, certificates(keyStore));
    }

    /**
     * The client side of TLS for this node's own connections to {@code listenerName} on other
     * nodes (raft, broker to controller, markers, replica fetchers), built from that listener's
     * settings; null when the listener is PLAINTEXT.
     */
    public static SslEngineFactory forOwnConnections(io.strata.server.config.ServerConfig config, String listenerName) {
        if (listenerName == null || !io.strata.server.config.ListenerSecurity.SSL.equals(config.securityProtocol(listenerName))) {
            return null;
        }
        return create(SslSettings.forListener(config.originals(), listenerName), false);
    }

    /** An engine for a connection this listener accepted. */
    public SSLEngine createServerEngine() {
        SSLEngine engine = context.createSSLEngine();
        configure(engine);
        engine.setUseClientMode(false);
        switch (clientAuth) {
            case REQUIRED -> engine.setNeedClientAuth(true);
            case REQUESTED -> engine.setWantClientAuth(true);
            case NONE -> engine.setNeedClientAuth(false);
        }
        return engine;
    }

    /** An engine for a connection to {@code host}:{@code port}, checking the host name when {@code ssl.endpoint.identification.algorithm} asks for it. */
    public SSLEngine createClientEngine(String host, int port) {
        SSLEngine engine = context.createSSLEngine(host, port);
        configure(engine);
        engine.setUseClientMode(true);
        if (endpointIdentificationAlgorithm != null && !endpointIdentificationAlgorithm.isEmpty()) {
            SSLParameters parameters = engine.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm(endpointIdentificationAlgorithm);
            engine.setSSLParameters(parameters);
        }
        return engine;
    }

    private void configure(SSLEngine engine) {
        if (enabledProtocols.length > 0) {
            engine.setEnabledProtocols(enabledProtocols);
        }
        if (cipherSuites.length > 0) {
            engine.setEnabledCipherSuites(cipherSuites);
        }
    }

    /**
     * The principal of a connection whose handshake completed: {@code User:} and the peer
     * certificate's subject DN mapped by {@code ssl.principal.mapping.rules}; {@code User:ANONYMOUS}
     * when the peer sent no certificate. Empty when no rule maps the DN (the connection must go).
     */
    public Optional<String> principal(SSLSession session) {
        java.security.Principal peer;
        try {
            peer = session.getPeerPrincipal();
        } catch (SSLPeerUnverifiedException e) {
            return Optional.of(Principals.ANONYMOUS);
        }
        if (!(peer instanceof X500Principal x500)) {
            return Optional.of(Principals.user(peer.getName()));
        }
        return principalMapper.map(x500.getName()).map(Principals::user);
    }

    /** The certificates of the key store (its own chain first), for expiry metrics. */
    public List<X509Certificate> keyStoreCertificates() {
        return keyStoreCertificates;
    }

    public ClientAuth clientAuth() {
        return clientAuth;
    }

    @Override
    public String toString() {
        return "SslEngineFactory(" + settings + ", protocols=" + Arrays.toString(enabledProtocols) + ", clientAuth=" + clientAuth + ")";
    }

    // ---------------------------------------------------------------- loading

    private static KeyStore loadKeyStore(SslSettings settings) {
        String type = settings.get(SslSettings.KEYSTORE_TYPE);
        String location = settings.getNonEmpty(SslSettings.KEYSTORE_LOCATION);
        String inlineKey = settings.getNonEmpty(SslSettings.KEYSTORE_KEY);
        String inlineChain = settings.getNonEmpty(SslSettings.KEYSTORE_CERTIFICATE_CHAIN);
        String storePassword = settings.getNonEmpty(SslSettings.KEYSTORE_PASSWORD);
        String keyPassword = settings.getNonEmpty(SslSettings.KEY_PASSWORD);
        if (!PEM.equalsIgnoreCase(type)) {
            if (inlineKey != null || inlineChain != null) {
                throw problem(settings, inlineKey != null ? SslSettings.KEYSTORE_KEY : SslSettings.KEYSTORE_CERTIFICATE_CHAIN, "<hidden>",
                    "inline PEM needs " + SslSettings.KEYSTORE_TYPE + "=PEM (it is " + type + ")");
            }
            if (location == null) {
                return null;
            }
            if (storePassword == null) {
                throw problem(settings, SslSettings.KEYSTORE_PASSWORD, null, "the key store " + location + " is set but its password is not");
            }
            return loadFile(settings, SslSettings.KEYSTORE_LOCATION, type, location, storePassword);
        }
        if (storePassword != null) {
            throw problem(settings, SslSettings.KEYSTORE_PASSWORD, "<hidden>",
                "a PEM key store has no store password; only " + SslSettings.KEY_PASSWORD + " for an encrypted key");
        }
        String keyPem;
        String chainPem;
        String key;
        if (location != null) {
            if (inlineKey != null || inlineChain != null) {
                throw problem(settings, SslSettings.KEYSTORE_LOCATION, location, "set either the PEM file or " + SslSettings.KEYSTORE_KEY
                    + " and " + SslSettings.KEYSTORE_CERTIFICATE_CHAIN + ", not both");
            }
            keyPem = readText(settings, SslSettings.KEYSTORE_LOCATION, location);
            chainPem = keyPem;
            key = SslSettings.KEYSTORE_LOCATION;
        } else if (inlineKey != null || inlineChain != null) {
            if (inlineKey == null || inlineChain == null) {
                throw problem(settings, inlineKey == null ? SslSettings.KEYSTORE_KEY : SslSettings.KEYSTORE_CERTIFICATE_CHAIN, null,
                    "inline PEM needs both " + SslSettings.KEYSTORE_KEY + " and " + SslSettings.KEYSTORE_CERTIFICATE_CHAIN);
            }
            keyPem = inlineKey;
            chainPem = inlineChain;
            key = SslSettings.KEYSTORE_KEY;
        } else {
            return null;
        }
        try {
            return PemKeyStores.keyStore(keyPem, chainPem, keyPassword == null ? null : keyPassword.toCharArray());
        } catch (GeneralSecurityException e) {
            throw problem(settings, key, key.equals(SslSettings.KEYSTORE_LOCATION) ? location : "<hidden>", "invalid PEM key store: " + e.getMessage());
        }
    }

    private static KeyStore loadTrustStore(SslSettings settings) {
        String type = settings.get(SslSettings.TRUSTSTORE_TYPE);
        String location = settings.getNonEmpty(SslSettings.TRUSTSTORE_LOCATION);
        String inline = settings.getNonEmpty(SslSettings.TRUSTSTORE_CERTIFICATES);
        String password = settings.getNonEmpty(SslSettings.TRUSTSTORE_PASSWORD);
        if (!PEM.equalsIgnoreCase(type)) {
            if (inline != null) {
                throw problem(settings, SslSettings.TRUSTSTORE_CERTIFICATES, "<certificates>", "needs " + SslSettings.TRUSTSTORE_TYPE + "=PEM (it is " + type + ")");
            }
            return location == null ? null : loadFile(settings, SslSettings.TRUSTSTORE_LOCATION, type, location, password);
        }
        if (password != null) {
            throw problem(settings, SslSettings.TRUSTSTORE_PASSWORD, "<hidden>", "a PEM trust store has no password");
        }
        if (location != null && inline != null) {
            throw problem(settings, SslSettings.TRUSTSTORE_LOCATION, location, "set either the PEM file or " + SslSettings.TRUSTSTORE_CERTIFICATES + ", not both");
        }
        if (location == null && inline == null) {
            return null;
        }
        String key = location != null ? SslSettings.TRUSTSTORE_LOCATION : SslSettings.TRUSTSTORE_CERTIFICATES;
        try {
            return PemKeyStores.trustStore(location != null ? readText(settings, key, location) : inline);
        } catch (GeneralSecurityException e) {
            throw problem(settings, key, location != null ? location : "<certificates>", "invalid PEM trust store: " + e.getMessage());
        }
    }

    private static KeyStore loadFile(SslSettings settings, String key, String type, String location, String password) {
        KeyStore store;
        try {
            store = KeyStore.getInstance(type.toUpperCase(Locale.ROOT));
        } catch (GeneralSecurityException e) {
            throw problem(settings, key.replace("location", "type"), type, "unknown key store type (JKS, PKCS12 or PEM)");
        }
        try (InputStream in = Files.newInputStream(Path.of(location))) {
            store.load(in, password == null ? null : password.toCharArray());
            return store;
        } catch (IOException | GeneralSecurityException e) {
            // A wrong password shows as an IOException whose cause is an UnrecoverableKeyException.
            if (e.getCause() instanceof java.security.UnrecoverableKeyException) {
                throw problem(settings, key.replace("location", "password"), "<hidden>", "wrong password for the " + type + " store " + location);
            }
            throw problem(settings, key, location, "cannot load the " + type + " store: " + e);
        }
    }

    private static String readText(SslSettings settings, String key, String location) {
        try {
            return Files.readString(Path.of(location), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw problem(settings, key, location, "cannot read the PEM file: " + e);
        }
    }

    private static javax.net.ssl.KeyManager[] keyManagers(SslSettings settings, KeyStore keyStore) {
        String algorithm = settings.get(SslSettings.KEYMANAGER_ALGORITHM);
        String keyPassword = settings.getNonEmpty(SslSettings.KEY_PASSWORD);
        String storePassword = settings.getNonEmpty(SslSettings.KEYSTORE_PASSWORD);
        boolean pem = PEM.equalsIgnoreCase(settings.get(SslSettings.KEYSTORE_TYPE));
        String password = keyPassword != null ? keyPassword : storePassword;
        try {
            KeyManagerFactory factory = KeyManagerFactory.getInstance(algorithm);
            factory.init(keyStore, password == null || (pem && keyPassword == null) ? new char[0] : password.toCharArray());
            return factory.getKeyManagers();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw problem(settings, SslSettings.KEYMANAGER_ALGORITHM, algorithm, "unknown key manager algorithm");
        } catch (GeneralSecurityException e) {
            throw problem(settings, SslSettings.KEY_PASSWORD, "<hidden>", "cannot unlock the private key of the key store (wrong "
                + (keyPassword != null ? SslSettings.KEY_PASSWORD : SslSettings.KEYSTORE_PASSWORD) + "?): " + e.getMessage());
        }
    }

    private static javax.net.ssl.TrustManager[] trustManagers(SslSettings settings, KeyStore trustStore) {
        String algorithm = settings.get(SslSettings.TRUSTMANAGER_ALGORITHM);
        try {
            TrustManagerFactory factory = TrustManagerFactory.getInstance(algorithm);
            factory.init(trustStore); // null: the JDK's default trusted CAs
            return factory.getTrustManagers();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw problem(settings, SslSettings.TRUSTMANAGER_ALGORITHM, algorithm, "unknown trust manager algorithm");
        } catch (GeneralSecurityException e) {
            throw problem(settings, SslSettings.TRUSTSTORE_LOCATION, settings.get(SslSettings.TRUSTSTORE_LOCATION), e.getMessage());
        }
    }

    private static SecureRandom secureRandom(SslSettings settings) {
        String implementation = settings.getNonEmpty(SslSettings.SECURE_RANDOM_IMPLEMENTATION);
        if (implementation == null) {
            return null;
        }
        try {
            return SecureRandom.getInstance(implementation);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw problem(settings, SslSettings.SECURE_RANDOM_IMPLEMENTATION, implementation, "unknown secure random implementation");
        }
    }

    /** The configured list, each entry checked against what the engine supports; empty when unset (the JDK's defaults). */
    private static String[] supported(SslSettings settings, String key, String[] available) {
        List<String> configured = settings.getList(key);
        Set<String> supported = Set.of(available);
        List<String> unsupported = configured.stream().filter(item -> !supported.contains(item)).toList();
        if (!unsupported.isEmpty()) {
            throw problem(settings, key, String.join(",", configured), "not supported by this JVM: " + String.join(", ", unsupported));
        }
        return configured.toArray(new String[0]);
    }

    private static List<X509Certificate> certificates(KeyStore keyStore) {
        if (keyStore == null) {
            return List.of();
        }
        List<X509Certificate> certificates = new ArrayList<>();
        try {
            for (String alias : Collections.list(keyStore.aliases())) {
                Certificate[] chain = keyStore.getCertificateChain(alias);
                if (chain != null) {
                    for (Certificate certificate : chain) {
                        if (certificate instanceof X509Certificate x509) {
                            certificates.add(x509);
                        }
                    }
                }
            }
        } catch (java.security.KeyStoreException e) {
            throw new IllegalStateException("key store not loaded", e);
        }
        return List.copyOf(certificates);
    }

    private static ConfigException problem(SslSettings settings, String key, Object value, String problem) {
        String where = settings.listenerName() == null ? "" : " (listener " + settings.listenerName() + ")";
        return new ConfigException(settings.keyOf(key), value, problem + where);
    }
}
