package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestTranscriptRaceKeepsFile: two runs that start at the same moment on
// one new transcript: one gets it, the other is refused, and the refused
// one never removes the file the other writes.
func TestTranscriptRaceKeepsFile(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		p := filepath.Join(dir, "run-"+string(rune('a'+i%26))+string(rune('a'+i/26))+".jsonl")
		var wg sync.WaitGroup
		outs := make([]*os.File, 2)
		errs := make([]error, 2)
		for k := range 2 {
			wg.Go(func() { _, outs[k], errs[k] = openTranscripts("", p, io.Discard) })
		}
		wg.Wait()
		got := 0
		for k := range 2 {
			if errs[k] == nil {
				got++
			}
		}
		if got != 1 {
			t.Fatalf("round %d: %d of the two runs got the file (%v), want one", i, got, errors.Join(errs...))
		}
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("round %d: the file the running run writes: %v; the refused run removed it", i, err)
		}
		for _, f := range outs {
			if f != nil {
				f.Close()
			}
		}
	}
}
