package tidemark.bridge;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;

/**
 * TLS for the listening socket from PEM files: a certificate chain and its PKCS#8 private key
 * ("BEGIN PRIVATE KEY", RSA or EC, e.g. openssl genpkey output). TLS 1.2 and 1.3 only.
 */
final class Tls {
    private Tls() {}

    private static final Pattern PEM = Pattern.compile("-----BEGIN ([A-Z ]+)-----([A-Za-z0-9+/=\\s]+)-----END \\1-----");

    /** An unbound server socket serving TLS with the given certificate chain and key. */
    static ServerSocket serverSocket(Path certFile, Path keyFile) throws IOException, GeneralSecurityException {
        List<Certificate> chain = new ArrayList<>();
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        for (byte[] der : blocks(certFile, "CERTIFICATE")) {
            chain.add(cf.generateCertificate(new ByteArrayInputStream(der)));
        }
        List<byte[]> keys = blocks(keyFile, "PRIVATE KEY");
        if (chain.isEmpty() || keys.size() != 1) {
            throw new GeneralSecurityException("want at least one CERTIFICATE in " + certFile + " and one PKCS#8 PRIVATE KEY in " + keyFile);
        }
        PrivateKey key = null;
        for (String alg : new String[] {"EC", "RSA", "Ed25519"}) {
            try {
                key = KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(keys.get(0)));
                break;
            } catch (GeneralSecurityException e) {
                // try the next algorithm
            }
        }
        if (key == null) {
            throw new GeneralSecurityException("unsupported private key in " + keyFile);
        }
        char[] pw = new char[0];
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, pw);
        ks.setKeyEntry("bridge", key, pw, chain.toArray(new Certificate[0]));
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pw);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        SSLServerSocket ss = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket();
        ss.setEnabledProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
        return ss;
    }

    private static List<byte[]> blocks(Path file, String type) throws IOException {
        String text = Files.readString(file, StandardCharsets.US_ASCII);
        List<byte[]> out = new ArrayList<>();
        Matcher m = PEM.matcher(text);
        while (m.find()) {
            if (m.group(1).equals(type)) {
                out.add(Base64.getMimeDecoder().decode(m.group(2)));
            }
        }
        return out;
    }
}
