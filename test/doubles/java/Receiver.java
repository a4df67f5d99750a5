/*
 * A merchant's callback receiver in plain JDK 17, written from the interface alone (the merchant-side
 * callback endpoint, Authentication, Events) and the manual's merchant guide (docs/merchant-guide.md): no code of the
 * toolkit. Run it as a single-file source program:
 *
 *   java Receiver.java --port 0 --public-key merchant-public.pem --api-key K [--api-key K2]
 *        [--expired-key K3] [--future-key K4] [--fault NAME[,NAME...]]
 *
 * It prints one line "receiver listening on http://127.0.0.1:PORT/callback (probe: .../probe)" once it
 * serves. POST /callback: X-API-KEY first (401), then the raw body, java.util.Base64 (which also reads
 * unpadded text), RSA/ECB/PKCS1Padding with the PUBLIC key block by block, strict UTF-8, JSON (numbers
 * kept as their literal digits), the idempotency key of the interface's table (txid/txId and
 * chain/chainName are one field), processing once per key, {"errCode":0} answers. GET /probe: every
 * processed payload as received, in processing order.
 *
 * --fault names a deliberate mistake a Java developer makes (written apart from the toolkit's own fault
 * fixtures); names starting with "legal-" are choices the interface leaves open and must still pass.
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import javax.crypto.Cipher;

public class Receiver {
    /** Faults a Java developer writes; each breaks one MUST rule of the interface. */
    static final Map<String, String> FAULTS = new LinkedHashMap<>();
    static {
        FAULTS.put("url-decode-body", "CB-RAW-BODY: URLDecoder.decode(rawBody) \"to be safe\" before Base64 (a + becomes a space)");
        FAULTS.put("latin1-text", "CB-DECRYPT: new String(plain, ISO_8859_1) (Java 17's default charset on a C locale is not UTF-8): non-ASCII text mangled");
        FAULTS.put("bigdecimal-double", "ORDER-FIELDS: books the amount as new BigDecimal(text).doubleValue() and records Double.toString (1.2345678901234567E19)");
        FAULTS.put("dedupe-tracking-id", "CB-ID-WITHDRAW/CB-ID-DEPOSIT: every type keyed on trackingId alone (a withdrawal re-sent under another trackingId processed twice)");
        FAULTS.put("deposit-by-tracking-id", "CB-ID-DEPOSIT: deposits keyed on trackingId, not on (txid, chain, symbol, toAddress) (the same deposit under a new trackingId processed twice)");
        FAULTS.put("ack-then-process", "open: claims the key and answers errCode 0 at once, books the event 300 ms later on another thread (@Async)");
        FAULTS.put("header-name-exact", "CB-KEY-SAME: looks the key up by iterating the headers for the exact name X-API-KEY (com.sun.net.httpserver stores it as X-api-key): every callback gets 401");
        FAULTS.put("unauthorized-errcode-zero", "open: a failed key check is HTTP 401 with the shared answer template {\"errCode\":0,...}");
        FAULTS.put("key-case-insensitive", "CB-KEY-401: compares the key with equalsIgnoreCase (a key in another letter case is accepted)");
        FAULTS.put("deposit-without-chain", "CB-ID-DEPOSIT: keys a deposit by (txid, symbol, toAddress): the same deposit on another chain is lost");
        FAULTS.put("legal-reserialize", "legal: the probe re-serialises the parsed payload (keys in another order, numbers with their digits)");
        FAULTS.put("legal-strip-zeros", "legal: books amounts as BigDecimal.stripTrailingZeros().toPlainString() (1.10 becomes 1.1)");
        FAULTS.put("legal-read-body-first", "legal: reads the whole body before checking X-API-KEY (nothing is decoded or processed before the check)");
        FAULTS.put("legal-require-form-ct", "legal: refuses (415, errCode 415) a callback whose Content-Type is not application/x-www-form-urlencoded (Spring consumes=...)");
        FAULTS.put("legal-refuse-unknown-type", "legal: refuses a callback type outside 1..7 with errCode 400");
        FAULTS.put("legal-busy-in-flight", "legal: an identical delivery while the first is processing gets errCode 409 (retry later)");
        FAULTS.put("legal-mime-decoder", "legal: Base64.getMimeDecoder() (line breaks and stray characters ignored)");
        FAULTS.put("legal-text-plain", "legal: answers {\"errCode\":0} with Content-Type text/plain");
    }

    /** A key and its validity window; null bounds are open (CB-KEY-401). */
    record Key(String key, Instant notBefore, Instant notAfter) {
        boolean validAt(Instant now) {
            return (notBefore == null || !now.isBefore(notBefore)) && (notAfter == null || !now.isAfter(notAfter));
        }
    }

    static final List<Key> keys = new ArrayList<>();
    static final Set<String> faults = new HashSet<>();
    static RSAPublicKey publicKey;
    static final Set<String> done = ConcurrentHashMap.newKeySet();
    static final Map<String, Object> locks = new ConcurrentHashMap<>();
    static final Map<String, Boolean> busy = new ConcurrentHashMap<>();
    static final java.util.concurrent.ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
    static final List<String> processed = Collections.synchronizedList(new ArrayList<>());

    public static void main(String[] args) throws Exception {
        int port = 0;
        String keyFile = null;
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            String value = i + 1 < args.length ? args[++i] : null;
            if (value == null) fail("flag " + flag + " needs a value");
            switch (flag) {
                case "--port" -> port = Integer.parseInt(value);
                case "--public-key" -> keyFile = value;
                case "--api-key" -> keys.add(new Key(value, null, null));
                case "--expired-key" -> keys.add(new Key(value, Instant.parse("2020-01-01T00:00:00Z"), Instant.parse("2021-01-01T00:00:00Z")));
                case "--future-key" -> keys.add(new Key(value, Instant.parse("2999-01-01T00:00:00Z"), null));
                case "--fault" -> {
                    for (String name : value.split(",")) {
                        if (!FAULTS.containsKey(name)) fail("unknown fault " + name + " (known: " + String.join(", ", FAULTS.keySet()) + ")");
                        faults.add(name);
                    }
                }
                default -> fail("unknown flag " + flag);
            }
        }
        if (keyFile == null) fail("--public-key FILE is required");
        if (keys.stream().noneMatch(k -> k.notBefore() == null && k.notAfter() == null)) fail("--api-key is required");
        publicKey = loadPublicKey(Path.of(keyFile));

        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
        server.setExecutor(Executors.newFixedThreadPool(32));
        server.createContext("/callback", Receiver::callback);
        server.createContext("/probe", Receiver::probe);
        server.createContext("/", exchange -> answer(exchange, 404, "{\"errCode\":404,\"message\":\"not found\"}"));
        server.start();
        int bound = server.getAddress().getPort();
        System.out.println("receiver listening on http://127.0.0.1:" + bound + "/callback (probe: http://127.0.0.1:" + bound + "/probe)");
        System.out.flush();
    }

    static void fail(String message) {
        System.err.println("Receiver: " + message);
        System.exit(2);
    }

    /** PEM (SPKI) or bare Base64 DER, any whitespace. */
    static RSAPublicKey loadPublicKey(Path file) throws Exception {
        String text = Files.readString(file, StandardCharsets.US_ASCII)
            .replaceAll("-----[A-Z ]+-----", "")
            .replaceAll("\\s", "");
        byte[] der = Base64.getDecoder().decode(text);
        return (RSAPublicKey) KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(der));
    }

    // ---------------------------------------------------------------- HTTP

    static void probe(HttpExchange exchange) throws IOException {
        if (!exchange.getRequestMethod().equals("GET")) {
            answer(exchange, 405, "{\"errCode\":405,\"message\":\"GET only\"}");
            return;
        }
        String body;
        synchronized (processed) {
            body = "{\"processed\":[" + String.join(",", processed) + "]}";
        }
        answer(exchange, 200, body);
    }

    static void callback(HttpExchange exchange) throws IOException {
        try {
            if (!exchange.getRequestMethod().equals("POST")) {
                answer(exchange, 405, "{\"errCode\":405,\"message\":\"POST only\"}");
                return;
            }
            byte[] early = faults.contains("legal-read-body-first") ? exchange.getRequestBody().readAllBytes() : null;
            // Merchant rule 4 / Authentication 2: the key first, before anything of the body is used.
            String header = exchange.getRequestHeaders().getFirst("X-API-KEY");
            if (faults.contains("header-name-exact")) {
                header = null;
                for (Map.Entry<String, List<String>> entry : exchange.getRequestHeaders().entrySet()) if (entry.getKey().equals("X-API-KEY")) header = entry.getValue().get(0);
            }
            if (!keyIsValid(header)) {
                answer(exchange, 401, faults.contains("unauthorized-errcode-zero") ? "{\"errCode\":0,\"message\":\"unauthorized\"}" : "{\"errCode\":401,\"message\":\"unauthorized\"}");
                return;
            }
            String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
            if (faults.contains("legal-require-form-ct") && (contentType == null || !contentType.toLowerCase().startsWith("application/x-www-form-urlencoded"))) {
                answer(exchange, 415, "{\"errCode\":415,\"message\":\"form content type expected\"}");
                return;
            }
            byte[] raw = early != null ? early : exchange.getRequestBody().readAllBytes();
            String text;
            try {
                text = open(raw);
            } catch (BadInput e) {
                answer(exchange, 400, "{\"errCode\":400,\"message\":" + quote(e.getMessage()) + "}");
                return;
            }
            Object parsed;
            try {
                parsed = new Json(text).parseDocument();
            } catch (BadInput e) {
                answer(exchange, 400, "{\"errCode\":400,\"message\":" + quote("not JSON: " + e.getMessage()) + "}");
                return;
            }
            if (!(parsed instanceof Map)) {
                answer(exchange, 400, "{\"errCode\":400,\"message\":\"payload is not a JSON object\"}");
                return;
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> payload = (Map<String, Object>) parsed;
            String key;
            try {
                key = idempotencyKey(payload);
                validate(payload);
            } catch (BadInput e) {
                answer(exchange, 400, "{\"errCode\":400,\"message\":" + quote(e.getMessage()) + "}");
                return;
            }
            if (faults.contains("ack-then-process")) {
                if (done.add(key)) {
                    String entry = record(payload, text);
                    later.schedule(() -> processed.add(entry), 300, java.util.concurrent.TimeUnit.MILLISECONDS);
                }
                answer(exchange, 200, "{\"errCode\":0,\"message\":\"\"}");
                return;
            }
            Object lock = locks.computeIfAbsent(key, k -> new Object());
            if (faults.contains("legal-busy-in-flight") && !done.contains(key) && busy.putIfAbsent(key, Boolean.TRUE) != null) {
                answer(exchange, 200, "{\"errCode\":409,\"message\":\"in progress, retry\"}");
                return;
            }
            synchronized (lock) {
                if (!done.contains(key)) {
                    // Business processing: book the event (a short I/O-like pause so duplicates overlap).
                    Thread.sleep(5);
                    processed.add(record(payload, text));
                    done.add(key);
                }
                busy.remove(key);
            }
            // Events 5: processed, or a duplicate answered with success directly.
            answer(exchange, 200, "{\"errCode\":0,\"message\":\"\"}");
        } catch (Exception e) {
            answer(exchange, 500, "{\"errCode\":500,\"message\":\"internal error\"}");
        }
    }

    static boolean keyIsValid(String header) {
        if (header == null || header.isEmpty()) return false;
        boolean ignoreCase = faults.contains("key-case-insensitive");
        for (Key k : keys) if (ignoreCase ? k.key().equalsIgnoreCase(header) : k.key().equals(header)) return k.validAt(Instant.now());
        return false;
    }

    static void answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        boolean plain = faults.contains("legal-text-plain") && status == 200 && exchange.getHttpContext().getPath().equals("/callback");
        exchange.getResponseHeaders().set("Content-Type", plain ? "text/plain" : "application/json; charset=utf-8");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    // ---------------------------------------------------------------- crypto

    static final class BadInput extends Exception {
        BadInput(String message) {
            super(message);
        }
    }

    /** Raw body → Base64 → RSA (public key, block by block) → UTF-8 text. */
    static String open(byte[] raw) throws BadInput {
        String body = new String(raw, StandardCharsets.ISO_8859_1);
        if (faults.contains("url-decode-body")) body = URLDecoder.decode(body, StandardCharsets.UTF_8);
        byte[] sealed;
        try {
            sealed = faults.contains("legal-mime-decoder") ? Base64.getMimeDecoder().decode(body) : Base64.getDecoder().decode(body);
        } catch (IllegalArgumentException e) {
            throw new BadInput("bad Base64: " + e.getMessage());
        }
        int k = (publicKey.getModulus().bitLength() + 7) / 8;
        if (sealed.length == 0 || sealed.length % k != 0) throw new BadInput("ciphertext is not a whole number of " + k + "-byte blocks");
        java.io.ByteArrayOutputStream plain = new java.io.ByteArrayOutputStream();
        try {
            Cipher cipher = Cipher.getInstance("RSA/ECB/PKCS1Padding");
            cipher.init(Cipher.DECRYPT_MODE, publicKey);
            for (int offset = 0; offset < sealed.length; offset += k) plain.writeBytes(cipher.doFinal(sealed, offset, k));
        } catch (java.security.GeneralSecurityException e) {
            throw new BadInput("cannot decrypt: " + e.getClass().getSimpleName());
        }
        byte[] bytes = plain.toByteArray();
        if (faults.contains("latin1-text")) return new String(bytes, StandardCharsets.ISO_8859_1);
        try {
            return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new BadInput("plaintext is not UTF-8");
        }
    }

    // ---------------------------------------------------------------- events

    /** A field under either spelling, as text (a string, or a number's literal digits). */
    static String field(Map<String, Object> payload, String... names) {
        for (String name : names) {
            Object value = payload.get(name);
            if (value instanceof String s && !s.isEmpty()) return s;
            if (value instanceof Num n) return n.text();
        }
        return null;
    }

    static int type(Map<String, Object> payload) throws BadInput {
        if (!(payload.get("type") instanceof Num n) || !n.text().matches("\\d{1,9}")) throw new BadInput("type is not an integer");
        return Integer.parseInt(n.text());
    }

    /** Events 3: the idempotency key per callback type; never requestUUID (Events 4). */
    static String idempotencyKey(Map<String, Object> payload) throws BadInput {
        int type = type(payload);
        if (faults.contains("legal-refuse-unknown-type") && (type < 1 || type > 7)) throw new BadInput("unknown callback type " + type);
        if (faults.contains("dedupe-tracking-id") || (type == 1 && faults.contains("deposit-by-tracking-id"))) {
            String tracking = field(payload, "trackingId");
            if (tracking == null) throw new BadInput("trackingId is required");
            return "t:" + tracking;
        }
        if (type == 1) {
            String[] parts = {field(payload, "txid", "txId"), field(payload, "chain", "chainName"), field(payload, "symbol"), field(payload, "toAddress")};
            for (String part : parts) if (part == null) throw new BadInput("a deposit needs txid, chain, symbol and toAddress");
            if (faults.contains("deposit-without-chain")) parts = new String[] {parts[0], parts[2], parts[3]};
            return "deposit:" + sha256(String.join("\u0000", parts));
        }
        if (type == 3) {
            String txid = field(payload, "txid", "txId");
            if (txid == null) throw new BadInput("a withdrawal needs txid");
            return "withdrawal:" + txid;
        }
        String tracking = field(payload, "trackingId");
        if (tracking == null) throw new BadInput("trackingId is required");
        String callBackId = field(payload, "callBackId");
        return "other:" + sha256(type + "\u0000" + tracking + "\u0000" + (callBackId == null ? "" : callBackId));
    }

    /** What this merchant needs to process an event (the merchant guide's table of callback types). */
    static void validate(Map<String, Object> payload) throws BadInput {
        int type = type(payload);
        List<String[]> required = new ArrayList<>();
        switch (type) {
            case 1 -> { required.add(new String[] {"txid", "txId"}); required.add(new String[] {"chain", "chainName"}); required.add(new String[] {"symbol"}); required.add(new String[] {"toAddress"}); required.add(new String[] {"amount"}); }
            case 3 -> { required.add(new String[] {"txid", "txId"}); required.add(new String[] {"callBackId"}); required.add(new String[] {"chain", "chainName"}); required.add(new String[] {"symbol"}); required.add(new String[] {"toAddress"}); required.add(new String[] {"amount"}); }
            case 2, 6, 7 -> required.add(new String[] {"callBackId"});
            default -> { }
        }
        for (String[] names : required) if (field(payload, names) == null) throw new BadInput("missing " + names[0]);
        Object amount = payload.get("amount");
        if (amount != null) {
            String digits = amount instanceof Num n ? n.text() : amount instanceof String s ? s : null;
            if (digits == null) throw new BadInput("amount is neither a number nor a decimal string");
            try {
                new BigDecimal(digits);
            } catch (NumberFormatException e) {
                throw new BadInput("amount is not a decimal");
            }
        }
    }

    /** What the probe shows for one processed event. */
    static String record(Map<String, Object> payload, String text) {
        boolean changed = false;
        Map<String, Object> booked = new LinkedHashMap<>(payload);
        Object amount = payload.get("amount");
        String digits = amount instanceof Num n ? n.text() : amount instanceof String s ? s : null;
        if (digits != null && faults.contains("bigdecimal-double")) {
            String asDouble = Double.toString(new BigDecimal(digits).doubleValue());
            booked.put("amount", amount instanceof Num ? new Num(asDouble) : asDouble);
            changed = true;
        } else if (digits != null && faults.contains("legal-strip-zeros")) {
            String stripped = new BigDecimal(digits).stripTrailingZeros().toPlainString();
            booked.put("amount", amount instanceof Num ? new Num(stripped) : stripped);
            changed = true;
        }
        if (faults.contains("legal-reserialize")) {
            List<String> names = new ArrayList<>(booked.keySet());
            Collections.reverse(names);
            Map<String, Object> reordered = new LinkedHashMap<>();
            for (String name : names) reordered.put(name, booked.get(name));
            booked = reordered;
            changed = true;
        }
        return changed ? Json.write(booked) : text;
    }

    static String sha256(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            StringBuilder hex = new StringBuilder();
            for (byte b : digest) hex.append(String.format("%02x", b));
            return hex.toString();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String quote(String text) {
        return Json.write(text);
    }

    // ---------------------------------------------------------------- JSON

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
