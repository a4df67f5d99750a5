// Opens a callback body the way a Java merchant does, on the JDK alone (no library):
//   java CallbackDecrypt.java merchant-public.pem < body.b64
// The body is Base64 of RSA blocks, each exactly as long as the key (128 bytes for 1024 bits,
// 256 for 2048). The service encrypted each block with the merchant's PRIVATE key (PKCS#1 v1.5),
// so the merchant opens each block with the PUBLIC key, then joins the plaintexts and reads UTF-8.
import java.math.BigInteger;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
        System.out.write(open(body, key));
        System.out.flush();
    }

    /** Base64-decode, then decrypt block by block with the public key, then join the plaintexts. */
    static byte[] open(String body, RSAPublicKey key) throws Exception {
        byte[] cipherText = Base64.getDecoder().decode(body);      // throws on a space, '-', '_', a line break
        int block = (key.getModulus().bitLength() + 7) / 8;       // key size in bytes: 128, 256, ...
        if (cipherText.length == 0 || cipherText.length % block != 0) {
            throw new IllegalArgumentException("ciphertext of " + cipherText.length + " bytes is not a multiple of the " + block + "-byte key size");
        }
        Cipher rsa = Cipher.getInstance("RSA/ECB/PKCS1Padding");
        rsa.init(Cipher.DECRYPT_MODE, key);                       // the public key opens private-key blocks
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        for (int at = 0; at < cipherText.length; at += block) {
            plain.write(rsa.doFinal(cipherText, at, block));      // one block at a time: doFinal takes at most one
        }
        return plain.toByteArray();                               // UTF-8 JSON: parse amounts as BigDecimal
    }

    /** An SPKI PEM ("BEGIN PUBLIC KEY") or the same DER as bare Base64, as merchant portals hand it out. */
    static RSAPublicKey readPublicKey(Path file) throws Exception {
        String text = Files.readString(file).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        return (RSAPublicKey) KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(text)));
    }
}
