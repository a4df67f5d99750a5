#!/usr/bin/env bash
# Regenerates the independent RSA interop vectors in test/vectors/ (see README.md there):
# keys (kept if present), plaintexts, OpenSSL vectors, Java vectors, vectors.json, and checks
# every vector with OpenSSL before writing vectors.json.
#
# Usage: bash test/vectors/make-vectors.sh        (from any directory)
# Needs: openssl (3.x), javac + java (11+), jq, base64, split (coreutils).
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$DIR"

for tool in openssl javac java jq base64 split; do
  command -v "$tool" >/dev/null || { echo "make-vectors: $tool is required" >&2; exit 1; }
done

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

mkdir -p keys plain

# ---------------------------------------------------------------- keys (test-only!)
for bits in 1024 2048 4096; do
  priv="keys/rsa$bits-private.pem"
  if [[ ! -s "$priv" ]]; then
    echo "make-vectors: generating $priv" >&2
    openssl genpkey -algorithm RSA -pkeyopt "rsa_keygen_bits:$bits" -out "$priv" 2>/dev/null
  fi
  # Normalise to unencrypted PKCS#8 PEM (a no-op for our own keys).
  openssl pkcs8 -topk8 -nocrypt -in "$priv" -out "$TMP/p8.pem"
  cmp -s "$TMP/p8.pem" "$priv" || cp "$TMP/p8.pem" "$priv"
  openssl pkey -in "$priv" -pubout -out "keys/rsa$bits-public.pem"
done
# Every other encoding the platform hands out, for the 1024-bit key.
openssl pkey -in keys/rsa1024-private.pem -pubout -outform DER -out "$TMP/spki.der"
base64 -w0 "$TMP/spki.der" > keys/rsa1024-public.b64 && echo >> keys/rsa1024-public.b64
base64 -w64 "$TMP/spki.der" > keys/rsa1024-public-wrapped.b64
openssl rsa -in keys/rsa1024-private.pem -RSAPublicKey_out -out keys/rsa1024-public-pkcs1.pem 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in keys/rsa1024-private.pem -outform DER -out "$TMP/p8.der"
base64 -w0 "$TMP/p8.der" > keys/rsa1024-private.b64 && echo >> keys/rsa1024-private.b64
openssl rsa -in keys/rsa1024-private.pem -traditional -out keys/rsa1024-private-pkcs1.pem 2>/dev/null
grep -q 'BEGIN RSA PRIVATE KEY' keys/rsa1024-private-pkcs1.pem
grep -q 'BEGIN RSA PUBLIC KEY' keys/rsa1024-public-pkcs1.pem

# ---------------------------------------------------------------- plaintexts (no trailing newline)
# short: one block for every padding and key size (<= 62 bytes, the OAEP-SHA-256 1024-bit block).
printf '%s' '{"type":1,"trackingId":"T-0001","amount":"12345678901234.5"}' > plain/short.json
# multiblock: a callback body several blocks long with every padding.
printf '%s' '{"type":1,"requestUUID":"7d3f2a10-5c4b-4e8a-9f21-0b6c3d8e4a57","trackingId":"TRK-20240501-000123","txid":"0x8f3c2b1a9e7d6c5b4a392817f6e5d4c3b2a19087f6e5d4c3b2a1908f7e6d5c4b","amount":"12345678901234567890.123","fee":"0.000001","coin":"USDT","chain":"TRON","fromAddress":"TXyZ1234567890abcdefghijkLMNOPqrst","toAddress":"TAbC0987654321zyxwvutsrqpONMLKjihg","confirmations":19,"status":"SUCCESS","createTime":1714550400123,"finishTime":1714550460456,"memo":"order #A-000123 / batch 7 / retry 0","extra":{"merchantOrderNo":"M-2024-05-01-000123","note":"multi-block payload for RSA segmentation tests"}}' > plain/multiblock.json
# utf8: non-ASCII UTF-8 (2-, 3- and 4-byte sequences), some straddling block boundaries.
printf '%s' '{"type":2,"requestUUID":"0e9b6c1d-2f3a-4b5c-8d7e-6f5a4b3c2d1e","trackingId":"TRK-ünïcödé-42","txid":"b1946ac92492d2347c6235b4d2611184","amount":"12345678901234567890.123","tenantUserId":"Zoë-测试","remark":"Grüße aus Köln — 日本語テキスト — emoji 🚀💰 — ελληνικά — русский текст","status":"SUCCESS"}' > plain/utf8.json

