import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.Key;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.RSAKey;
import java.security.spec.AlgorithmParameterSpec;
import java.security.spec.MGF1ParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import javax.crypto.Cipher;
import javax.crypto.spec.OAEPParameterSpec;
import javax.crypto.spec.PSource;

/**
 * Makes the Java half of the RSA interop vectors (test/vectors/make-vectors.sh runs it) and
 * cross-checks the OpenSSL half.
 *
 * Usage: java RsaVectors VECTORS_DIR OPENSSL_TSV OUT_TSV
 *
 * TSV columns (no header): id source bits padding encryptedWith plaintextBlock plaintext
 * privateKey publicKey ciphertext deterministic. Paths are relative to VECTORS_DIR.
 *
 * Encryption is segmented the way Java merchants and the service do it: the plaintext is cut
 * into plaintextBlock-byte pieces, each piece goes through Cipher.doFinal, the outputs are
 * concatenated and Base64-encoded.
 */
public final class RsaVectors {
    private static Path dir;

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: RsaVectors VECTORS_DIR OPENSSL_TSV OUT_TSV");
        }
        dir = Paths.get(args[0]);
        int checked = crossCheckOpenssl(Paths.get(args[1]));
        System.err.println("java: cross-checked " + checked + " OpenSSL vectors");

        List<String> out = new ArrayList<>();
        // RSA/ECB/PKCS1Padding ("RSA"), private key: how the service encrypts callbacks and responses.
        out.add(make("java-pkcs1-private-1024-short", 1024, "pkcs1", "private", "plain/short.json"));
        out.add(make("java-pkcs1-private-1024-multiblock", 1024, "pkcs1", "private", "plain/multiblock.json"));
        out.add(make("java-pkcs1-private-1024-utf8", 1024, "pkcs1", "private", "plain/utf8.json"));
        out.add(make("java-pkcs1-private-2048-multiblock", 2048, "pkcs1", "private", "plain/multiblock.json"));
        out.add(make("java-pkcs1-private-4096-multiblock", 4096, "pkcs1", "private", "plain/multiblock.json"));
        // RSA/ECB/PKCS1Padding, public key: how a merchant encrypts a request.
        out.add(make("java-pkcs1-public-1024-multiblock", 1024, "pkcs1", "public", "plain/multiblock.json"));
        out.add(make("java-pkcs1-public-1024-utf8", 1024, "pkcs1", "public", "plain/utf8.json"));
        out.add(make("java-pkcs1-public-2048-multiblock", 2048, "pkcs1", "public", "plain/multiblock.json"));
        // OAEPWithSHA-1AndMGF1Padding (SHA-1 for both the label hash and MGF1).
        out.add(make("java-oaep-sha1-public-1024-multiblock", 1024, "oaep-sha1", "public", "plain/multiblock.json"));
        out.add(make("java-oaep-sha1-public-2048-utf8", 2048, "oaep-sha1", "public", "plain/utf8.json"));
        // OAEPWithSHA-256AndMGF1Padding with an explicit OAEPParameterSpec (SHA-256 everywhere).
        out.add(make("java-oaep-sha256-public-1024-multiblock", 1024, "oaep-sha256", "public", "plain/multiblock.json"));
        out.add(make("java-oaep-sha256-public-2048-utf8", 2048, "oaep-sha256", "public", "plain/utf8.json"));
        out.add(make("java-oaep-sha256-public-4096-multiblock", 4096, "oaep-sha256", "public", "plain/multiblock.json"));
        // OAEPWithSHA-256AndMGF1Padding with Java's default parameters: label hash SHA-256, MGF1-SHA-1.
        out.add(make("java-oaep-sha256-mgf1sha1-public-1024-multiblock", 1024, "oaep-sha256-mgf1sha1", "public", "plain/multiblock.json"));

        Files.write(Paths.get(args[2]), out, StandardCharsets.UTF_8);
        System.err.println("java: wrote " + out.size() + " vectors");
    }

    /** Encrypts one plaintext file with one key half and padding; self-checks by decrypting. */
    private static String make(String id, int bits, String padding, String half, String plaintext) throws Exception {
        String priv = "keys/rsa" + bits + "-private.pem";
        String pub = "keys/rsa" + bits + "-public.pem";
        Key encKey = "private".equals(half) ? privateKey(priv) : publicKey(pub);
        Key decKey = "private".equals(half) ? publicKey(pub) : privateKey(priv);
        int k = modulusBytes(encKey);
        if (k * 8 != bits) throw new IllegalStateException(id + ": key is " + (k * 8) + " bits, expected " + bits);
        int block = maxBlock(padding, k);
        byte[] plain = Files.readAllBytes(dir.resolve(plaintext));
        byte[] cipherBytes = crypt(padding, Cipher.ENCRYPT_MODE, encKey, plain, block);
        if (cipherBytes.length % k != 0) throw new IllegalStateException(id + ": ciphertext not a multiple of " + k);
        byte[] back = crypt(padding, Cipher.DECRYPT_MODE, decKey, cipherBytes, k);
        if (!Arrays.equals(back, plain)) throw new IllegalStateException(id + ": Java round trip failed");
        boolean deterministic = "pkcs1".equals(padding) && "private".equals(half);
        if (deterministic) {
            byte[] again = crypt(padding, Cipher.ENCRYPT_MODE, encKey, plain, block);
            if (!Arrays.equals(again, cipherBytes)) throw new IllegalStateException(id + ": private-key PKCS#1 not deterministic");
        }
        return String.join("\t", id, "java", Integer.toString(bits), padding, half, Integer.toString(block), plaintext, priv, pub,
            Base64.getEncoder().encodeToString(cipherBytes), Boolean.toString(deterministic));
    }

    /** Decrypts every OpenSSL vector with the other key half; re-encrypts deterministic ones byte for byte. */
    private static int crossCheckOpenssl(Path tsv) throws Exception {
        int n = 0;
        for (String line : Files.readAllLines(tsv, StandardCharsets.UTF_8)) {
            if (line.isEmpty()) continue;
            String[] f = line.split("\t", -1);
            String id = f[0], padding = f[3], half = f[4];
            int block = Integer.parseInt(f[5]);
            byte[] plain = Files.readAllBytes(dir.resolve(f[6]));
            byte[] cipherBytes = Base64.getDecoder().decode(f[9]);
            Key decKey = "private".equals(half) ? publicKey(f[8]) : privateKey(f[7]);
            int k = modulusBytes(decKey);
            byte[] back = crypt(padding, Cipher.DECRYPT_MODE, decKey, cipherBytes, k);
            if (!Arrays.equals(back, plain)) {
                throw new IllegalStateException("MISMATCH: Java decrypts OpenSSL vector " + id + " to different bytes");
            }
            if (Boolean.parseBoolean(f[10])) {
                byte[] mine = crypt(padding, Cipher.ENCRYPT_MODE, privateKey(f[7]), plain, block);
                if (!Arrays.equals(mine, cipherBytes)) {
                    throw new IllegalStateException("MISMATCH: Java's private-key encryption differs from OpenSSL vector " + id);
                }
            }
            n++;
        }
        return n;
    }

    /** Runs the cipher over `in` in `step`-byte segments and concatenates the results. */
    private static byte[] crypt(String padding, int mode, Key key, byte[] in, int step) throws Exception {
        Cipher cipher = cipher(padding);
        AlgorithmParameterSpec spec = spec(padding);
        if (spec == null) cipher.init(mode, key); else cipher.init(mode, key, spec);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int off = 0; off < in.length; off += step) {
            out.write(cipher.doFinal(in, off, Math.min(step, in.length - off)));
        }
        return out.toByteArray();
    }

    private static Cipher cipher(String padding) throws Exception {
        switch (padding) {
            case "pkcs1": return Cipher.getInstance("RSA"); // = RSA/ECB/PKCS1Padding
            case "oaep-sha1": return Cipher.getInstance("RSA/ECB/OAEPWithSHA-1AndMGF1Padding");
            case "oaep-sha256":
            case "oaep-sha256-mgf1sha1": return Cipher.getInstance("RSA/ECB/OAEPWithSHA-256AndMGF1Padding");
            default: throw new IllegalArgumentException("unknown padding " + padding);
        }
    }

    /** Null means the transformation's defaults (for OAEP-SHA-256 that is MGF1-SHA-1). */
    private static AlgorithmParameterSpec spec(String padding) {
        if ("oaep-sha256".equals(padding)) {
            return new OAEPParameterSpec("SHA-256", "MGF1", MGF1ParameterSpec.SHA256, PSource.PSpecified.DEFAULT);
        }
        return null;
    }

    private static int maxBlock(String padding, int k) {
        switch (padding) {
            case "pkcs1": return k - 11;
            case "oaep-sha1": return k - 2 * 20 - 2;
            default: return k - 2 * 32 - 2; // the label hash (SHA-256) fixes the size, not MGF1
        }
    }

    private static int modulusBytes(Key key) {
        return (((RSAKey) key).getModulus().bitLength() + 7) / 8;
    }

    private static byte[] pemBody(String file, String type) throws Exception {
        String text = new String(Files.readAllBytes(dir.resolve(file)), StandardCharsets.US_ASCII);
        String begin = "-----BEGIN " + type + "-----";
        String end = "-----END " + type + "-----";
        int a = text.indexOf(begin), b = text.indexOf(end);
        if (a < 0 || b < 0) throw new IllegalArgumentException(file + ": no " + type + " PEM block");
        return Base64.getMimeDecoder().decode(text.substring(a + begin.length(), b));
    }

    private static PrivateKey privateKey(String file) throws Exception {
        return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(pemBody(file, "PRIVATE KEY")));
    }

    private static PublicKey publicKey(String file) throws Exception {
        return KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(pemBody(file, "PUBLIC KEY")));
    }
}
