package main

import (
	"crypto/rsa"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// maxBody is far above the largest callback (a few KiB); a bigger body is answered 413 unread.
const maxBody = 64 << 10

type receiver struct {
	pub     *rsa.PublicKey
	keys    []apiKey
	journal *journal
}

// answer writes the JSON every answer carries; errCode 0 only for what was processed (or a duplicate of it).
func answer(w http.ResponseWriter, status, errCode int, message string) {
	body, _ := json.Marshal(map[string]interface{}{"errCode": errCode, "message": message})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (rc *receiver) callback(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		answer(w, http.StatusMethodNotAllowed, 405, "POST only")
		return
	}
	var early []byte
	if fault == "body-before-key" {
		body, err := rc.readBody(w, r)
		if err == nil {
			_, _, err = rc.open(body)
		}
		if err != nil {
			answer(w, http.StatusBadRequest, 400, err.Error())
			return
		}
		early = body
	}
	// 1. The key first: nothing of the body is read before it is accepted.
	if !keyIsValid(r.Header.Values("X-Api-Key"), rc.keys, time.Now()) {
		answer(w, http.StatusUnauthorized, 401, "unauthorized")
		return
	}
	// 2. The raw body. The Content-Type says form, the body is not one: r.ParseForm and
	//    r.FormValue would turn every '+' of the Base64 into a space.
	body, err := early, error(nil)
	if body == nil {
		body, err = rc.readBody(w, r)
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			answer(w, http.StatusRequestEntityTooLarge, 413, "body too large")
		} else {
			answer(w, http.StatusBadRequest, 400, "body not read")
		}
		return
	}
	text, key, err := rc.open(body)
	if err != nil {
		answer(w, http.StatusBadRequest, 400, err.Error())
		return
	}
	// 3. Exactly once: the key and the effect are journalled (and synced) before the answer.
	claimed, err := rc.journal.claim(key, text)
	if err != nil {
		answer(w, http.StatusInternalServerError, 500, "not processed: "+err.Error())
		return
	}
	if !claimed {
		if fault == "no-dup-ack" {
			answer(w, http.StatusConflict, 409, "duplicate")
			return
		}
		answer(w, http.StatusOK, 0, "duplicate")
		return
	}
	answer(w, http.StatusOK, 0, "")
}

// readBody reads the raw bytes (the form-field-body fault reads a form field `data` instead).
func (rc *receiver) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if fault == "form-field-body" {
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
		return []byte(r.PostForm.Get("data")), nil
	}
	return io.ReadAll(r.Body)
}

// open decrypts the body and reads its idempotency key; any failure is answered 400, never 0.
func (rc *receiver) open(body []byte) ([]byte, string, error) {
	decrypt := openCallback
	if fault == "lenient-base64" {
		decrypt = openLenient
	}
	text, err := decrypt(body, rc.pub)
	if err != nil {
		return nil, "", err
	}
	if !utf8.Valid(text) {
		return nil, "", errors.New("plaintext is not UTF-8")
	}
	payload, err := parsePayload(text)
	if err != nil {
		return nil, "", err
	}
	if fault == "interface-spelling-only" {
		for _, name := range []string{"txId", "chainName"} {
			delete(payload, name)
		}
	}
	key, err := idempotencyKey(payload)
	return text, key, err
}

// probe answers {"processed": [...]}: each processed event's payload exactly as received, in order.
func (rc *receiver) probe(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"processed":[`+strings.Join(rc.journal.snapshot(), ",")+`]}`)
}
