package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/tools"
)

// TestTinySeconds gives limits below a nanosecond: they are a nanosecond,
// as serve takes them, not 0, which means no limit. A hard timeout of
// 1e-10 seconds interrupts a command that runs until it is interrupted.
func TestTinySeconds(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want time.Duration
	}{{0, 0}, {1e-10, 1}, {1e-9, 1}, {1.5, 1500 * time.Millisecond}} {
		if got := seconds(tt.in); got != tt.want {
			t.Errorf("seconds(%v): got %v, want %v", tt.in, got, tt.want)
		}
	}
	if got, want := (specFile{Quiet: 1e-10, Timeout: 1e-10}).limits(), (envs.Defaults{Quiet: 1, Wait: 1}); got != want {
		t.Errorf("spec limits: got %+v, want %+v", got, want)
	}

	o := mustNew(t)
	defer o.Close()
	env := &testEnv{execute: func(ctx context.Context, cmd string) (envs.Response, error) {
		<-ctx.Done()
		return envs.Response{Output: "interrupted"}, nil
	}}
	if err := o.Register("wait", env); err != nil {
		t.Fatal(err)
	}
	tool, err := o.CommandTool("wait")
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool.Call(context.Background(), tools.Context{}, json.RawMessage(`{"command":"x","timeout":1e-10,"hard":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if msg := fmt.Sprint(res.Message); res.Success || !strings.Contains(msg, "deadline passed") && !strings.Contains(msg, "interrupted") {
		t.Errorf("got %+v, want the command stopped by its deadline", res)
	}
}
