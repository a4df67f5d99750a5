package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"os"
	"strings"
	"time"
)

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
