#!/usr/bin/env python3
"""A merchant's callback receiver on Flask, written from the interface alone.

Sources: the interface (merchant-side callback endpoint, Authentication, Events), its rule
catalogue, and the toolkit's manual (docs/crypto-profiles.md, docs/merchant-guide.md "The processing probe"); none of the
toolkit's code. Debian's standard libraries only: python3-flask, python3-cryptography, sqlite3.

What it does, rule by rule:

- X-API-KEY first (CB-KEY-FIRST, CB-KEY-401): the header is judged before a byte of the body is
  read; an unknown, missing or out-of-window key is HTTP 401.
- Raw body (CB-RAW-BODY): the body is the Base64 text itself, read with get_data(); the form is
  never parsed (a form parser turns '+' into ' ').
- Base64 then RSA "decrypt with the public key" block by block (CB-DECRYPT; the default crypto
  profile: PKCS#1 v1.5, blocks of the key's size): public_key.recover_data_from_signature(block,
  PKCS1v15(), None) per block. Base64 is read as Python reads it: base64.b64decode(validate=True)
  (standard alphabet, padding required; unused low bits ignored, a U-CRYPTO reading).
- JSON with parse_float=decimal.Decimal: amounts keep their digits.
- Idempotency keys per the interface's table (CB-ID-*): a deposit by a hash of (txid, chain, symbol,
  toAddress), a withdrawal by txid, every other type by (type, trackingId, callBackId); the
  provider's spellings txId and chainName count as txid and chain. requestUUID is never used.
- A SQLite store (one row per processed event key, with the decrypted text), so a duplicate is
  answered errCode 0 without processing it again (CB-DUP-ACK), also when 25 copies arrive at once
  (the check and the insert run in one IMMEDIATE transaction) and across a restart (a file store).
- Its own readings of the open points: the answer is {"errCode": 0, "errMsg": "SUCCESS"} (U-CB-
  RESPONSE); a callback it cannot read gets HTTP 200 with a non-zero errCode (never 0: CB-NO-FALSE-
  ACK); a callback type it does not know is processed under the "other callbacks" key (every type
  must be idempotent; which types exist is U-CB-FIELDS).

Usage: receiver.py CONFIG.json, where CONFIG holds {"publicKeyPem", "apiKeys": [{"key",
"notBefore", "notAfter"}], "store"} (ISO 8601 instants, store a file path or ":memory:").
It listens on 127.0.0.1 on a free port and prints one line "LISTENING <port>".

A restart (verify merchant --restart): SIGHUP makes the process stop serving and exec itself
again on the same port, keeping its PID; `receiver.py --restart PID PORT` sends it and returns once
the new process answers (the probe's X-Receiver-Boot header changed), within 15 s.
"""
import base64
import binascii
import datetime
import decimal
import hashlib
import json
import logging
import os
import signal
import sqlite3
import sys
import threading
import time
import urllib.request
import uuid

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import padding
from flask import Flask, Response, request
from werkzeug.serving import make_server

BODY_LIMIT = 256 * 1024


class Unreadable(Exception):
    """A callback the receiver cannot open: never acknowledged."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def answer(status, err_code, message):
    text = json.dumps({"errCode": err_code, "errMsg": message})
    return Response(text, status=status, mimetype="application/json")


def parse_instant(text):
    if text is None:
        return None
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


class Keys:
    """The merchant's credentials and their validity windows (CB-KEY-401)."""

    def __init__(self, entries):
        self.entries = {e["key"]: (parse_instant(e.get("notBefore")), parse_instant(e.get("notAfter"))) for e in entries}

    def valid(self, header):
        if not header or header not in self.entries:
            return False
        not_before, not_after = self.entries[header]
        now = datetime.datetime.now(datetime.timezone.utc)
        if not_before is not None and now < not_before:
            return False
        if not_after is not None and now > not_after:
            return False
        return True


def open_callback(raw, public_key):
    """Raw body -> Base64 -> RSA per block with the public key -> UTF-8 text -> JSON object."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise Unreadable(40001, "body is not ASCII Base64 text")
    try:
        sealed = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise Unreadable(40001, "body is not Base64: %s" % error)
    size = public_key.key_size // 8
    if len(sealed) == 0 or len(sealed) % size != 0:
        raise Unreadable(40002, "ciphertext is not a whole number of %d-byte blocks" % size)
    plain = bytearray()
    for start in range(0, len(sealed), size):
        try:
            plain += public_key.recover_data_from_signature(sealed[start:start + size], padding.PKCS1v15(), None)
        except (InvalidSignature, ValueError):
            raise Unreadable(40002, "block %d does not open with the public key" % (start // size))
    try:
        decoded = bytes(plain).decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable(40003, "plaintext is not UTF-8")
    try:
        payload = json.loads(decoded, parse_float=decimal.Decimal)
    except ValueError as error:
        raise Unreadable(40003, "plaintext is not JSON: %s" % error)
    if not isinstance(payload, dict):
        raise Unreadable(40003, "payload is not a JSON object")
    return payload, decoded


def field(payload, *names):
    """A key field under either spelling, as text (a number keeps its digits)."""
    for name in names:
        value = payload.get(name)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, str) and value != "":
            return value
        if isinstance(value, (int, decimal.Decimal)):
            return str(value)
    return None


def event_key(payload):
    """The idempotency key of the interface's table (CB-ID-DEPOSIT, CB-ID-WITHDRAW, CB-ID-OTHER)."""
    kind = payload.get("type")
    if isinstance(kind, bool) or not isinstance(kind, int):
        raise Unreadable(40004, "type is not an integer")
    if kind == 1:
        parts = [field(payload, "txid", "txId"), field(payload, "chain", "chainName"), field(payload, "symbol"), field(payload, "toAddress")]
        if None in parts:
            raise Unreadable(40004, "a deposit needs txid, chain, symbol and toAddress")
        return "deposit:" + hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    if kind == 3:
        txid = field(payload, "txid", "txId")
        if txid is None:
            raise Unreadable(40004, "a withdrawal needs txid")
        return "withdrawal:" + txid
    tracking = field(payload, "trackingId")
    if tracking is None:
        raise Unreadable(40004, "trackingId is required")
    return "other:" + json.dumps([kind, tracking, field(payload, "callBackId") or ""])


