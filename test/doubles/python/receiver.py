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

A crash instead (what proves CB-ONCE's durability: a graceful stop lets work in flight finish):
`receiver.py --supervise CONFIG` runs the receiver as a child and starts it again, on the same port
and the same SQLite file, whenever it dies of SIGKILL; with "pidFile" in CONFIG each child writes
"PID BOOT" there once it listens. A --restart command then reads the file, kills that PID with -9
and runs `receiver.py --await-boot PORT BOOT`, which returns once another boot answers (15 s at most):
    read pid boot < FILE && kill -9 "$pid" && exec python3 receiver.py --await-boot PORT "$boot"

"fault" in CONFIG (default "none": the behaviour above, unchanged) makes it one of the mistakes of
FAULTS below, each a plausible way to get one MUST slightly wrong (test/derived-merchant-doubles.test.ts).
"""
import base64
import binascii
import datetime
import decimal
import hashlib
import json
import logging
import os
import queue
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import unicodedata
import urllib.request
import uuid

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import padding
from flask import Flask, Response, request
from werkzeug.serving import make_server

BODY_LIMIT = 256 * 1024

# Deliberate mistakes, each against one MUST; "none" is the receiver as described above.
FAULTS = {
    "none": "fault-free",
    "key-case-insensitive": "CB-KEY-401: compares the key with lower() on both sides",
    "key-trimmed": "CB-KEY-401: compares the header after strip(), which also drops U+00A0",
    "key-prefix": "CB-KEY-401: accepts a header that starts with a key, or a key that starts with the header",
    "key-accent-insensitive": "CB-KEY-401: compares the key with accents stripped (NFKD, combining marks dropped), as an _ai_ci collation does",
    "key-any-of": "CB-KEY-401: accepts when any of the header's values (or comma-separated parts) is a key",
    "deposit-without-chain": "CB-ID-DEPOSIT: keys a deposit by (txid, symbol, toAddress)",
    "deposit-without-txid": "CB-ID-DEPOSIT: keys a deposit by (chain, symbol, toAddress)",
    "deposit-without-toAddress": "CB-ID-DEPOSIT: keys a deposit by (txid, chain, symbol)",
    "withdrawal-keyed-with-chain": "CB-ID-WITHDRAW: keys a withdrawal by (txid, chain): a resend naming the chain otherwise is processed again",
    "one-keyspace": "CB-ID-*: keys every event by its txid, else its trackingId, whatever its type",
    "chain-events-one-keyspace": "CB-ID-DEPOSIT: keys every event with a txid (deposit or withdrawal) by (txid, chain, symbol, toAddress), not by type",
    "other-without-callbackid": "CB-ID-OTHER: keys the other callbacks by (type, trackingId) alone",
    "ack-then-book": "CB-ONCE: answers errCode 0, then books 20 ms (config bookAfterMs) later on another thread, in memory until then",
    "full-block-refused": "CB-DECRYPT: its own PKCS#1 v1.5 unpadding wants more than 8 padding bytes (a full block is refused)",
    "whole-blocks-refused": "CB-DECRYPT: checks the block count against len(plaintext) // B + 1 (a plaintext of n*B bytes is refused)",
    "alerts-one-key": "CB-ID-OTHER: one handler for both not-enough-money types (6, 7), keyed by (trackingId, callBackId) without the type",
    "replay-on-start": "CB-ONCE: books from its inbox table, and on every start books the whole inbox again (a replay that forgets what was booked)",
    "utf8-per-block": "CB-DECRYPT: decodes each block's plaintext as UTF-8 on its own, replacing what does not decode (a character split by a block edge is garbled)",
}


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

    def valid(self, header, fault="none"):
        if not header:
            return False
        header = self.match(header, fault)
        if header is None:
            return False
        not_before, not_after = self.entries[header]
        now = datetime.datetime.now(datetime.timezone.utc)
        if not_before is not None and now < not_before:
            return False
        if not_after is not None and now > not_after:
            return False
        return True

    def match(self, header, fault):
        """The configured key the header names, or None; the key faults compare loosely."""
        if fault == "key-case-insensitive":
            return next((key for key in self.entries if key.lower() == header.lower()), None)
        if fault == "key-accent-insensitive":
            header = "".join(c for c in unicodedata.normalize("NFKD", header) if not unicodedata.combining(c))
        if fault == "key-trimmed":
            header = header.strip()
        if fault == "key-prefix":
            return next((key for key in self.entries if header.startswith(key) or key.startswith(header)), None)
        return header if header in self.entries else None


def key_accepted(keys, headers, fault):
    """CB-KEY-401: the X-API-KEY header names a key in its window (key-any-of: any part of any value)."""
    if fault == "key-any-of":
        parts = [part.strip() for value in headers.getlist("X-API-KEY") for part in value.split(",")]
        return any(keys.valid(part) for part in parts)
    return keys.valid(headers.get("X-API-KEY"), fault)


def unpad_by_hand(block, public_key):
    """full-block-refused: raw RSA and a PKCS#1 v1.5 type 1 unpadding that wants more than 8 bytes of 0xFF."""
    numbers = public_key.public_numbers()
    size = public_key.key_size // 8
    opened = pow(int.from_bytes(block, "big"), numbers.e, numbers.n).to_bytes(size, "big")
    if opened[0:2] != b"\x00\x01":
        raise ValueError("not a type 1 block")
    separator = opened.find(b"\x00", 2)
    # The mistake: the padding string must be at least 8 bytes; this wants more than 8.
    if separator <= 10 or opened[2:separator] != b"\xff" * (separator - 2):
        raise ValueError("bad padding")
    return opened[separator + 1:]


def open_callback(raw, public_key, fault="none"):
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
    texts = []
    for start in range(0, len(sealed), size):
        try:
            block = sealed[start:start + size]
            if fault == "full-block-refused":
                plain += unpad_by_hand(block, public_key)
            else:
                opened = public_key.recover_data_from_signature(block, padding.PKCS1v15(), None)
                plain += opened
                if fault == "utf8-per-block":
                    texts.append(opened.decode("utf-8", errors="replace"))
        except (InvalidSignature, ValueError):
            raise Unreadable(40002, "block %d does not open with the public key" % (start // size))
    # whole-blocks-refused: "no more blocks than the plaintext needs", with ceil written as n // B + 1.
    if fault == "whole-blocks-refused" and len(sealed) // size != len(plain) // (size - 11) + 1:
        raise Unreadable(40002, "the ciphertext has more blocks than its plaintext needs")
    try:
        decoded = "".join(texts) if fault == "utf8-per-block" else bytes(plain).decode("utf-8")
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


DEPOSIT_PARTS = {
    "deposit-without-chain": ["txid", "symbol", "toAddress"],
    "deposit-without-txid": ["chain", "symbol", "toAddress"],
    "deposit-without-toAddress": ["txid", "chain", "symbol"],
}
SPELLINGS = {"txid": ("txid", "txId"), "chain": ("chain", "chainName"), "symbol": ("symbol",), "toAddress": ("toAddress",)}


def chain_key(payload, names):
    """The hash of the named fields of an on-chain event (a deposit's key)."""
    parts = [field(payload, *SPELLINGS[name]) for name in names]
    if None in parts:
        raise Unreadable(40004, "a deposit needs %s" % ", ".join(names))
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def faulty_key(payload, kind, fault):
    """The key of a key fault, or None where the fault keys this event as the interface does."""
    if fault == "one-keyspace":
        return "event:" + (field(payload, "txid", "txId") or field(payload, "trackingId") or "")
    if fault == "chain-events-one-keyspace" and field(payload, "txid", "txId") is not None:
        return "chain:" + chain_key(payload, ["txid", "chain", "symbol", "toAddress"])
    if kind == 1 and fault in DEPOSIT_PARTS:
        return "deposit:" + chain_key(payload, DEPOSIT_PARTS[fault])
    if kind == 3 and fault == "withdrawal-keyed-with-chain":
        return "withdrawal:" + (field(payload, "txid", "txId") or "") + ":" + (field(payload, "chain", "chainName") or "")
    if kind in (6, 7) and fault == "alerts-one-key":
        return "other:" + json.dumps(["not-enough", field(payload, "trackingId") or "", field(payload, "callBackId") or ""])
    if kind not in (1, 3) and fault == "other-without-callbackid":
        return "other:" + json.dumps([kind, field(payload, "trackingId") or ""])
    return None


def event_key(payload, fault="none"):
    """The idempotency key of the interface's table (CB-ID-DEPOSIT, CB-ID-WITHDRAW, CB-ID-OTHER)."""
    kind = payload.get("type")
    if isinstance(kind, bool) or not isinstance(kind, int):
        raise Unreadable(40004, "type is not an integer")
    faulty = faulty_key(payload, kind, fault)
    if faulty is not None:
        return faulty
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

    def has(self, key):
        return self.connection().execute("SELECT 1 FROM processed WHERE event_key = ?", (key,)).fetchone() is not None

    def replay_inbox(self):
        """replay-on-start: the booking log gets every event of the inbox again, already booked or not."""
        db = self.connection()
        db.execute("CREATE TABLE IF NOT EXISTS bookings (seq INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL)")
        db.execute("INSERT INTO bookings (body) SELECT body FROM processed ORDER BY seq")

    def book(self, text):
        self.connection().execute("INSERT INTO bookings (body) VALUES (?)", (text,))

    def bookings_body(self):
        rows = self.connection().execute("SELECT body FROM bookings ORDER BY seq").fetchall()
        return '{"processed":[' + ",".join(row[0] for row in rows) + "]}"

    def probe_body(self):
        rows = self.connection().execute("SELECT body FROM processed ORDER BY seq").fetchall()
        return '{"processed":[' + ",".join(row[0] for row in rows) + "]}"


class LateBooker:
    """ack-then-book: claims the key in memory, answers, and one booking thread books it `delay` s later."""

    def __init__(self, store, delay):
        self.store = store
        self.delay = delay
        self.lock = threading.Lock()
        self.pending = set()
        self.queue = queue.Queue()
        threading.Thread(target=self.run, daemon=True).start()

    def once(self, key, text):
        with self.lock:
            if key in self.pending or self.store.has(key):
                return "duplicate"
            self.pending.add(key)
        self.queue.put((time.monotonic() + self.delay, key, text))
        return "processed"

    def run(self):
        while True:
            due, key, text = self.queue.get()
            time.sleep(max(0.0, due - time.monotonic()))
            self.store.once(key, text, lambda: None)
            with self.lock:
                self.pending.discard(key)


def create_app(config):
    public_key = serialization.load_pem_public_key(config["publicKeyPem"].encode("ascii"))
    keys = Keys(config["apiKeys"])
    store = Store(config.get("store", ":memory:"))
    fault = config.get("fault", "none")
    if fault not in FAULTS:
        raise SystemExit("unknown fault %s (known: %s)" % (fault, ", ".join(FAULTS)))
    late = LateBooker(store, config.get("bookAfterMs", 20) / 1000) if fault == "ack-then-book" else None
    replays = fault == "replay-on-start"
    if replays:
        store.replay_inbox()
    app = Flask("python-receiver")
    app.config["MAX_CONTENT_LENGTH"] = BODY_LIMIT

    @app.post("/hooks/wallet")
    def callback():
        # CB-KEY-FIRST: the key is judged before the body is touched.
        if not key_accepted(keys, request.headers, fault):
            response = answer(401, 401, "UNAUTHORIZED")
            response.headers["Connection"] = "close"
            return response
        raw = request.get_data(cache=False, as_text=False, parse_form_data=False)
        try:
            payload, text = open_callback(raw, public_key, fault)
            key = event_key(payload, fault)
        except Unreadable as error:
            return answer(200, error.code, str(error))
        # The business processing itself is recording the event (the probe reads it).
        if late is not None:
            late.once(key, text)
        else:
            store.once(key, text, (lambda: store.book(text)) if replays else (lambda: None))
        return answer(200, 0, "SUCCESS")

    boot = str(uuid.uuid4())
    app.config["BOOT"] = boot

    @app.get("/hooks/processed")
    def probe():
        response = Response(store.bookings_body() if replays else store.probe_body(), status=200, mimetype="application/json")
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


def await_boot(port, before):
    """Returns once a boot other than `before` answers on the port (after a kill -9 and a supervisor's start)."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        now = boot_of(port)
        if now is not None and now != before:
            return 0
        time.sleep(0.05)
    print("the receiver did not come back on port %d in 15 s" % port, file=sys.stderr)
    return 1


def supervise(config_path):
    """Runs the receiver as a child, again on the same port whenever it dies of SIGKILL (a crash)."""
    port = None
    child = None
    stopping = threading.Event()

    def on_term(_signum, _frame):
        stopping.set()
        if child is not None and child.poll() is None:
            child.terminate()

    signal.signal(signal.SIGTERM, on_term)
    while True:
        env = dict(os.environ, **({"RECEIVER_PORT": str(port)} if port else {}))
        child = subprocess.Popen([sys.executable, "-u", os.path.abspath(__file__), config_path], stdout=subprocess.PIPE, env=env, text=True)
        for line in child.stdout:
            listening = re.match(r"LISTENING (\d+)", line)
            if listening:
                port = int(listening.group(1))
            print(line, end="", flush=True)
        code = child.wait()
        if stopping.is_set() or code != -signal.SIGKILL:
            return 0 if stopping.is_set() else code


def write_pid_file(path, boot):
    """"PID BOOT" of this process, replaced whole (a reader never sees half a line)."""
    with open(path + ".tmp", "w", encoding="ascii") as handle:
        handle.write("%d %s\n" % (os.getpid(), boot))
    os.replace(path + ".tmp", path)


def main():
    if sys.argv[1] == "--restart":
        sys.exit(restart(int(sys.argv[2]), int(sys.argv[3])))
    if sys.argv[1] == "--await-boot":
        sys.exit(await_boot(int(sys.argv[2]), sys.argv[3]))
    if sys.argv[1] == "--supervise":
        sys.exit(supervise(sys.argv[2]))
    with open(sys.argv[1], encoding="utf-8") as handle:
        config = json.load(handle)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = int(os.environ.get("RECEIVER_PORT", config.get("port", 0)))
    app = create_app(config)
    server = make_server("127.0.0.1", port, app, threaded=True)
    if config.get("pidFile"):
        write_pid_file(config["pidFile"], app.config["BOOT"])
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
