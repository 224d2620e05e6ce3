package session_test

import (
	"fmt"
	"testing"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// BenchmarkTxDispatch measures a transaction of n visibility overrides:
// each is dispatched to the transaction's view, which answers with the
// reducers' failures as Dispatch would, and the transaction commits. The
// session is new in each iteration.
func BenchmarkTxDispatch(b *testing.B) {
	for _, n := range []int{250, 1000} {
		paths := make([]string, n)
		for i := range paths {
			paths[i] = fmt.Sprintf("k%d", i)
		}
		b.Run(fmt.Sprintf("overrides=%d", n), func(b *testing.B) {
			for b.Loop() {
				sess := session.New()
				if err := visibility.Register(sess); err != nil {
					b.Fatal(err)
				}
				tx := sess.Begin()
				for _, p := range paths {
					if err := tx.Session().Dispatch(visibility.SetOverride{Path: p, Mode: visibility.Full}); err != nil {
						b.Fatal(err)
					}
				}
				if got := visibility.Get(tx.Session()).Len(); got != n {
					b.Fatalf("the view shows %d overrides, want %d", got, n)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				if got := visibility.Get(sess).Len(); got != n {
					b.Fatalf("the session shows %d overrides, want %d", got, n)
				}
			}
		})
	}
}
