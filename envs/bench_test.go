package envs_test

import (
	"context"
	"testing"
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
