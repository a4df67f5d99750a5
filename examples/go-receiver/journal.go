package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"sync"
)

// journal is the receiver's durable memory: one line per processed event, its idempotency key and
// its payload exactly as received, appended and fsynced before errCode 0 is answered. Replayed at
// start, it restores the keys (duplicates stay duplicates across a crash) and the probe's list.
type journal struct {
	mu        sync.Mutex
	file      *os.File
	keys      map[string]bool
	processed []string
	// buffered is the ack-before-journal fault: writes wait in memory until a graceful stop.
	buffered *bufio.Writer
}

type entry struct {
	Key     string `json:"key"`
	Payload string `json:"payload"`
}

func openJournal(path string) (*journal, error) {
	j := &journal{keys: map[string]bool{}}
	if data, err := os.ReadFile(path); err == nil {
		for _, line := range bytes.Split(data, []byte("\n")) {
			var e entry
			// A line cut short by a crash was never acknowledged (the fsync comes first): skip it.
			if len(line) == 0 || json.Unmarshal(line, &e) != nil {
				continue
			}
			if !j.keys[e.Key] {
				j.keys[e.Key] = true
				j.processed = append(j.processed, e.Payload)
			}
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	if fault == "memory-only" {
		j.keys, j.processed = map[string]bool{}, nil
		return j, nil
	}
	file, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	j.file = file
	if fault == "ack-before-journal" {
		j.buffered = bufio.NewWriterSize(file, 1<<20)
	}
	return j, nil
}

// claim books the event once: false when its key was booked before (a duplicate). The key and the
// effect (here the probe's entry) are written in one line and synced to disk before it returns, so
// an acknowledged event survives a crash and a crash before the sync leaves neither behind.
func (j *journal) claim(key string, payload []byte) (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.keys[key] && fault != "reprocess-duplicates" {
		return false, nil
	}
	line, err := json.Marshal(entry{Key: key, Payload: string(payload)})
	if err != nil {
		return false, err
	}
	line = append(line, '\n')
	switch {
	case fault == "memory-only":
	case j.buffered != nil:
		if _, err := j.buffered.Write(line); err != nil {
			return false, err
		}
	default:
		if _, err := j.file.Write(line); err != nil {
			return false, err
		}
		if err := j.file.Sync(); err != nil {
			return false, err
		}
	}
	j.keys[key] = true
	j.processed = append(j.processed, string(payload))
	return true, nil
}

// flush writes what the ack-before-journal fault kept in memory: only a graceful stop gets here.
func (j *journal) flush() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.buffered != nil {
		_ = j.buffered.Flush()
		_ = j.file.Sync()
	}
}

// snapshot is the probe's list, in processing order.
func (j *journal) snapshot() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.processed...)
}
