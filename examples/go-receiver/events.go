package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// parsePayload reads the decrypted text as one JSON object; numbers stay json.Number, so an
// amount keeps every digit.
func parsePayload(text []byte) (map[string]interface{}, error) {
	decoder := json.NewDecoder(bytes.NewReader(text))
	decoder.UseNumber()
	var payload map[string]interface{}
	if err := decoder.Decode(&payload); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if payload == nil {
		return nil, errors.New("not a JSON object")
	}
	if _, err := decoder.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON object")
	}
	return payload, nil
}

// field is a non-empty string field under any of its spellings, the first one present winning.
// The interface writes txid/chain, the provider's public documentation txId/chainName (U-CB-FIELDS):
// both are read, and when both are present the interface's spelling decides.
func field(payload map[string]interface{}, names ...string) (string, bool) {
	for _, name := range names {
		if value, present := payload[name]; present {
			text, ok := value.(string)
			return text, ok && text != ""
		}
	}
	return "", false
}

// idempotencyKey is the key of the event, per callback type (never requestUUID, new on every delivery):
// deposit a hash of (txid, chain, symbol, toAddress), withdrawal txid, others (type, trackingId, callBackId).
func idempotencyKey(payload map[string]interface{}) (string, error) {
	number, ok := payload["type"].(json.Number)
	if !ok {
		return "", errors.New("no numeric type")
	}
	kind, err := strconv.Atoi(number.String())
	if err != nil {
		return "", fmt.Errorf("type %s is not an integer", number)
	}
	if fault == "key-by-request-uuid" {
		uuid, _ := field(payload, "requestUUID")
		return "uuid:" + uuid, nil
	}
	switch kind {
	case 1:
		return depositKey(payload)
	case 3:
		if fault == "withdrawal-key-tracking-id" {
			trackingID, _ := field(payload, "trackingId")
			return "3:" + trackingID, nil
		}
		txid, ok := field(payload, "txid", "txId")
		if !ok {
			return "", errors.New("withdrawal without txid")
		}
		return "3:" + txid, nil
	case 2, 4, 5, 6, 7:
		trackingID, ok := field(payload, "trackingId")
		if !ok {
			return "", errors.New("callback without trackingId")
		}
		callBackID, _ := field(payload, "callBackId") // optional for types 4 and 5: absent keys as ""
		encoded, _ := json.Marshal([]interface{}{kind, trackingID, callBackID})
		return "o:" + string(encoded), nil
	}
	// An event we cannot process is refused, never acknowledged: acknowledged, it would be lost.
	return "", fmt.Errorf("unknown callback type %d", kind)
}

// depositKey hashes (txid, chain, symbol, toAddress) as a JSON array: each part is delimited, so
// ("ab", "c") and ("a", "bc") cannot collide as they would concatenated.
func depositKey(payload map[string]interface{}) (string, error) {
	txid, okTx := field(payload, "txid", "txId")
	chain, okChain := field(payload, "chain", "chainName")
	if fault == "chainname-wins" {
		chain, okChain = field(payload, "chainName", "chain")
	}
	symbol, okSymbol := field(payload, "symbol")
	toAddress, okTo := field(payload, "toAddress")
	if !okTx || !okChain || !okSymbol || !okTo {
		return "", errors.New("deposit without txid, chain, symbol or toAddress")
	}
	parts := []string{txid, chain, symbol, toAddress}
	switch fault {
	case "deposit-key-txid-only":
		parts = []string{txid}
	case "deposit-key-without-chain":
		parts = []string{txid, symbol, toAddress}
	}
	encoded, _ := json.Marshal(parts)
	digest := sha256.Sum256(encoded)
	return "1:" + hex.EncodeToString(digest[:]), nil
}
