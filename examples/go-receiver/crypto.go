package main

import (
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"regexp"
)

// strictBase64 is the only form the service sends: standard alphabet, padded, no whitespace.
// Go's StdEncoding.Strict() still skips \r and \n, so the pattern is checked before decoding.
var strictBase64 = regexp.MustCompile(`^[A-Za-z0-9+/]+={0,2}$`)

// openCallback Base64-decodes the raw body strictly and opens it block by block with the PUBLIC
// key: the service encrypted each block with the merchant's private key (PKCS#1 v1.5 type 1).
// crypto/rsa has no public-key decryption, so the public exponent is applied with math/big.
func openCallback(body []byte, pub *rsa.PublicKey) ([]byte, error) {
	if !strictBase64.Match(body) || len(body)%4 != 0 {
		return nil, errors.New("not strict Base64")
	}
	cipherText, err := base64.StdEncoding.Strict().DecodeString(string(body))
	if err != nil {
		return nil, fmt.Errorf("not strict Base64: %w", err)
	}
	k := pub.Size() // key size in bytes: 128, 256, ...
	if len(cipherText) == 0 || len(cipherText)%k != 0 {
		return nil, fmt.Errorf("ciphertext of %d bytes is not a multiple of the %d-byte key size", len(cipherText), k)
	}
	e := big.NewInt(int64(pub.E))
	var plain []byte
	for at := 0; at < len(cipherText); at += k {
		c := new(big.Int).SetBytes(cipherText[at : at+k])
		if c.Cmp(pub.N) >= 0 {
			return nil, errors.New("a block is not smaller than the modulus")
		}
		data, err := unpadType1(new(big.Int).Exp(c, e, pub.N).FillBytes(make([]byte, k)))
		if err != nil {
			return nil, err
		}
		plain = append(plain, data...)
	}
	return plain, nil
}

// unpadType1 checks a PKCS#1 v1.5 type-1 block strictly: 00 01, at least eight FF, 00, the data.
// Anything else is another key pair, an altered body, or another padding: never acknowledged.
func unpadType1(m []byte) ([]byte, error) {
	if len(m) < 11 || m[0] != 0x00 || m[1] != 0x01 {
		return nil, errors.New("does not decrypt with our public key (not a PKCS#1 v1.5 type-1 block)")
	}
	i := 2
	for i < len(m) && m[i] == 0xff {
		i++
	}
	if i == len(m) || m[i] != 0x00 || i-2 < 8 {
		return nil, errors.New("does not decrypt with our public key (bad PKCS#1 v1.5 padding)")
	}
	return m[i+1:], nil
}
