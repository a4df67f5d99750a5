#!/usr/bin/env python3
"""A small wallet service on http.server, written from the interface alone.

Sources: the interface (endpoints, envelope, Authentication, Events, Errors), its rule catalogue,
and the toolkit's manual (docs/crypto-profiles.md, docs/service-guide.md "Control API"); none of the toolkit's code. Debian's
standard libraries only: python3-cryptography, http.server, threading.

Its own readings of the open points, on purpose unlike the toolkit's emulator:

- {base_url} is /wallet-api and {card_base_url} is /cardsvc on one server; the control API is
  under {base_url}/__control with the documented routes (energy PUT/GET, callback-url, cards,
  callbacks, deliveries).
- Business codes (U-CODES) are 2001.. (table CODES); every refusal of an order endpoint is an
  HTTP 200 envelope with `data` "" (ENV-DATA allows it).
- Base64 of `data` is read as Java's decoder reads it: the pattern ^[A-Za-z0-9+/]+={0,2}$, padding
  optional, unused low bits ignored (U-CRYPTO).
- Request fields bind as Jackson binds them (U-CODES): "42" fills an integer field, 42 a string
  field; amount is a BigDecimal from a JSON number or a decimal string.
- Withdrawal symbols are a closed list (U-LIMITS): USDT, USDC, TRX, ETH, BTC. Amounts at most 24
  integer and 10 fraction digits; expiryHours of a lease 1..168; a lease of 1..10^9 transactions.
- An energy lease lowers the balance at once (U-STATES); energyMaxCount = balance // costPerTx.
- A repeated callBackId is refused (U-STATES). Card close: only cards registered through the
  control API close, once; a closeSerialNo is unique (U-CARD-VALUES); failures are HTTP 200 with
  success false (U-CARD-VALUES); no authentication (U-CARD-AUTH).
- Callbacks: fields spelt as the interface (txid, chain), amounts always decimal strings
  (U-CB-FIELDS), Content-Type with "; charset=UTF-8"; retries after 200 ms, 500 ms, 1 s, 2 s, 4 s
  (U-RETRY) on threads, until HTTP 200 with errCode the integer 0 (CB-ERRCODE).

Crypto (the manual's default profile): 1024-bit-or-any RSA, PKCS#1 v1.5; requests are encrypted
with the public key in blocks of k-11 bytes (decrypted here with the private key); answers and
callbacks are encrypted with the private key (PKCS#1 type 1, done here with the key's numbers),
the merchant opens them with the public key.

Usage: service.py CONFIG.json with {"privateKeyPem", "apiKey", "forbiddenKey", "expiredKey",
"userId", "controlToken"} and optionally "futureKey" (a key whose validity has not begun) and
"fault" (one of FAULTS: a defect written from the rules, for test/derived-service-doubles.test.ts;
default none); prints "LISTENING <port>" once it serves on
127.0.0.1.
"""
import base64
import binascii
import datetime
import decimal
import email
import json
import re
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import padding

BASE = "/wallet-api"
CARD_BASE = "/cardsvc"
BODY_LIMIT = 128 * 1024
SYMBOLS = {"USDT", "USDC", "TRX", "ETH", "BTC"}
RETRIES_MS = [200, 500, 1000, 2000, 4000]

CODES = {
    "content_type": 2001,
    "missing_data": 2002,
    "bad_base64": 2003,
    "cannot_decrypt": 2004,
    "not_json": 2005,
    "bad_field": 2006,
    "wrong_user": 2007,
    "tenant_type": 2008,
    "unsupported": 2009,
    "duplicate": 2010,
    "expiry": 2011,
    "lease_amount": 2012,
    "amount": 2013,
    "symbol": 2014,
    "energy": 2015,
}

