package main

import "crypto/rsa"

// The deliberate defects -fault selects, one per class of mistake the merchant guide warns about;
// test/go-receiver.test.ts runs `verify merchant` against each and expects exit 1 under its rule.
var faults = []string{
	"body-before-key",            // opens the body before the key check: a bad body with a bad key gets 400
	"key-case-insensitive",       // compares the API key ignoring letter case
	"expired-key-accepted",       // ignores the keys' validity windows
	"form-field-body",            // reads a form field data= instead of the raw body
	"lenient-base64",             // decodes with StdEncoding.Strict() alone, which skips \r and \n
	"interface-spelling-only",    // reads txid/chain, not txId/chainName
	"deposit-key-txid-only",      // keys a deposit on txid alone (wrapped-contract twins collide)
	"deposit-key-without-chain",  // leaves chain out of the deposit key
	"chainname-wins",             // keys a deposit on chainName when chain and chainName differ
	"withdrawal-key-tracking-id", // keys a withdrawal on trackingId instead of txid
	"key-by-request-uuid",        // keys every event on requestUUID, new on every delivery
	"reprocess-duplicates",       // no idempotency: every delivery is processed
	"no-dup-ack",                 // answers a duplicate with a non-zero errCode
	"memory-only",                // keeps its keys in memory: a restart forgets them
	"ack-before-journal",         // answers errCode 0 before the journal line reaches the disk
}

// openLenient is the lenient-base64 fault: the guide's first Go recipe, which trusted
// StdEncoding.Strict() alone. Strict() still skips \r and \n, so a line-wrapped body is opened.
func openLenient(body []byte, pub *rsa.PublicKey) ([]byte, error) {
	var wrapped []byte
	for _, b := range body {
		if b != '\r' && b != '\n' {
			wrapped = append(wrapped, b)
		}
	}
	return openCallback(wrapped, pub)
}

func knownFault(name string) bool {
	for _, known := range faults {
		if known == name {
			return true
		}
	}
	return false
}
