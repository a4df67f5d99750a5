// A wallet callback receiver on Go's standard library alone, written from docs/merchant-guide.md.
//
//	cd examples/go-receiver && go build -o go-receiver .
//	./go-receiver -public-key merchant-public.pem -keys keys.json \
//	  -journal callbacks.journal -port 9400 -pid-file receiver.pid
//
// keys.json lists the API keys the platform gave you, each with an optional validity window:
//
//	[{"key": "ak_live_...", "notBefore": "2026-01-01T00:00:00Z", "notAfter": "2027-01-01T00:00:00Z"}]
//
// POST /callback is the wallet service's callbacks: the key first (constant time, exact), the raw
// body, strict Base64, block-by-block public-key decryption, one idempotency key per event, written
// to the journal and fsynced BEFORE errCode 0 is answered. GET /probe is the processing probe:
// {"processed": [<payload exactly as received>, ...]}.
//
// -fault NAME (or WALLET_FAULT) builds one deliberate defect in, so the toolkit's tests can show
// that `verify merchant` catches it (test/go-receiver.test.ts); never set it in production.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

// The faults the tests select; see faults.go for what each one breaks.
var fault string

func main() {
	publicKeyPath := flag.String("public-key", "", "merchant public key: SPKI PEM or the same DER in bare Base64")
	keysPath := flag.String("keys", "", "JSON list of {key, notBefore, notAfter}")
	journalPath := flag.String("journal", "callbacks.journal", "append-only journal of processed events")
	port := flag.Int("port", 9400, "loopback port to listen on")
	pidFile := flag.String("pid-file", "", "write the process id here (for a --restart command)")
	flag.StringVar(&fault, "fault", os.Getenv("WALLET_FAULT"), "a deliberate defect, for the toolkit's tests only")
	flag.Parse()
	if *publicKeyPath == "" || *keysPath == "" {
		log.Fatal("-public-key and -keys are required")
	}
	if fault != "" && !knownFault(fault) {
		log.Fatalf("unknown -fault %q", fault)
	}
	pub, err := readPublicKey(*publicKeyPath)
	if err != nil {
		log.Fatalf("public key: %v", err)
	}
	keys, err := readKeys(*keysPath)
	if err != nil {
		log.Fatalf("keys: %v", err)
	}
	journal, err := openJournal(*journalPath)
	if err != nil {
		log.Fatalf("journal: %v", err)
	}
	receiver := &receiver{pub: pub, keys: keys, journal: journal}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", receiver.callback)
	mux.HandleFunc("/probe", receiver.probe)
	listener, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(*port))
	if err != nil {
		log.Fatal(err)
	}
	if *pidFile != "" {
		if err := os.WriteFile(*pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	// A graceful stop (SIGTERM, Ctrl-C) flushes what is buffered; a SIGKILL or a power cut does not,
	// which is why every acknowledged event is already synced (journal.claim).
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-stop
		journal.flush()
		os.Exit(0)
	}()
	fmt.Printf("LISTENING %d (%d events in the journal)\n", *port, len(journal.processed))
	log.Fatal(http.Serve(listener, mux))
}
