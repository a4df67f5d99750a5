"""A wallet callback receiver in Python (Flask + cryptography), written from docs/merchant-guide.md.

    python3 receiver.py --public-key merchant-public.pem --keys keys.json --db callbacks.sqlite --port 9400

keys.json lists the API keys the platform gave you, each with an optional validity window:
    [{"key": "ak_live_...", "notBefore": "2026-01-01T00:00:00Z", "notAfter": "2027-01-01T00:00:00Z"}]

POST /callback   the wallet service's callbacks (key first, raw body, block-by-block decryption,
                 exactly-once processing in one SQLite transaction)
GET  /probe      the processing probe: {"processed": [<payload exactly as received>, ...]}
"""
import argparse
import base64
import binascii
import hashlib
import hmac
import json
import os
import sqlite3
from datetime import datetime, timezone
from decimal import Decimal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.serialization import load_der_public_key, load_pem_public_key
from flask import Flask, Response, request

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = 64 * 1024  # a bigger body gets 413 before it is read

CONFIG = {}


def answer(status, err_code, message=""):
    """Every answer is JSON with errCode; errCode 0 only for what was processed (or a duplicate of it)."""
    return Response(json.dumps({"errCode": err_code, "message": message}), status=status, mimetype="application/json")


class Refused(Exception):
    """A body we cannot open or do not understand: answered 400 with a non-zero errCode (the service retries)."""


def key_is_valid(sent):
    """X-API-KEY against every configured key (constant-time), inside its validity window."""
    now = datetime.now(timezone.utc)
    for entry in CONFIG["keys"]:
        if sent is not None and hmac.compare_digest(sent.encode(), entry["key"].encode()):
            not_before = entry.get("notBefore")
            not_after = entry.get("notAfter")
            if not_before and now < datetime.fromisoformat(not_before.replace("Z", "+00:00")):
                return False
            if not_after and now > datetime.fromisoformat(not_after.replace("Z", "+00:00")):
                return False
            return True
    return False


def open_body(body):
    """Strict Base64, then RSA block by block with the PUBLIC key (the service sealed with the private key)."""
    try:
        cipher_text = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError) as error:
        raise Refused(f"not strict Base64: {error}") from error
    key = CONFIG["public_key"]
    block = (key.key_size + 7) // 8
    if not cipher_text or len(cipher_text) % block:
        raise Refused(f"ciphertext of {len(cipher_text)} bytes is not a multiple of the {block}-byte key size")
    try:
        plain = b"".join(
            key.recover_data_from_signature(cipher_text[at:at + block], padding.PKCS1v15(), None)
            for at in range(0, len(cipher_text), block)
        )
        return plain.decode("utf-8")
    except InvalidSignature as error:
        raise Refused("does not decrypt with our public key (another key pair, or altered)") from error
    except UnicodeDecodeError as error:
        raise Refused("plaintext is not UTF-8") from error


def first(payload, *names):
    """The interface writes txid/chain; the provider's documentation txId/chainName: read both."""
    for name in names:
        if payload.get(name) not in (None, ""):
            return payload[name]
    return None


def idempotency_key(payload):
    """The key of the event (never requestUUID, which is new on every delivery)."""
    kind = payload.get("type")
    if kind == 1:  # deposit: a wrapped-contract deposit repeats txid with another toAddress or symbol
        parts = [first(payload, "txid", "txId"), first(payload, "chain", "chainName"), payload.get("symbol"), payload.get("toAddress")]
        if any(part in (None, "") for part in parts):
            raise Refused("deposit without txid, chain, symbol or toAddress")
        return "1:" + hashlib.sha256(json.dumps([str(part) for part in parts]).encode()).hexdigest()
    if kind == 3:  # withdrawal: txid
        txid = first(payload, "txid", "txId")
        if txid in (None, ""):
            raise Refused("withdrawal without txid")
        return "3:" + str(txid)
    if kind in (2, 4, 5, 6, 7):  # every other type: (type, trackingId, callBackId)
        if payload.get("trackingId") in (None, ""):
            raise Refused("callback without trackingId")
        return f"{kind}:{payload['trackingId']}:{payload.get('callBackId', '')}"
    raise Refused(f"unknown callback type {kind!r}")  # nothing we can process: refuse, never acknowledge


def database():
    db = sqlite3.connect(CONFIG["db"], timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    return db


@app.post("/callback")
def callback():
    # 1. The key first: nothing of the body is read before it is accepted.
    if not key_is_valid(request.headers.get("X-API-KEY")):
        return answer(401, 401, "unauthorized")
    # 2. The raw body. The service sends Content-Type application/x-www-form-urlencoded, but the body
    #    is NOT a form: request.form or request.values would turn every '+' into a space.
    body = request.get_data(cache=False, as_text=False, parse_form_data=False)
    try:
        text = open_body(body)
        payload = json.loads(text, parse_float=Decimal)  # amounts keep every digit
        if not isinstance(payload, dict):
            raise Refused("payload is not a JSON object")
        key = idempotency_key(payload)
    except (Refused, ValueError) as error:
        return answer(400, 400, str(error))
    # 3. Exactly once: the key and the business effect commit in one transaction.
    try:
        db = database()
        try:
            db.execute("BEGIN IMMEDIATE")
            claimed = db.execute("INSERT OR IGNORE INTO events (key) VALUES (?)", (key,)).rowcount == 1
            if claimed:
                process(db, payload, text)
            db.execute("COMMIT")
        except Exception:
            db.execute("ROLLBACK")
            raise
        finally:
            db.close()
    except Exception as error:  # the store or the business failed: nothing was acknowledged, the service retries
        return answer(500, 500, f"not processed: {error}")
    return answer(200, 0, "" if claimed else "duplicate")


def process(db, payload, text):
    """Your business processing; here it books the event in the same transaction as its key."""
    db.execute("INSERT INTO processed (payload) VALUES (?)", (text,))


@app.get("/probe")
def probe():
    """Each processed event, the decrypted text exactly as received, in processing order."""
    db = database()
    try:
        rows = db.execute("SELECT payload FROM processed ORDER BY seq").fetchall()
    finally:
        db.close()
    return Response('{"processed":[' + ",".join(row[0] for row in rows) + "]}", mimetype="application/json")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--public-key", required=True, help="merchant public key: PEM or bare Base64 DER")
    parser.add_argument("--keys", required=True, help="JSON list of {key, notBefore, notAfter}")
    parser.add_argument("--db", default="callbacks.sqlite")
    parser.add_argument("--port", type=int, default=9400)
    parser.add_argument("--pid-file", help="write the process id here (for a --restart command)")
    args = parser.parse_args()
    with open(args.public_key, "rb") as handle:
        data = handle.read()
    CONFIG["public_key"] = load_pem_public_key(data) if b"-----BEGIN" in data else load_der_public_key(base64.b64decode(b"".join(data.split())))
    with open(args.keys, encoding="utf-8") as handle:
        CONFIG["keys"] = json.load(handle)
    CONFIG["db"] = args.db
    db = database()
    db.execute("CREATE TABLE IF NOT EXISTS events (key TEXT PRIMARY KEY)")
    db.execute("CREATE TABLE IF NOT EXISTS processed (seq INTEGER PRIMARY KEY AUTOINCREMENT, payload TEXT NOT NULL)")
    db.close()
    if args.pid_file:
        with open(args.pid_file, "w", encoding="utf-8") as handle:
            handle.write(str(os.getpid()))
    app.run(host="127.0.0.1", port=args.port, threaded=True)


if __name__ == "__main__":
    main()