# Defects a service written from the interface could have, each breaking one MUST in a way only the
# cases derived from the rules' dimensions (spec/dimensions.yaml) look for.
FAULTS = {
    "key-case-insensitive": "ERR-401: compares X-API-KEY ignoring letter case",
    "key-trimmed": "ERR-401: compares X-API-KEY after strip(), which also drops a no-break space",
    "refuses-whole-block-plaintext": "CRYPTO-SAME: refuses a request whose plaintext fills its last block exactly",
    "callback-id-as-number": "ORDER-RES: a digits-only callBackId is echoed as int() (a number, leading zeros lost)",
    "callback-id-url-decoded": "ORDER-RES: the callBackId is URL-decoded (unquote_plus) before it is stored and echoed",
    "callback-id-truncated-512": "ORDER-RES: the callBackId is cut to 512 characters, as a VARCHAR(512) in a lax database does",
    "energy-float-division": "ENERGY-FLOOR: energyMaxCount = int(balance / cost), a float division",
    "energy-stale-cost": "ENERGY-FLOOR: energyMaxCount is cached and recomputed only when the balance changes",
    "response-drops-whole-block": "ENV-DATA: an answer whose plaintext fills its last block exactly loses that block",
    "tenant-type-truthy": "ORDER-FIELDS: tenantType is compared with == 1 as it comes, and True == 1 in Python",
    "tenant-type-int32": "ORDER-TENANT-TYPE: tenantType is kept in a 32-bit integer (a C or Go int32), so 2^32 + 1 reads as 1",
    "chain-name-null-default": "ORDER-FIELDS: chainName is checked for presence, then a null one falls back to TRON (or 'TRON')",
    "content-type-prefix": "ENERGY-CT, ORDER-CT: the Content-Type is checked with startswith('application/x-www-form-urlencoded')",
    "form-multipart": "ENERGY-CT, ORDER-CT: a multipart/form-data body is read too, as Flask's request.form reads both",
    "energy-fields-present-only": "ENERGY-REQ: symbol and chainName are checked for presence, and their value only when it is text",
}

BASE64_PATTERN = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
INTEGER_TEXT = re.compile(r"^-?\d{1,30}$")


# --- exact JSON ---------------------------------------------------------------------------------

def parse_json(text):
    """JSON with exact decimals (Decimal) and integers (int)."""
    return json.loads(text, parse_float=decimal.Decimal)


def dump_json(value):
    """JSON text; a Decimal is written with its own digits."""
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(str(k)) + ":" + dump_json(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump_json(v) for v in value) + "]"
    if isinstance(value, decimal.Decimal):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


# --- crypto (PKCS#1 v1.5, segmented) ----------------------------------------------------------

