// Opens a callback body the way a Java merchant does, on the JDK alone (no library):
//   java CallbackDecrypt.java merchant-public.pem < body.b64
// The body is Base64 of RSA blocks, each exactly as long as the key (128 bytes for 1024 bits,
// 256 for 2048). The service encrypted each block with the merchant's PRIVATE key (PKCS#1 v1.5),
// so the merchant opens each block with the PUBLIC key, then joins the plaintexts and reads UTF-8.
import java.math.BigInteger;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import javax.crypto.Cipher;

public class CallbackDecrypt {
    public static void main(String[] args) throws Exception {
        RSAPublicKey key = readPublicKey(Path.of(args[0]));
        // The raw body as text: Base64, standard alphabet, padded. Only a line end a shell adds is dropped.
        String body = new String(System.in.readAllBytes(), StandardCharsets.US_ASCII).stripTrailing();
        System.out.write(openCallback(body, key));
        System.out.flush();
    }

    /** Strict Base64, then decrypt block by block with the public key, then join the plaintexts (docs/merchant-guide.md). */
    static byte[] openCallback(String body, RSAPublicKey key) throws GeneralSecurityException, IOException {
        if (!body.matches("[A-Za-z0-9+/]+={0,2}") || body.length() % 4 != 0) {
            throw new IllegalArgumentException("not strict Base64");   // the decoder accepts a missing '='
        }
        byte[] cipherText = Base64.getDecoder().decode(body);
        int block = (key.getModulus().bitLength() + 7) / 8;           // key size in bytes: 128, 256, ...
        if (cipherText.length % block != 0) {
            throw new IllegalArgumentException("not a whole number of " + block + "-byte blocks");
        }
        Cipher rsa = Cipher.getInstance("RSA/ECB/PKCS1Padding");
        rsa.init(Cipher.DECRYPT_MODE, key);                           // the public key opens private-key blocks
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        for (int at = 0; at < cipherText.length; at += block) {
            plain.write(rsa.doFinal(cipherText, at, block));          // one block per call
        }
        return plain.toByteArray();                                   // UTF-8 JSON: parse amounts as BigDecimal
    }

    /** An SPKI PEM ("BEGIN PUBLIC KEY") or the same DER as bare Base64, as merchant portals hand it out. */
    static RSAPublicKey readPublicKey(Path file) throws Exception {
        String text = Files.readString(file).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        return (RSAPublicKey) KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(text)));
    }
}