# ---------------------------------------------------------------- helpers
modbytes() { # public.pem -> modulus length in bytes
  local bits
  bits="$(openssl pkey -pubin -in "$1" -noout -text | sed -n 's/.*Public-Key: (\([0-9]*\) bit).*/\1/p' | head -1)"
  [[ -n "$bits" ]] || { echo "make-vectors: cannot read the modulus size of $1" >&2; exit 1; }
  echo $(( (bits + 7) / 8 ))
}

maxblock() { # padding k -> plaintext bytes per block
  case "$1" in
    pkcs1) echo $(( $2 - 11 )) ;;
    oaep-sha1) echo $(( $2 - 42 )) ;;
    oaep-sha256|oaep-sha256-mgf1sha1) echo $(( $2 - 66 )) ;;
    *) echo "unknown padding $1" >&2; return 1 ;;
  esac
}

padopts() { # padding -> pkeyutl options
  case "$1" in
    pkcs1) echo "-pkeyopt rsa_padding_mode:pkcs1" ;;
    oaep-sha1) echo "-pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha1 -pkeyopt rsa_mgf1_md:sha1" ;;
    oaep-sha256) echo "-pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha256 -pkeyopt rsa_mgf1_md:sha256" ;;
    oaep-sha256-mgf1sha1) echo "-pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha256 -pkeyopt rsa_mgf1_md:sha1" ;;
  esac
}

# per_block IN_FILE BLOCK_BYTES OUT_FILE CMD...: runs CMD on each BLOCK_BYTES piece of IN_FILE
# (piece on stdin, result on stdout) and concatenates the results into OUT_FILE.
per_block() {
  local in="$1" size="$2" out="$3"; shift 3
  local work; work="$(mktemp -d "$TMP/blocks.XXXXXX")"
  split -b "$size" -a 4 -d "$in" "$work/b."
  : > "$out"
  local piece
  for piece in "$work"/b.*; do
    # stderr kept aside: OpenSSL 3 warns on every rsautl call that it is deprecated (it still works).
    "$@" -in "$piece" >> "$out" 2> "$work/err" || { cat "$work/err" >&2; echo "make-vectors: failed: $* -in $piece" >&2; exit 1; }
  done
  rm -rf "$work"
}

OPENSSL_TSV="$TMP/openssl.tsv"
: > "$OPENSSL_TSV"

# openssl_vector ID BITS PADDING private|public PLAINTEXT
openssl_vector() {
  local id="$1" bits="$2" padding="$3" half="$4" plain="$5"
  local priv="keys/rsa$bits-private.pem" pub="keys/rsa$bits-public.pem"
  local k block det out="$TMP/$id.bin"
  k="$(modbytes "$pub")"
  [[ $(( k * 8 )) -eq "$bits" ]] || { echo "$id: key is not $bits bits" >&2; exit 1; }
  block="$(maxblock "$padding" "$k")"
  if [[ "$half" == private ]]; then
    [[ "$padding" == pkcs1 ]] || { echo "$id: private-key encryption is PKCS#1 type 1 only" >&2; exit 1; }
    # Raw PKCS#1 v1.5 type-1 "encryption" with the private key (no DigestInfo): deterministic.
    per_block "$plain" "$block" "$out" openssl rsautl -sign -pkcs -inkey "$priv"
    det=true
  else
    # shellcheck disable=SC2046
    per_block "$plain" "$block" "$out" openssl pkeyutl -encrypt -pubin -inkey "$pub" $(padopts "$padding")
    det=false
  fi
  printf '%s\topenssl\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "$id" "$bits" "$padding" "$half" "$block" "$plain" "$priv" "$pub" "$(base64 -w0 "$out")" "$det" >> "$OPENSSL_TSV"
}