class Crypto:
    def __init__(self, private_pem, fault=None):
        self.fault = fault
        self.private_key = serialization.load_pem_private_key(private_pem.encode("ascii"), password=None)
        numbers = self.private_key.private_numbers()
        self.n = numbers.public_numbers.n
        self.d = numbers.d
        self.k = (self.private_key.key_size + 7) // 8

    def seal_private(self, plain):
        """Encrypts with the private key: PKCS#1 v1.5 type 1 per block of k-11 bytes, Base64 once."""
        out = bytearray()
        step = self.k - 11
        end = max(len(plain), 1)
        if self.fault == "response-drops-whole-block" and len(plain) % step == 0:
            end -= step
        for start in range(0, end, step):
            chunk = plain[start:start + step]
            block = b"\x00\x01" + b"\xff" * (self.k - 3 - len(chunk)) + b"\x00" + chunk
            out += pow(int.from_bytes(block, "big"), self.d, self.n).to_bytes(self.k, "big")
        return base64.b64encode(bytes(out)).decode("ascii")

    def open_request(self, data):
        """Base64 (padding optional, as Java's decoder reads it) -> private-key decryption per block."""
        if not BASE64_PATTERN.match(data):
            raise Refusal("bad_base64", "data does not match ^[A-Za-z0-9+/]+={0,2}$")
        body = data.rstrip("=")
        if len(body) % 4 == 1:
            raise Refusal("bad_base64", "data is not Base64 (its length)")
        try:
            sealed = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
        except (binascii.Error, ValueError) as error:
            raise Refusal("bad_base64", "data is not Base64: %s" % error)
        if len(sealed) == 0 or len(sealed) % self.k != 0:
            raise Refusal("cannot_decrypt", "data is not a whole number of %d-byte blocks" % self.k)
        plain = bytearray()
        for start in range(0, len(sealed), self.k):
            try:
                plain += self.private_key.decrypt(sealed[start:start + self.k], padding.PKCS1v15())
            except ValueError:
                raise Refusal("cannot_decrypt", "data does not decrypt with this merchant's key")
        if self.fault == "refuses-whole-block-plaintext" and len(plain) % (self.k - 11) == 0:
            raise Refusal("cannot_decrypt", "data does not decrypt with this merchant's key")
        try:
            value = parse_json(bytes(plain).decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise Refusal("not_json", "the decrypted data is not UTF-8 JSON")
        if not isinstance(value, dict):
            raise Refusal("not_json", "the decrypted data is not a JSON object")
        return value


class Refusal(Exception):
    def __init__(self, name, message):
        super().__init__(message)
        self.name = name


# --- binding, as Jackson does -----------------------------------------------------------------

def bind_integer(plain, name, required=True):
    value = plain.get(name)
    if value is None:
        if required:
            raise Refusal("bad_field", "%s is required" % name)
        return None
    if isinstance(value, bool):
        raise Refusal("bad_field", "%s must be an integer" % name)
    if isinstance(value, int):
        return value
    if isinstance(value, str) and INTEGER_TEXT.match(value):
        return int(value)
    raise Refusal("bad_field", "%s must be an integer" % name)


def bind_string(plain, name):
    value = plain.get(name)
    if isinstance(value, bool) or value is None:
        raise Refusal("bad_field", "%s is a required string" % name)
    if isinstance(value, (int, decimal.Decimal)):
        return str(value)
    if isinstance(value, str) and value != "":
        return value
    raise Refusal("bad_field", "%s is a required string" % name)


def bind_decimal(plain, name):
    value = plain.get(name)
    if isinstance(value, bool) or value is None:
        raise Refusal("bad_field", "%s is a required decimal" % name)
    if isinstance(value, int):
        return decimal.Decimal(value)
    if isinstance(value, decimal.Decimal):
        return value
    if isinstance(value, str) and re.match(r"^[+-]?\d+(\.\d+)?([eE][+-]?\d{1,4})?$", value):
        return decimal.Decimal(value)
    raise Refusal("bad_field", "%s is a required decimal" % name)


def digits_of(amount):
    """(integer digits, fraction digits) of a decimal, ignoring zeros that carry nothing."""
    sign, digits, exponent = amount.normalize().as_tuple()
    if exponent >= 0:
        return len(digits) + exponent if digits != (0,) else 0, 0
    fraction = -exponent
    return max(len(digits) - fraction, 0), fraction


# --- the service ------------------------------------------------------------------------------

class Service:
    def __init__(self, config):
        self.fault = config.get("fault")
        if self.fault is not None and self.fault not in FAULTS:
            raise SystemExit("unknown fault %r: one of %s" % (self.fault, ", ".join(FAULTS)))
        self.crypto = Crypto(config["privateKeyPem"], self.fault)
        self.cached_count = None
        self.api_key = config["apiKey"]
        self.forbidden_key = config["forbiddenKey"]
        # Known keys outside their validity window (ended, or not begun): refused like unknown keys (ERR-401).
        self.expired_key = config["expiredKey"]
        self.future_key = config.get("futureKey")
        self.user_id = int(config["userId"])
        self.control_token = config["controlToken"]
        self.lock = threading.RLock()
        self.balance = 5_000_000
        self.cost = 65_000
        self.orders = {}
        self.cards = {}
        self.serials = set()
        self.attempts = {}
        self.callback_url = None
        self.closing = False

    # callbacks

    def emit(self, payload, copies=1, concurrent=False, delay_ms=0, retries=None):
        tracking = payload["trackingId"]
        with self.lock:
            self.attempts.setdefault(tracking, [])
        delays = RETRIES_MS if retries is None else retries

        def run():
            if concurrent:
                threads = [threading.Thread(target=self.deliver, args=(payload, delays, 0), daemon=True) for _ in range(copies)]
                for thread in threads:
                    thread.start()
            else:
                for _ in range(copies):
                    self.deliver(payload, delays, 0)

        timer = threading.Timer(delay_ms / 1000.0, run)
        timer.daemon = True
        timer.start()
        return tracking

    def deliver(self, payload, delays, attempt):
        """One delivery (a fresh requestUUID, CB-UUID); retried per delays until acknowledged."""
        with self.lock:
            url = self.callback_url
        if self.closing or not url:
            return
        request_uuid = str(uuid.uuid4())
        body = self.crypto.seal_private(dump_json(dict(payload, requestUUID=request_uuid)).encode("utf-8")).encode("ascii")
        request = urllib.request.Request(url, data=body, method="POST", headers={
            "Content-Type": "application/x-www-form-urlencoded; charset=UTF-8",
            "X-API-KEY": self.api_key,
        })
        status, text = 0, ""
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                status, text = response.status, response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode("utf-8", "replace")
        except (OSError, ValueError) as error:
            text = str(error)
        acknowledged = False
        if status == 200:
            try:
                answer = json.loads(text)
                err_code = answer.get("errCode") if isinstance(answer, dict) else None
                acknowledged = isinstance(err_code, int) and not isinstance(err_code, bool) and err_code == 0
            except ValueError:
                acknowledged = False
        with self.lock:
            self.attempts.setdefault(payload["trackingId"], []).append({
                "at": datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z"),
                "requestUUID": request_uuid,
                "status": status,
                "answer": text[:500],
                "verdict": "acknowledged" if acknowledged else "failed",
            })
        if not acknowledged and attempt < len(delays) and not self.closing:
            timer = threading.Timer(delays[attempt] / 1000.0, self.deliver, args=(payload, delays, attempt + 1))
            timer.daemon = True
            timer.start()

    def payload_of(self, kind, tracking):
        common = {"type": kind, "trackingId": tracking, "tenantUserId": "20931", "business": 0}
        txid = uuid.uuid4().hex + uuid.uuid4().hex
        call_back_id = "py-" + uuid.uuid4().hex[:12]
        address = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"
        if kind == 1:
            return dict(common, txid=txid, chain="TRON", symbol="USDT", toAddress=address, fromAddress="TJRabPrwbZy45sbavfcjinPJC18kjpRTv8", amount="250.000001", txIndex=0)
        if kind == 2:
            return dict(common, callBackId=call_back_id, chain="TRON", symbol="USDT", toAddress=address, amount="10.5")
        if kind == 3:
            return dict(common, txid=txid, callBackId=call_back_id, chain="TRON", symbol="USDT", toAddress=address, amount="10.5")
        if kind in (4, 5):
            return dict(common, callBackId=call_back_id, chain="TRON", address=address)
        return dict(common, callBackId=call_back_id, chain="TRON", symbol="USDT", amount="10.5")

    # order endpoints

    def energy(self, plain):
        if self.fault == "energy-fields-present-only":
            # Present is enough; a text other than the supported one is refused (other symbols are for later).
            for name, supported in (("symbol", "ENERGY"), ("chainName", "TRON")):
                if name not in plain:
                    raise Refusal("bad_field", "%s is required" % name)
                if isinstance(plain[name], str) and plain[name] != supported:
                    raise Refusal("unsupported", "only ENERGY on TRON")
            with self.lock:
                return {"chainName": "TRON", "symbol": "ENERGY", "energyMaxCount": self.energy_max_count()}
        symbol = bind_string(plain, "symbol")
        chain = bind_string(plain, "chainName")
        if symbol != "ENERGY" or chain != "TRON":
            raise Refusal("unsupported", "only ENERGY on TRON")
        with self.lock:
            return {"chainName": "TRON", "symbol": "ENERGY", "energyMaxCount": self.energy_max_count()}

    def energy_max_count(self):
        if self.fault == "energy-float-division":
            return int(self.balance / self.cost)
        if self.fault == "energy-stale-cost":
            if self.cached_count is None or self.cached_count[0] != self.balance:
                self.cached_count = (self.balance, self.balance // self.cost)
            return self.cached_count[1]
        return self.balance // self.cost

    def order(self, plain):
        user_id = bind_integer(plain, "userId")
        tenant_user_id = bind_string(plain, "tenantUserId")
        if self.fault == "tenant-type-truthy":
            tenant_type = plain.get("tenantType")
        else:
            tenant_type = bind_integer(plain, "tenantType")
        if self.fault == "tenant-type-int32":
            tenant_type = (tenant_type + 2 ** 31) % 2 ** 32 - 2 ** 31
        if self.fault == "chain-name-null-default" and "chainName" in plain:
            plain = dict(plain, chainName=plain["chainName"] or "TRON")
        call_back_id = bind_string(plain, "callBackId")
        if self.fault == "callback-id-url-decoded":
            call_back_id = urllib.parse.unquote_plus(call_back_id)
        if self.fault == "callback-id-truncated-512":
            call_back_id = call_back_id[:512]
        symbol = bind_string(plain, "symbol")
        chain = bind_string(plain, "chainName")
        to_addr = bind_string(plain, "toAddr")
        amount = bind_decimal(plain, "amount")
        if not re.match(r"^\d{1,18}$", tenant_user_id):
            raise Refusal("bad_field", "tenantUserId must be digits (the result types it as an integer)")
        if user_id != self.user_id:
            raise Refusal("wrong_user", "userId is not this key's merchant")
        if tenant_type != 1:
            raise Refusal("tenant_type", "tenantType must be 1")
        with self.lock:
            if call_back_id in self.orders:
                raise Refusal("duplicate", "callBackId already used")
            if symbol == "ENERGY":
                hours = bind_integer(plain, "expiryHours", required=False)
                if hours is None or not 1 <= hours <= 168:
                    raise Refusal("expiry", "expiryHours 1..168 is required for ENERGY")
                if amount != amount.to_integral_value() or amount < 1 or amount > 10 ** 9:
                    raise Refusal("lease_amount", "a lease amount is a whole number of transactions, 1..10^9")
                needed = int(amount) * self.cost
                if needed > self.balance:
                    raise Refusal("energy", "insufficient energy")
                self.balance -= needed
                self.orders[call_back_id] = {"kind": "lease"}
            else:
                if symbol not in SYMBOLS:
                    raise Refusal("symbol", "symbol must be one of %s" % ", ".join(sorted(SYMBOLS)))
                integer, fraction = digits_of(amount)
                if amount <= 0 or integer > 24 or fraction > 10:
                    raise Refusal("amount", "amount must be above 0 with at most 24 integer and 10 fraction digits")
                self.orders[call_back_id] = {"kind": "withdrawal"}
                payload = dict(self.payload_of(3, "wd-" + uuid.uuid4().hex), callBackId=call_back_id, chain=chain, symbol=symbol, toAddress=to_addr, amount=format(amount, "f"), tenantUserId=tenant_user_id)
                timer = threading.Timer(0.1, lambda: self.emit(payload))
                timer.daemon = True
                timer.start()
        echoed = int(call_back_id) if self.fault == "callback-id-as-number" and call_back_id.isdigit() else call_back_id
        return {"tenantUserId": int(tenant_user_id), "id": echoed}

    # card close

    def close_card(self, fields):
        for name in ("merchantId", "merchantUserId", "powerCardId", "channel", "closeSerialNo"):
            if not isinstance(fields.get(name), str) or fields[name] == "":
                return card_failure("PARAM_INVALID", "参数错误", "%s is a required string" % name, name)
        if fields["merchantId"] != str(self.user_id):
            return card_failure("MERCHANT_UNKNOWN", "商户不存在", "unknown merchant", fields["merchantId"])
        with self.lock:
            card = self.cards.get(fields["powerCardId"])
            if card is None or card["merchantUserId"] != fields["merchantUserId"]:
                return card_failure("CARD_UNKNOWN", "卡不存在", "no such card", fields["powerCardId"])
            if fields["closeSerialNo"] in self.serials:
                return card_failure("SERIAL_USED", "流水号重复", "closeSerialNo already used", fields["closeSerialNo"])
            if card["closed"]:
                return card_failure("CARD_CLOSED", "卡已关闭", "card already closed", fields["powerCardId"])
            card["closed"] = True
            self.serials.add(fields["closeSerialNo"])
        return {"success": True, "errorCode": "", "errorMessage": "", "errorMessageEn": "", "detailMessage": "", "requestId": str(uuid.uuid4()), "data": {"bizId": "biz-" + uuid.uuid4().hex[:16], "status": "CLOSED"}}


def multipart_fields(header, body):
    """The fields of a multipart/form-data body, as parse_qs gives a form's (the fault form-multipart)."""
    message = email.message_from_bytes(b"Content-Type: " + header.encode("latin-1") + b"\r\n\r\n" + body)
    fields = {}
    for part in message.get_payload() if message.is_multipart() else []:
        name = part.get_param("name", header="content-disposition")
        if name:
            fields.setdefault(name, []).append(part.get_payload(decode=True).decode("utf-8"))
    return fields


def card_failure(code, message, english, detail):
    return {"success": False, "errorCode": code, "errorMessage": message, "errorMessageEn": english, "detailMessage": detail, "requestId": str(uuid.uuid4()), "data": {"bizId": "", "status": "FAILED"}}


ERRORS = {
    401: {"code": "UNAUTHORIZED", "message": "unauthorized"},
    403: {"code": "FORBIDDEN", "message": "forbidden"},
    404: {"code": "NOT FOUND", "message": "not found"},
}


def make_handler(service):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out as two writes; without TCP_NODELAY a keep-alive client waits for
        # the delayed ACK (about 40 ms) on every answer.
        disable_nagle_algorithm = True

        def log_message(self, *_args):
            pass

        def send_json(self, status, value):
            text = (value if isinstance(value, str) else dump_json(value)).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json;charset=UTF-8")
            self.send_header("Content-Length", str(len(text)))
            if self.close_connection:
                # Said aloud, so that a client does not send its next request on this socket.
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(text)

        def read_body(self):
            length = self.headers.get("Content-Length")
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                size = 0
                while True:
                    line = self.rfile.readline(100).strip()
                    count = int(line.split(b";")[0], 16)
                    if count == 0:
                        self.rfile.readline(100)
                        break
                    size += count
                    if size > BODY_LIMIT:
                        return None
                    chunks.append(self.rfile.read(count))
                    self.rfile.readline(100)
                return b"".join(chunks)
            length = int(length or 0)
            if length > BODY_LIMIT:
                return None
            return self.rfile.read(length)

        def refuse_too_large(self):
            self.close_connection = True
            self.send_json(413, {"code": "TOO_LARGE", "message": "request body too large"})

        def do_GET(self):
            self.route("GET")

        def do_PUT(self):
            self.route("PUT")

        def do_POST(self):
            self.route("POST")

        def do_DELETE(self):
            self.route("DELETE")

        def route(self, method):
            parsed = urllib.parse.urlsplit(self.path)
            path = parsed.path
            try:
                if path.startswith(BASE + "/__control/"):
                    return self.control(method, path[len(BASE) + len("/__control"):], urllib.parse.parse_qs(parsed.query))
                if method == "POST" and path == BASE + "/api/v1/api/order/getEnergyMaxCount":
                    return self.order_endpoint(service.energy, "getEnergyMaxCount")
                if method == "POST" and path == BASE + "/api/v1/api/order/withdrawWithoutVerify":
                    return self.order_endpoint(service.order, "withdrawWithoutVerify")
                if method == "POST" and path == CARD_BASE + "/card/close":
                    return self.card_close()
                self.close_connection = True
                return self.send_json(404, ERRORS[404])
            except Exception:  # noqa: BLE001 - one bad request never takes the service down
                self.close_connection = True
                return self.send_json(500, {"code": "INTERNAL", "message": "internal error"})

        def order_endpoint(self, operation, name):
            key = self.headers.get("X-API-KEY")
            if key is not None and service.fault == "key-case-insensitive":
                key = {k.lower(): k for k in (service.api_key, service.forbidden_key)}.get(key.lower(), key)
            if key is not None and service.fault == "key-trimmed":
                key = key.strip()
            if key == service.forbidden_key and name == "getEnergyMaxCount":
                self.close_connection = True
                return self.send_json(403, ERRORS[403])
            if key != service.api_key and key != service.forbidden_key:
                self.close_connection = True
                return self.send_json(401, ERRORS[401])
            body = self.read_body()
            if body is None:
                return self.refuse_too_large()
            try:
                header = self.headers.get("Content-Type") or ""
                media = header.split(";")[0].strip().lower()
                if service.fault == "content-type-prefix" and header.lower().startswith("application/x-www-form-urlencoded"):
                    media = "application/x-www-form-urlencoded"
                if service.fault == "form-multipart" and media == "multipart/form-data":
                    form = multipart_fields(header, body)
                elif media != "application/x-www-form-urlencoded":
                    raise Refusal("content_type", "Content-Type must be application/x-www-form-urlencoded")
                else:
                    try:
                        form = urllib.parse.parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
                    except UnicodeDecodeError:
                        raise Refusal("missing_data", "the form is not UTF-8")
                values = form.get("data", [])
                if len(values) != 1 or values[0] == "":
                    raise Refusal("missing_data", "form field data is required, once")
                result = operation(service.crypto.open_request(values[0]))
            except Refusal as refusal:
                return self.send_json(200, {"code": CODES[refusal.name], "message": str(refusal), "data": ""})
            sealed = service.crypto.seal_private(dump_json(result).encode("utf-8"))
            return self.send_json(200, {"code": 0, "message": "", "data": sealed})

        def card_close(self):
            body = self.read_body()
            if body is None:
                return self.refuse_too_large()
            media = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            try:
                fields = parse_json(body.decode("utf-8")) if media == "application/json" else None
            except (UnicodeDecodeError, ValueError):
                fields = None
            if not isinstance(fields, dict):
                return self.send_json(200, card_failure("BAD_REQUEST", "请求格式错误", "the body must be a JSON object sent as application/json", ""))
            return self.send_json(200, service.close_card(fields))

        def control(self, method, path, query):
            if self.headers.get("X-Control-Token") != service.control_token:
                self.close_connection = True
                return self.send_json(401, {"error": "bad or missing X-Control-Token"})
            body = self.read_body()
            if body is None:
                return self.refuse_too_large()
            try:
                data = parse_json(body.decode("utf-8")) if body else {}
                if not isinstance(data, dict):
                    raise ValueError("not an object")
            except ValueError as error:
                return self.send_json(400, {"error": "body is not a JSON object: %s" % error})
            if method == "GET" and path == "/deliveries":
                tracking = (query.get("trackingId") or [""])[0]
                with service.lock:
                    return self.send_json(200, {"attempts": list(service.attempts.get(tracking, []))})
            match = re.match(r"^/merchants/([^/]+)/([a-z-]+)$", path)
            if not match:
                return self.send_json(404, {"error": "no such control route"})
            if match.group(1) != str(service.user_id):
                return self.send_json(404, {"error": "no such merchant"})
            route = "%s %s" % (method, match.group(2))
            if route == "GET energy":
                with service.lock:
                    return self.send_json(200, {"balance": service.balance, "costPerTx": service.cost})
            if route == "PUT energy":
                balance, cost = data.get("balance"), data.get("costPerTx")
                if not all(isinstance(v, int) and not isinstance(v, bool) for v in (balance, cost)) or balance < 0 or cost <= 0:
                    return self.send_json(400, {"error": "balance and costPerTx are whole numbers, costPerTx > 0"})
                with service.lock:
                    service.balance, service.cost = balance, cost
                return self.send_json(200, {"balance": balance, "costPerTx": cost})
            if route == "PUT callback-url":
                url = data.get("url")
                if not isinstance(url, str) or not re.match(r"^https?://", url):
                    return self.send_json(400, {"error": "url is an http(s) URL"})
                with service.lock:
                    service.callback_url = url
                return self.send_json(200, {"url": url})
            if route == "POST cards":
                card, holder = data.get("powerCardId"), data.get("merchantUserId")
                if not isinstance(card, str) or not card or not isinstance(holder, str) or not holder:
                    return self.send_json(400, {"error": "powerCardId and merchantUserId are strings"})
                with service.lock:
                    service.cards[card] = {"merchantUserId": holder, "closed": False}
                return self.send_json(200, {"powerCardId": card, "merchantUserId": holder, "status": "OPEN"})
            if route == "POST callbacks":
                return self.control_callbacks(data)
            return self.send_json(404, {"error": "no such control route"})

        def control_callbacks(self, data):
            kind = data.get("type")
            if isinstance(kind, bool) or not isinstance(kind, int) or not 1 <= kind <= 7:
                return self.send_json(400, {"error": "type is 1..7"})
            fields = data.get("fields", {})
            copies = data.get("deliveries", 1)
            delay = data.get("delayMs", 0)
            retries = data.get("retryDelaysMs")
            if not isinstance(fields, dict):
                return self.send_json(400, {"error": "fields is an object"})
            if isinstance(copies, bool) or not isinstance(copies, int) or not 1 <= copies <= 100:
                return self.send_json(400, {"error": "deliveries is 1..100"})
            if isinstance(delay, bool) or not isinstance(delay, int) or not 0 <= delay <= 60000:
                return self.send_json(400, {"error": "delayMs is 0..60000"})
            if retries is not None and (not isinstance(retries, list) or len(retries) > 20 or not all(isinstance(w, int) and not isinstance(w, bool) and 0 <= w <= 120000 for w in retries)):
                return self.send_json(400, {"error": "retryDelaysMs is a list of at most 20 waits of 0..120000 ms"})
            tracking = fields.get("trackingId") if isinstance(fields.get("trackingId"), str) else "py-" + uuid.uuid4().hex
            payload = service.payload_of(kind, tracking)
            # A field given in the provider's spelling replaces the interface's.
            if "txId" in fields:
                payload.pop("txid", None)
            if "chainName" in fields:
                payload.pop("chain", None)
            payload.update(fields)
            # U-CB-FIELDS: this service writes every amount as a decimal string, digits kept.
            if isinstance(payload.get("amount"), (int, decimal.Decimal)) and not isinstance(payload.get("amount"), bool):
                payload["amount"] = str(payload["amount"])
            payload["trackingId"] = tracking
            service.emit(payload, copies, data.get("concurrent") is True, delay, retries)
            return self.send_json(200, {"trackingId": tracking})

    return Handler


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        config = json.load(handle)
    service = Service(config)
    server = ThreadingHTTPServer(("127.0.0.1", int(config.get("port", 0))), make_handler(service))
    server.daemon_threads = True
    print("LISTENING %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    finally:
        service.closing = True


if __name__ == "__main__":
    main()