class Store:
    """Processed events in SQLite: one row per key, in processing order."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock() if path == ":memory:" else None
        self.shared = sqlite3.connect(path, check_same_thread=False, isolation_level=None) if path == ":memory:" else None
        self.local = threading.local()
        self.connection().execute("CREATE TABLE IF NOT EXISTS processed (seq INTEGER PRIMARY KEY AUTOINCREMENT, event_key TEXT UNIQUE NOT NULL, body TEXT NOT NULL)")

    def connection(self):
        if self.shared is not None:
            return self.shared
        if not hasattr(self.local, "db"):
            self.local.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.local.db.execute("PRAGMA journal_mode=WAL")
        return self.local.db

    def once(self, key, text, work):
        """Runs work() and records the event unless the key was processed: 'processed' or 'duplicate'."""
        if self.lock is not None:
            with self.lock:
                return self._once(key, text, work)
        return self._once(key, text, work)

    def _once(self, key, text, work):
        db = self.connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("SELECT 1 FROM processed WHERE event_key = ?", (key,)).fetchone():
                db.execute("COMMIT")
                return "duplicate"
            work()
            db.execute("INSERT INTO processed (event_key, body) VALUES (?, ?)", (key, text))
            db.execute("COMMIT")
            return "processed"
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def probe_body(self):
        rows = self.connection().execute("SELECT body FROM processed ORDER BY seq").fetchall()
        return '{"processed":[' + ",".join(row[0] for row in rows) + "]}"


def create_app(config):
    public_key = serialization.load_pem_public_key(config["publicKeyPem"].encode("ascii"))
    keys = Keys(config["apiKeys"])
    store = Store(config.get("store", ":memory:"))
    app = Flask("python-receiver")
    app.config["MAX_CONTENT_LENGTH"] = BODY_LIMIT

    @app.post("/hooks/wallet")
    def callback():
        # CB-KEY-FIRST: the key is judged before the body is touched.
        if not keys.valid(request.headers.get("X-API-KEY")):
            response = answer(401, 401, "UNAUTHORIZED")
            response.headers["Connection"] = "close"
            return response
        raw = request.get_data(cache=False, as_text=False, parse_form_data=False)
        try:
            payload, text = open_callback(raw, public_key)
            key = event_key(payload)
        except Unreadable as error:
            return answer(200, error.code, str(error))
        # The business processing itself is recording the event (the probe reads it).
        store.once(key, text, lambda: None)
        return answer(200, 0, "SUCCESS")

    boot = str(uuid.uuid4())

    @app.get("/hooks/processed")
    def probe():
        response = Response(store.probe_body(), status=200, mimetype="application/json")
        response.headers["X-Receiver-Boot"] = boot
        return response

    @app.errorhandler(413)
    def too_large(_error):
        return answer(413, 413, "body too large")

    return app


def boot_of(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/hooks/processed" % port, timeout=2) as response:
            return response.headers.get("X-Receiver-Boot")
    except OSError:
        return None


def restart(pid, port):
    """Sends SIGHUP to the receiver and waits until a new boot answers on its port."""
    before = boot_of(port)
    os.kill(pid, signal.SIGHUP)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        now = boot_of(port)
        if now is not None and now != before:
            return 0
        time.sleep(0.05)
    print("the receiver did not come back on port %d in 15 s" % port, file=sys.stderr)
    return 1


def main():
    if sys.argv[1] == "--restart":
        sys.exit(restart(int(sys.argv[2]), int(sys.argv[3])))
    with open(sys.argv[1], encoding="utf-8") as handle:
        config = json.load(handle)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = int(os.environ.get("RECEIVER_PORT", config.get("port", 0)))
    server = make_server("127.0.0.1", port, create_app(config), threaded=True)
    restarting = threading.Event()

    def on_hangup(_signum, _frame):
        restarting.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGHUP, on_hangup)
    print("LISTENING %d" % server.server_port, flush=True)
    server.serve_forever()
    server.server_close()
    if restarting.is_set():
        # The same process again on the same port: memory that survives is the SQLite file's only.
        os.environ["RECEIVER_PORT"] = str(server.server_port)
        os.execv(sys.executable, [sys.executable, "-u", os.path.abspath(__file__), sys.argv[1]])


if __name__ == "__main__":
    main()
