//go:build linux

package bash

import (
	"context"
	"testing"
	"time"
)

// TestCtrlCMeetsPrompt: a Ctrl-C that reaches the shell at its prompt,
// after the command it was meant for had ended, makes the shell prompt
// again. awaitRepeat waits for that prompt, which is dropped with the
// blank line before it, so the next command is typed whole and its
// output holds nothing of either.
func TestCtrlCMeetsPrompt(t *testing.T) {
	s, err := New(WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, pause := range []time.Duration{0, 50 * time.Millisecond} {
		if resp, err := s.Execute(ctx, "echo warm"); err != nil || resp.Output != "warm" {
			t.Fatalf("Execute(echo warm): got %+v, %v", resp, err)
		}
		p := s.p
		p.claim()
		before := p.stream.repeated()
		if _, err := p.master.Write([]byte{3}); err != nil {
			p.release()
			t.Fatal(err)
		}
		p.awaitRepeat(before, 5*time.Second)
		got := p.stream.repeated()
		p.release()
		if got != before+1 {
			t.Fatalf("pause %v: repeated prompts got %d, want %d", pause, got, before+1)
		}
		time.Sleep(pause)
		if resp, err := s.Execute(ctx, "echo ok"); err != nil || resp.Output != "ok" || !resp.Success {
			t.Errorf("pause %v: Execute(echo ok): got %+v, %v, want only ok", pause, resp, err)
		}
	}
}
