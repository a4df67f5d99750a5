"""Opens a callback body the way a Python merchant does (python3-cryptography):

    python3 callback_decrypt.py merchant-public.pem < body.b64

The body is Base64 of RSA blocks, each exactly as long as the key (128 bytes for 1024 bits, 256 for
2048). The service encrypted each block with the merchant's PRIVATE key (PKCS#1 v1.5), so each block
is opened with the PUBLIC key. In the cryptography library that operation is
`recover_data_from_signature` (a private-key "encryption" is a signature without a digest).
"""
import base64
import sys

from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.serialization import load_der_public_key, load_pem_public_key


def read_public_key(data: bytes):
    """An SPKI PEM ("BEGIN PUBLIC KEY") or the same DER as bare Base64."""
    if b"-----BEGIN" in data:
        return load_pem_public_key(data)
    return load_der_public_key(base64.b64decode(b"".join(data.split())))


def open_callback(body: bytes, public_key) -> bytes:
    cipher_text = base64.b64decode(body, validate=True)  # refuses spaces, '-', '_', line breaks, a missing '='
    block = (public_key.key_size + 7) // 8  # key size in bytes: 128, 256, ...
    if not cipher_text or len(cipher_text) % block:
        raise ValueError(f"not a whole number of {block}-byte blocks")
    return b"".join(
        public_key.recover_data_from_signature(cipher_text[at:at + block], padding.PKCS1v15(), None)
        for at in range(0, len(cipher_text), block)
    )  # UTF-8 JSON: json.loads(..., parse_float=Decimal) keeps every digit of an amount


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as key_file:
        key = read_public_key(key_file.read())
    # The raw body as bytes; only a line end a shell adds is dropped.
    sys.stdout.buffer.write(open_callback(sys.stdin.buffer.read().rstrip(b"\r\n"), key))
