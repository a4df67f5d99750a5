package main

import (
	"bytes"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// readPublicKey reads an SPKI PEM ("BEGIN PUBLIC KEY") or the same DER as bare Base64.
func readPublicKey(path string) (*rsa.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	der := data
	if block, _ := pem.Decode(data); block != nil {
		der = block.Bytes
	} else if der, err = base64.StdEncoding.DecodeString(string(bytes.Join(bytes.Fields(data), nil))); err != nil {
		return nil, fmt.Errorf("neither PEM nor Base64 DER: %w", err)
	}
	key, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, err
	}
	pub, ok := key.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("not an RSA public key")
	}
	return pub, nil
}

// apiKey is one key the platform gave the merchant, with its optional validity window.
type apiKey struct {
	Key       string     `json:"key"`
	NotBefore *time.Time `json:"notBefore,omitempty"`
	NotAfter  *time.Time `json:"notAfter,omitempty"`
}

func readKeys(path string) ([]apiKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var keys []apiKey
	return keys, json.Unmarshal(data, &keys)
}

// keyIsValid compares the sent key with every configured key in constant time, exactly (letter
// case included), and accepts it only inside its window. Comparing SHA-256 digests keeps the time
// independent of where, or whether, the lengths differ; every key is compared, no early exit.
func keyIsValid(header []string, keys []apiKey, now time.Time) bool {
	if len(header) != 1 { // missing, or sent twice: not one credential
		return false
	}
	sent := header[0]
	if fault == "key-case-insensitive" {
		sent = strings.ToLower(sent)
	}
	sentDigest := sha256.Sum256([]byte(sent))
	var match *apiKey
	for i := range keys {
		configured := keys[i].Key
		if fault == "key-case-insensitive" {
			configured = strings.ToLower(configured)
		}
		digest := sha256.Sum256([]byte(configured))
		if subtle.ConstantTimeCompare(sentDigest[:], digest[:]) == 1 {
			match = &keys[i]
		}
	}
	if match == nil {
		return false
	}
	if fault == "expired-key-accepted" {
		return true
	}
	if match.NotBefore != nil && now.Before(*match.NotBefore) {
		return false
	}
	return match.NotAfter == nil || !now.After(*match.NotAfter)
}
