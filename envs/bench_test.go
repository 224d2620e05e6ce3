package envs_test

import (
	"context"
	"testing"

	"github.com/unfold-dev/unfold/envs"
)

// BenchmarkExecuteScreen measures one trivial command plus one screen, the
// work the orchestrator does per environment and command.
func BenchmarkExecuteScreen(b *testing.B) {
	for _, bc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
		{"cancellable", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			d := newTestEnv(b, nil)
			ctx, cancel := bc.ctx()
			defer cancel()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Execute(ctx, "echo hi"); err != nil {
					b.Fatal(err)
				}
				if _, err := d.Screen(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQuickOutput measures what an environment does with the output
// of a quick command: an Output made, written, shown and the response
// fitted, without a spool and with one, which must cost the same (no file
// is made below the limit).
func BenchmarkQuickOutput(b *testing.B) {
	line := []byte("total 0\ndrwxr-xr-x 2 user user 4096 Jan  1 00:00 .\n")
	limits := envs.Limits{Budget: envs.DefaultBudget}
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			o := envs.NewOutput(0)
			_, _ = o.Write(line)
			if r := limits.Fit(envs.Response{Output: o.String()}); r.OutputFile != "" {
				b.Fatal("saved")
			}
		}
	})
	b.Run("spool", func(b *testing.B) {
		sp := envs.NewSpool(b.TempDir(), 0)
		defer sp.Close()
		b.ReportAllocs()
		for b.Loop() {
			o := sp.Output(0)
			_, _ = o.Write(line)
			if r := sp.Fit(limits, envs.Response{Output: o.String()}); r.OutputFile != "" {
				b.Fatal("saved")
			}
		}
	})
}
