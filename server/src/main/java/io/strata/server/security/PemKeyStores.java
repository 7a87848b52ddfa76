package io.strata.server.security;

import java.io.ByteArrayInputStream;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Cipher;
import javax.crypto.EncryptedPrivateKeyInfo;
import javax.crypto.SecretKey;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * Kafka's PEM key stores ({@code ssl.keystore.type=PEM}, KIP-651) as in-memory {@link KeyStore}s:
 * a key store is one PKCS#8 private key ({@code -----BEGIN PRIVATE KEY-----}, or
 * {@code -----BEGIN ENCRYPTED PRIVATE KEY-----} decrypted with {@code ssl.key.password}) and its
 * certificate chain ({@code -----BEGIN CERTIFICATE-----} blocks, the key's own certificate first);
 * a trust store is one or more certificates. Both come from a file or inline text; other PEM
 * blocks (such as a PKCS#1 {@code RSA PRIVATE KEY}) are refused, as Kafka refuses them.
 *
 * <p>Stateless.
 */
final class PemKeyStores {
    private static final Pattern BLOCK = Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([^-]*)-----END \\1-----");
    private static final String CERTIFICATE = "CERTIFICATE";
    private static final String PRIVATE_KEY = "PRIVATE KEY";
    private static final String ENCRYPTED_PRIVATE_KEY = "ENCRYPTED PRIVATE KEY";
    private static final List<String> KEY_ALGORITHMS = List.of("RSA", "EC", "DSA", "Ed25519", "Ed448");
    static final String KEY_ALIAS = "kafka";
    private static final String PBES2_OID = "1.2.840.113549.1.5.13";

    private PemKeyStores() {
    }

    private record Block(String type, byte[] der) {
    }

    /**
     * @param keyPassword the password of an encrypted key, or null
     * @throws GeneralSecurityException when the text holds no key, several keys, no certificate,
     *                                  or a key that does not decrypt or parse
     */
    static KeyStore keyStore(String keyPem, String certificateChainPem, char[] keyPassword) throws GeneralSecurityException {
        List<Block> keys = blocks(keyPem).stream().filter(block -> !block.type().equals(CERTIFICATE)).toList();
        if (keys.size() != 1) {
            throw new GeneralSecurityException("expected one PRIVATE KEY or ENCRYPTED PRIVATE KEY block, found " + keys.size());
        }
        List<Certificate> chain = certificates(certificateChainPem);
        if (chain.isEmpty()) {
            throw new GeneralSecurityException("no CERTIFICATE block for the key's certificate chain");
        }
        PrivateKey key = privateKey(keys.get(0), keyPassword);
        KeyStore store = emptyStore();
        store.setKeyEntry(KEY_ALIAS, key, keyPassword == null ? new char[0] : keyPassword, chain.toArray(new Certificate[0]));
        return store;
    }

    /** A trust store of every certificate in {@code pem}. */
    static KeyStore trustStore(String pem) throws GeneralSecurityException {
        List<Certificate> certificates = certificates(pem);
        if (certificates.isEmpty()) {
            throw new GeneralSecurityException("no CERTIFICATE block");
        }
        KeyStore store = emptyStore();
        for (int i = 0; i < certificates.size(); i++) {
            store.setCertificateEntry("kafka" + i, certificates.get(i));
        }
        return store;
    }

    private static KeyStore emptyStore() throws GeneralSecurityException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try {
            store.load(null, null);
        } catch (java.io.IOException e) {
            throw new GeneralSecurityException(e);
        }
        return store;
    }

    private static List<Certificate> certificates(String pem) throws GeneralSecurityException {
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        List<Certificate> certificates = new ArrayList<>();
        for (Block block : blocks(pem)) {
            if (block.type().equals(CERTIFICATE)) {
                certificates.add(factory.generateCertificate(new ByteArrayInputStream(block.der())));
            }
        }
        return certificates;
    }

    private static List<Block> blocks(String pem) throws GeneralSecurityException {
        List<Block> blocks = new ArrayList<>();
        Matcher matcher = BLOCK.matcher(pem);
        while (matcher.find()) {
            String type = matcher.group(1);
            if (!type.equals(CERTIFICATE) && !type.equals(PRIVATE_KEY) && !type.equals(ENCRYPTED_PRIVATE_KEY)) {
                throw new GeneralSecurityException("unsupported PEM block " + type + " (expected PKCS#8 PRIVATE KEY, ENCRYPTED PRIVATE KEY or CERTIFICATE)");
            }
            try {
                blocks.add(new Block(type, Base64.getMimeDecoder().decode(matcher.group(2))));
            } catch (IllegalArgumentException e) {
                throw new GeneralSecurityException("PEM block " + type + " is not base64: " + e.getMessage());
            }
        }
        return blocks;
    }

    private static PrivateKey privateKey(Block block, char[] keyPassword) throws GeneralSecurityException {
        PKCS8EncodedKeySpec spec;
        if (block.type().equals(ENCRYPTED_PRIVATE_KEY)) {
            if (keyPassword == null) {
                throw new GeneralSecurityException("the private key is encrypted and no key password is set");
            }
            spec = decrypt(block.der(), keyPassword);
        } else {
            spec = new PKCS8EncodedKeySpec(block.der());
        }
        for (String algorithm : KEY_ALGORITHMS) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (InvalidKeySpecException | java.security.NoSuchAlgorithmException e) {
                // Not this algorithm; PKCS#8 names it only by object identifier.
            }
        }
        throw new GeneralSecurityException("the private key is none of " + KEY_ALGORITHMS);
    }

    private static PKCS8EncodedKeySpec decrypt(byte[] der, char[] password) throws GeneralSecurityException {
        try {
            EncryptedPrivateKeyInfo info = new EncryptedPrivateKeyInfo(der);
            // PBES2 keys (openssl's default) name their cipher and PRF in the parameters, whose JDK name both factories take.
            String algorithm = info.getAlgName();
            if ((algorithm.equals("PBES2") || algorithm.equals(PBES2_OID)) && info.getAlgParameters() != null) {
                algorithm = info.getAlgParameters().toString(); // e.g. PBEWithHmacSHA256AndAES_256
            }
            SecretKeyFactory factory = SecretKeyFactory.getInstance(algorithm);
            SecretKey secret = factory.generateSecret(new PBEKeySpec(password));
            Cipher cipher = Cipher.getInstance(algorithm);
            cipher.init(Cipher.DECRYPT_MODE, secret, info.getAlgParameters());
            return info.getKeySpec(cipher);
        } catch (java.io.IOException e) {
            throw new GeneralSecurityException("the encrypted private key cannot be read: " + e.getMessage(), e);
        }
    }
}