# ---------------------------------------------------------------- OpenSSL vectors
# Private key, PKCS#1 type 1 (how the service encrypts callbacks/responses): every key size.
openssl_vector openssl-pkcs1-private-1024-short       1024 pkcs1 private plain/short.json
openssl_vector openssl-pkcs1-private-1024-multiblock  1024 pkcs1 private plain/multiblock.json
openssl_vector openssl-pkcs1-private-1024-utf8        1024 pkcs1 private plain/utf8.json
openssl_vector openssl-pkcs1-private-2048-multiblock  2048 pkcs1 private plain/multiblock.json
openssl_vector openssl-pkcs1-private-2048-utf8        2048 pkcs1 private plain/utf8.json
openssl_vector openssl-pkcs1-private-4096-multiblock  4096 pkcs1 private plain/multiblock.json
# Public key (how a merchant encrypts a request): PKCS#1 v1.5 type 2, OAEP-SHA-1, OAEP-SHA-256.
openssl_vector openssl-pkcs1-public-1024-short        1024 pkcs1 public plain/short.json
openssl_vector openssl-pkcs1-public-1024-multiblock   1024 pkcs1 public plain/multiblock.json
openssl_vector openssl-pkcs1-public-2048-utf8         2048 pkcs1 public plain/utf8.json
openssl_vector openssl-pkcs1-public-4096-multiblock   4096 pkcs1 public plain/multiblock.json
openssl_vector openssl-oaep-sha1-public-1024-multiblock   1024 oaep-sha1 public plain/multiblock.json
openssl_vector openssl-oaep-sha1-public-1024-utf8         1024 oaep-sha1 public plain/utf8.json
openssl_vector openssl-oaep-sha1-public-2048-multiblock   2048 oaep-sha1 public plain/multiblock.json
openssl_vector openssl-oaep-sha256-public-1024-short      1024 oaep-sha256 public plain/short.json
openssl_vector openssl-oaep-sha256-public-1024-multiblock 1024 oaep-sha256 public plain/multiblock.json
openssl_vector openssl-oaep-sha256-public-2048-utf8       2048 oaep-sha256 public plain/utf8.json
openssl_vector openssl-oaep-sha256-public-4096-utf8       4096 oaep-sha256 public plain/utf8.json

# ---------------------------------------------------------------- Java vectors (+ cross-check)
JAVA_TSV="$TMP/java.tsv"
mkdir -p "$TMP/classes"
javac -encoding UTF-8 -d "$TMP/classes" java/RsaVectors.java
java -cp "$TMP/classes" RsaVectors "$DIR" "$OPENSSL_TSV" "$JAVA_TSV"

# ---------------------------------------------------------------- sanity check every vector with OpenSSL
checked=0
while IFS=$'\t' read -r id source bits padding half block plain priv pub ct det; do
  k="$(modbytes "$pub")"
  printf '%s' "$ct" | base64 -d > "$TMP/check.bin"
  (( $(stat -c %s "$TMP/check.bin") % k == 0 )) || { echo "SANITY FAIL: $id ciphertext is not a multiple of $k bytes" >&2; exit 1; }
  if [[ "$half" == private ]]; then
    per_block "$TMP/check.bin" "$k" "$TMP/check.out" openssl rsautl -verify -pkcs -pubin -inkey "$pub"
  else
    # shellcheck disable=SC2046
    per_block "$TMP/check.bin" "$k" "$TMP/check.out" openssl pkeyutl -decrypt -inkey "$priv" $(padopts "$padding")
  fi
  cmp -s "$TMP/check.out" "$plain" || { echo "SANITY FAIL: $id does not decrypt to $plain" >&2; exit 1; }
  # Every block but the last must carry exactly plaintextBlock bytes.
  n_blocks=$(( $(stat -c %s "$TMP/check.bin") / k ))
  size=$(stat -c %s "$plain")
  [[ $(( (size + block - 1) / block )) -eq "$n_blocks" ]] || { echo "SANITY FAIL: $id has $n_blocks blocks, expected blocks of $block" >&2; exit 1; }
  checked=$((checked + 1))
done < <(cat "$OPENSSL_TSV" "$JAVA_TSV")
echo "make-vectors: OpenSSL decrypted/verified $checked vectors" >&2

# ---------------------------------------------------------------- vectors.json
cat "$OPENSSL_TSV" "$JAVA_TSV" | jq -R -s '
  split("\n") | map(select(length > 0) | split("\t") | {
    id: .[0], source: .[1], bits: (.[2] | tonumber), padding: .[3], encryptedWith: .[4],
    plaintextBlock: (.[5] | tonumber), plaintext: .[6], privateKey: .[7], publicKey: .[8],
    ciphertext: .[9], deterministic: (.[10] == "true")
  })' > "$TMP/vectors.json"
dups="$(jq -r '[.[].id] | group_by(.) | map(select(length > 1) | .[0]) | join(", ")' "$TMP/vectors.json")"
[[ -z "$dups" ]] || { echo "make-vectors: duplicate ids: $dups" >&2; exit 1; }
mv "$TMP/vectors.json" vectors.json
echo "make-vectors: wrote $(jq length vectors.json) vectors to $DIR/vectors.json" >&2
