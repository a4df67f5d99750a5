/*
 * A minimal wallet service in plain JDK 17, written from the interface alone: the energy capacity
 * query, order submission and card close, plus the energy routes of the control API the service
 * guide documents (PUT/GET /__control/merchants/{userId}/energy). Run it as a single-file source program:
 *
 *   java Service.java --port 0 --private-key merchant-private.pem --api-key K --user-id N
 *        [--forbidden-key K] [--expired-key K] [--future-key K] [--control-token T] [--fault NAME[,NAME...]]
 *
 * It prints "service listening on http://127.0.0.1:PORT" once it serves. Crypto: the provider's
 * reading (RSA/ECB/PKCS1Padding, the merchant's public key seals requests, so the service opens them
 * with the private key; the service seals answers with the private key), block by block.
 * It reads input the way a Java service does: java.util.Base64.getDecoder() (unpadded text is read:
 * legal under U-CRYPTO), Jackson-like coercion ("42" for an integer, 20931 for a string: legal under
 * U-CODES). --fault names a deliberate mistake; names starting with "legal-" must still pass.
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import javax.crypto.Cipher;

public class Service {
    static final Map<String, String> FAULTS = new LinkedHashMap<>();
    static {
        FAULTS.put("urlsafe-envelope", "CRYPTO-ENVELOPE: answers envelope data in the URL-safe alphabet (Base64.getUrlEncoder())");
        FAULTS.put("energy-round", "ENERGY-FLOOR: energyMaxCount = Math.round(balance / cost) instead of the floor");
        FAULTS.put("tenant-as-string", "ORDER-RES: echoes tenantUserId as the request's string instead of an integer");
        FAULTS.put("unauthorized-200", "ERR-401: a missing key gets HTTP 200 with an envelope code 401 (a Spring @ControllerAdvice habit)");
        FAULTS.put("legal-unpadded-envelope", "legal: answers envelope data without its = padding (Base64.getEncoder().withoutPadding())");
    }

    static final Set<String> faults = new HashSet<>();
    static RSAPrivateCrtKey privateKey;
    // The expired key (validity ended) and the future key (validity not begun) are known but outside
    // their windows: refused like an unknown key (ERR-401).
    static String apiKey, forbiddenKey, expiredKey, futureKey, controlToken;
    static long userId;
    static volatile BigInteger balance = BigInteger.valueOf(20_000_000L);
    static volatile BigInteger costPerTx = BigInteger.valueOf(64_000L);
    static final Set<String> callBackIds = ConcurrentHashMap.newKeySet();
    static final Set<String> closedCards = ConcurrentHashMap.newKeySet();

    public static void main(String[] args) throws Exception {
        int port = 0;
        String keyFile = null;
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            String value = i + 1 < args.length ? args[++i] : null;
            if (value == null) fail("flag " + flag + " needs a value");
            switch (flag) {
                case "--port" -> port = Integer.parseInt(value);
                case "--private-key" -> keyFile = value;
                case "--api-key" -> apiKey = value;
                case "--forbidden-key" -> forbiddenKey = value;
                case "--expired-key" -> expiredKey = value;
                case "--future-key" -> futureKey = value;
                case "--control-token" -> controlToken = value;
                case "--user-id" -> userId = Long.parseLong(value);
                case "--fault" -> {
                    for (String name : value.split(",")) {
                        if (!FAULTS.containsKey(name)) fail("unknown fault " + name + " (known: " + String.join(", ", FAULTS.keySet()) + ")");
                        faults.add(name);
                    }
                }
                default -> fail("unknown flag " + flag);
            }
        }
        if (keyFile == null || apiKey == null || userId == 0) fail("--private-key, --api-key and --user-id are required");
        String text = Files.readString(Path.of(keyFile), StandardCharsets.US_ASCII).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        privateKey = (RSAPrivateCrtKey) KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(text)));

        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
        server.setExecutor(Executors.newFixedThreadPool(16));
        server.createContext("/", Service::handle);
        server.start();
        System.out.println("service listening on http://127.0.0.1:" + server.getAddress().getPort());
        System.out.flush();
    }

    static void fail(String message) {
        System.err.println("Service: " + message);
        System.exit(2);
    }

    static final class BadInput extends Exception {
        BadInput(String message) {
            super(message);
        }
    }

    static void handle(HttpExchange exchange) throws IOException {
        try {
            String path = exchange.getRequestURI().getPath();
            String method = exchange.getRequestMethod();
            if (path.startsWith("/__control/")) {
                control(exchange, path, method);
            } else if (path.equals("/api/v1/api/order/getEnergyMaxCount") && method.equals("POST")) {
                order(exchange, true);
            } else if (path.equals("/api/v1/api/order/withdrawWithoutVerify") && method.equals("POST")) {
                order(exchange, false);
            } else if (path.equals("/card/close") && method.equals("POST")) {
                cardClose(exchange);
            } else {
                answer(exchange, 404, "{\"code\":\"NOT FOUND\",\"message\":\"not found\"}");
            }
        } catch (Exception e) {
            answer(exchange, 500, "{\"code\":\"INTERNAL\",\"message\":\"internal error\"}");
        }
    }

    static void answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json;charset=UTF-8");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    static void refuse(HttpExchange exchange, int code, String message) throws IOException {
        answer(exchange, 200, "{\"code\":" + code + ",\"message\":" + Json.write(message) + ",\"data\":null}");
    }

    // ---------------------------------------------------------------- control API

    static void control(HttpExchange exchange, String path, String method) throws IOException {
        byte[] raw = exchange.getRequestBody().readAllBytes();
        String token = exchange.getRequestHeaders().getFirst("X-Control-Token");
        if (controlToken == null || token == null || !token.equals(controlToken)) {
            answer(exchange, 401, "{\"error\":\"control token required\"}");
            return;
        }
        if (!path.equals("/__control/merchants/" + userId + "/energy")) {
            answer(exchange, 404, "{\"error\":\"no such control route\"}");
            return;
        }
        if (method.equals("GET")) {
            answer(exchange, 200, "{\"balance\":" + balance + ",\"costPerTx\":" + costPerTx + "}");
            return;
        }
        if (!method.equals("PUT")) {
            answer(exchange, 405, "{\"error\":\"GET or PUT\"}");
            return;
        }
        try {
            Object parsed = new Json(new String(raw, StandardCharsets.UTF_8)).parseDocument();
            if (!(parsed instanceof Map<?, ?> body) || !(body.get("balance") instanceof Num b) || !(body.get("costPerTx") instanceof Num c)) throw new BadInput("balance and costPerTx are required");
            BigInteger newBalance = new BigDecimal(b.text()).toBigIntegerExact();
            BigInteger newCost = new BigDecimal(c.text()).toBigIntegerExact();
            if (newBalance.signum() < 0 || newCost.signum() <= 0) throw new BadInput("balance >= 0 and costPerTx > 0");
            balance = newBalance;
            costPerTx = newCost;
            answer(exchange, 200, "{\"balance\":" + balance + ",\"costPerTx\":" + costPerTx + "}");
        } catch (BadInput | ArithmeticException | NumberFormatException e) {
            answer(exchange, 400, "{\"error\":" + Json.write(String.valueOf(e.getMessage())) + "}");
        }
    }

    // ---------------------------------------------------------------- order endpoints

    static void order(HttpExchange exchange, boolean energy) throws IOException {
        String key = exchange.getRequestHeaders().getFirst("X-API-KEY");
        if (key == null || key.isEmpty() || !(key.equals(apiKey) || key.equals(forbiddenKey))) {
            if (faults.contains("unauthorized-200")) {
                answer(exchange, 200, "{\"code\":401,\"message\":\"unauthorized\"}");
                return;
            }
            answer(exchange, 401, "{\"code\":\"UNAUTHORIZED\",\"message\":\"unauthorized\"}");
            return;
        }
        if (key.equals(forbiddenKey)) {
            answer(exchange, 403, "{\"code\":\"FORBIDDEN\",\"message\":\"forbidden\"}");
            return;
        }
        String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
        byte[] raw = exchange.getRequestBody().readAllBytes();
        if (!mediaType(contentType).equals("application/x-www-form-urlencoded")) {
            refuse(exchange, 40000, "Content-Type must be application/x-www-form-urlencoded");
            return;
        }
        Map<String, Object> plain;
        try {
            String data = formField(new String(raw, StandardCharsets.US_ASCII), "data");
            if (data == null || data.isEmpty()) throw new BadInput("form field data is required");
            Object parsed = new Json(open(data)).parseDocument();
            if (!(parsed instanceof Map)) throw new BadInput("data is not a JSON object");
            @SuppressWarnings("unchecked")
            Map<String, Object> object = (Map<String, Object>) parsed;
            plain = object;
        } catch (BadInput e) {
            refuse(exchange, 40001, e.getMessage());
            return;
        }
        try {
            String result = energy ? energy(plain) : submit(plain);
            answer(exchange, 200, "{\"code\":0,\"message\":\"\",\"data\":" + Json.write(seal(result)) + "}");
        } catch (BadInput e) {
            refuse(exchange, 40002, e.getMessage());
        }
    }

    /** The media type of a Content-Type header, lower case, without its parameters ("" when there is none). */
    static String mediaType(String contentType) {
        return contentType == null ? "" : contentType.split(";", 2)[0].trim().toLowerCase(java.util.Locale.ROOT);
    }

    /** application/x-www-form-urlencoded: the value of one field, URL-decoded. */
    static String formField(String body, String name) {
        for (String pair : body.split("&")) {
            int eq = pair.indexOf('=');
            String field = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            if (field.equals(name)) return eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
        }
        return null;
    }

    static String energy(Map<String, Object> plain) throws BadInput {
        if (!(plain.get("symbol") instanceof String symbol) || symbol.isEmpty()) throw new BadInput("symbol is required");
        if (!(plain.get("chainName") instanceof String chain) || chain.isEmpty()) throw new BadInput("chainName is required");
        if (!symbol.equals("ENERGY")) throw new BadInput("only ENERGY is supported");
        if (!chain.equals("TRON")) throw new BadInput("only TRON is supported");
        BigInteger count = faults.contains("energy-round")
            ? new BigDecimal(balance).divide(new BigDecimal(costPerTx), 0, java.math.RoundingMode.HALF_UP).toBigInteger()
            : balance.divide(costPerTx);
        return "{\"chainName\":\"TRON\",\"symbol\":\"ENERGY\",\"energyMaxCount\":" + count + "}";
    }

    /** Jackson-like binding of an integer: a JSON integer, or a string of digits ("42"). */
    static BigInteger integer(Map<String, Object> plain, String name) throws BadInput {
        Object value = plain.get(name);
        String text = value instanceof Num n ? n.text() : value instanceof String s ? s : null;
        if (text == null || !text.matches("-?\\d{1,30}")) throw new BadInput(name + " must be an integer");
        return new BigInteger(text);
    }

    /** Jackson-like binding of a string: a string, or a scalar number written as text. */
    static String text(Map<String, Object> plain, String name) throws BadInput {
        Object value = plain.get(name);
        String text = value instanceof String s ? s : value instanceof Num n ? n.text() : null;
        if (text == null || text.isEmpty()) throw new BadInput(name + " is required");
        return text;
    }

    static String submit(Map<String, Object> plain) throws BadInput {
        BigInteger user = integer(plain, "userId");
        String tenantUserId = text(plain, "tenantUserId");
        BigInteger tenantType = integer(plain, "tenantType");
        String callBackId = text(plain, "callBackId");
        String symbol = text(plain, "symbol");
        text(plain, "chainName");
        text(plain, "toAddr");
        Object amountValue = plain.get("amount");
        String amountText = amountValue instanceof Num n ? n.text() : amountValue instanceof String s ? s : null;
        if (amountText == null) throw new BadInput("amount is required");
        BigDecimal amount;
        try {
            amount = new BigDecimal(amountText);
        } catch (NumberFormatException e) {
            throw new BadInput("amount is not a decimal");
        }
        if (!user.equals(BigInteger.valueOf(userId))) throw new BadInput("userId does not belong to this key");
        // The result types tenantUserId as an integer: an identifier without an integer reading is refused.
        if (!tenantUserId.matches("-?\\d{1,30}")) throw new BadInput("tenantUserId must be a decimal integer (the result carries it as one)");
        if (!tenantType.equals(BigInteger.ONE)) throw new BadInput("tenantType must be 1");
        if (amount.signum() <= 0) throw new BadInput("amount must be positive");
        if (amount.precision() - amount.scale() > 38 || amount.scale() > 18) throw new BadInput("amount out of range");
        if (symbol.equals("ENERGY")) {
            BigInteger hours = integer(plain, "expiryHours");
            if (hours.signum() <= 0 || hours.compareTo(BigInteger.valueOf(8760)) > 0) throw new BadInput("expiryHours out of range");
            if (amount.stripTrailingZeros().scale() > 0) throw new BadInput("an energy lease amount is a whole number of transactions");
            BigInteger wanted = amount.toBigInteger().multiply(costPerTx);
            synchronized (Service.class) {
                if (wanted.compareTo(balance) > 0) throw new BadInput("not enough energy");
                if (!callBackIds.add(callBackId)) throw new BadInput("callBackId already used");
                balance = balance.subtract(wanted);
            }
        } else {
            if (!symbol.matches("[A-Z0-9]{1,20}")) throw new BadInput("unknown symbol");
            if (!callBackIds.add(callBackId)) throw new BadInput("callBackId already used");
        }
        String tenant = faults.contains("tenant-as-string") ? Json.write(tenantUserId) : new BigInteger(tenantUserId).toString();
        return "{\"tenantUserId\":" + tenant + ",\"id\":" + Json.write(callBackId) + "}";
    }

    // ---------------------------------------------------------------- card close

    static void cardClose(HttpExchange exchange) throws IOException {
        byte[] raw = exchange.getRequestBody().readAllBytes();
        String requestId = UUID.randomUUID().toString();
        String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
        try {
            if (!mediaType(contentType).equals("application/json")) throw new BadInput("Content-Type must be application/json");
            Object parsed = new Json(utf8(raw)).parseDocument();
            if (!(parsed instanceof Map<?, ?> body)) throw new BadInput("body is not a JSON object");
            for (String name : new String[] {"merchantId", "merchantUserId", "powerCardId", "channel", "closeSerialNo"}) {
                if (!(body.get(name) instanceof String s) || s.isEmpty()) throw new BadInput(name + " is required (a string)");
            }
            String card = (String) body.get("powerCardId");
            if (!closedCards.add(body.get("merchantId") + "\u0000" + card)) {
                cardAnswer(exchange, false, "CARD_CLOSED", "card already closed", requestId, null);
                return;
            }
            cardAnswer(exchange, true, "", "", requestId, "{\"bizId\":" + Json.write("biz-" + UUID.randomUUID()) + ",\"status\":\"CLOSED\"}");
        } catch (BadInput e) {
            cardAnswer(exchange, false, "INVALID_REQUEST", e.getMessage(), requestId, null);
        }
    }

    static void cardAnswer(HttpExchange exchange, boolean success, String code, String message, String requestId, String data) throws IOException {
        answer(exchange, 200, "{\"success\":" + success + ",\"errorCode\":" + Json.write(code) + ",\"errorMessage\":" + Json.write(message)
            + ",\"errorMessageEn\":" + Json.write(message) + ",\"detailMessage\":" + Json.write(message) + ",\"requestId\":" + Json.write(requestId)
            + ",\"data\":" + (data == null ? "null" : data) + "}");
    }

    // ---------------------------------------------------------------- crypto

    static String utf8(byte[] bytes) throws BadInput {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new BadInput("not UTF-8");
        }
    }

    static int blockSize() {
        return (privateKey.getModulus().bitLength() + 7) / 8;
    }

    /** Base64 (Java's decoder: unpadded text is read) → RSA with the private key, block by block → UTF-8. */
    static String open(String data) throws BadInput {
        byte[] sealed;
        try {
            sealed = Base64.getDecoder().decode(data);
        } catch (IllegalArgumentException e) {
            throw new BadInput("data is not Base64");
        }
        int k = blockSize();
        if (sealed.length == 0 || sealed.length % k != 0) throw new BadInput("data is not a whole number of RSA blocks");
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        try {
            Cipher cipher = Cipher.getInstance("RSA/ECB/PKCS1Padding");
            cipher.init(Cipher.DECRYPT_MODE, privateKey);
            for (int offset = 0; offset < sealed.length; offset += k) plain.writeBytes(cipher.doFinal(sealed, offset, k));
        } catch (java.security.GeneralSecurityException e) {
            throw new BadInput("data cannot be decrypted");
        }
        return utf8(plain.toByteArray());
    }

    /** UTF-8 → RSA with the private key in blocks of k-11 bytes → Base64. */
    static String seal(String text) throws BadInput {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int chunk = blockSize() - 11;
        ByteArrayOutputStream sealed = new ByteArrayOutputStream();
        try {
            Cipher cipher = Cipher.getInstance("RSA/ECB/PKCS1Padding");
            cipher.init(Cipher.ENCRYPT_MODE, privateKey);
            for (int offset = 0; offset < bytes.length; offset += chunk) sealed.writeBytes(cipher.doFinal(bytes, offset, Math.min(chunk, bytes.length - offset)));
        } catch (java.security.GeneralSecurityException e) {
            throw new BadInput("cannot seal the answer");
        }
        if (faults.contains("urlsafe-envelope")) return Base64.getUrlEncoder().encodeToString(sealed.toByteArray());
        if (faults.contains("legal-unpadded-envelope")) return Base64.getEncoder().withoutPadding().encodeToString(sealed.toByteArray());
        return Base64.getEncoder().encodeToString(sealed.toByteArray());
    }

    // ---------------------------------------------------------------- JSON (the same small parser as Receiver.java)

    /** A JSON number kept as its literal text (BigDecimal digits, never a double). */
    record Num(String text) {}

    /** A small strict JSON parser: objects keep their key order, numbers stay text. */
    static final class Json {
        private final String s;
        private int i;

        Json(String s) {
            this.s = s;
        }

        Object parseDocument() throws BadInput {
            ws();
            Object value = value(0);
            ws();
            if (i != s.length()) throw new BadInput("trailing text at " + i);
            return value;
        }

        private void ws() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
        }

        private char peek() throws BadInput {
            if (i >= s.length()) throw new BadInput("unexpected end");
            return s.charAt(i);
        }

        private void expect(char c) throws BadInput {
            if (peek() != c) throw new BadInput("expected '" + c + "' at " + i);
            i++;
        }

        private Object value(int depth) throws BadInput {
            if (depth > 64) throw new BadInput("nested too deep");
            char c = peek();
            switch (c) {
                case '{': {
                    i++;
                    Map<String, Object> map = new LinkedHashMap<>();
                    ws();
                    if (peek() == '}') {
                        i++;
                        return map;
                    }
                    while (true) {
                        ws();
                        String name = string();
                        ws();
                        expect(':');
                        ws();
                        map.put(name, value(depth + 1));
                        ws();
                        if (peek() == ',') {
                            i++;
                            continue;
                        }
                        expect('}');
                        return map;
                    }
                }
                case '[': {
                    i++;
                    List<Object> list = new ArrayList<>();
                    ws();
                    if (peek() == ']') {
                        i++;
                        return list;
                    }
                    while (true) {
                        ws();
                        list.add(value(depth + 1));
                        ws();
                        if (peek() == ',') {
                            i++;
                            continue;
                        }
                        expect(']');
                        return list;
                    }
                }
                case '"':
                    return string();
                case 't':
                    return literal("true", Boolean.TRUE);
                case 'f':
                    return literal("false", Boolean.FALSE);
                case 'n':
                    return literal("null", null);
                default:
                    return number();
            }
        }

        private Object literal(String word, Object result) throws BadInput {
            if (!s.startsWith(word, i)) throw new BadInput("unexpected text at " + i);
            i += word.length();
            return result;
        }

        private Num number() throws BadInput {
            int start = i;
            if (i < s.length() && s.charAt(i) == '-') i++;
            if (i < s.length() && s.charAt(i) == '0') i++;
            else if (i < s.length() && s.charAt(i) >= '1' && s.charAt(i) <= '9') while (i < s.length() && Character.isDigit(s.charAt(i))) i++;
            else throw new BadInput("unexpected text at " + start);
            if (i < s.length() && s.charAt(i) == '.') {
                i++;
                int digits = i;
                while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') i++;
                if (i == digits) throw new BadInput("bad number at " + start);
            }
            if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
                i++;
                if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) i++;
                int digits = i;
                while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') i++;
                if (i == digits) throw new BadInput("bad number at " + start);
            }
            return new Num(s.substring(start, i));
        }

        private String string() throws BadInput {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                char c = peek();
                i++;
                if (c == '"') return out.toString();
                if (c < 0x20) throw new BadInput("control character in string");
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = peek();
                i++;
                switch (e) {
                    case '"', '\\', '/' -> out.append(e);
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> {
                        if (i + 4 > s.length()) throw new BadInput("bad \\u escape");
                        try {
                            out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw new BadInput("bad \\u escape");
                        }
                        i += 4;
                    }
                    default -> throw new BadInput("bad escape \\" + e);
                }
            }
        }

        static String write(Object value) {
            StringBuilder out = new StringBuilder();
            write(value, out);
            return out.toString();
        }

        @SuppressWarnings("unchecked")
        private static void write(Object value, StringBuilder out) {
            if (value == null) out.append("null");
            else if (value instanceof Num n) out.append(n.text());
            else if (value instanceof Boolean b) out.append(b);
            else if (value instanceof String str) {
                out.append('"');
                for (char c : str.toCharArray()) {
                    switch (c) {
                        case '"' -> out.append("\\\"");
                        case '\\' -> out.append("\\\\");
                        case '\n' -> out.append("\\n");
                        case '\r' -> out.append("\\r");
                        case '\t' -> out.append("\\t");
                        default -> {
                            if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                            else out.append(c);
                        }
                    }
                }
                out.append('"');
            } else if (value instanceof Map<?, ?> map) {
                out.append('{');
                boolean first = true;
                for (Map.Entry<String, Object> entry : ((Map<String, Object>) map).entrySet()) {
                    if (!first) out.append(',');
                    first = false;
                    write(entry.getKey(), out);
                    out.append(':');
                    write(entry.getValue(), out);
                }
                out.append('}');
            } else if (value instanceof List<?> list) {
                out.append('[');
                for (int k = 0; k < list.size(); k++) {
                    if (k > 0) out.append(',');
                    write(list.get(k), out);
                }
                out.append(']');
            } else throw new IllegalArgumentException("not JSON: " + value.getClass());
        }
    }
}
