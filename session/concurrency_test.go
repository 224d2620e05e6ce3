package session_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// TestConcurrentUse dispatches from many goroutines while others read; run it
// with -race. Readers check that every read shows whole dispatches only.
func TestConcurrentUse(t *testing.T) {
	const writers, perWriter, readers = 8, 200, 4
	sess := session.New()
	if err := visibility.Register(sess); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	done := make(chan struct{})
	readerErrs := make(chan error, readers)
	for r := range readers {
		wg.Go(func() {
			var lastSeq uint64
			for i := 0; ; i++ {
				select {
				case <-done:
					readerErrs <- nil
					return
				default:
					runtime.Gosched() // let the writers progress on few cores
				}
				switch i % 3 {
				case 0:
					// Each set event adds one path, so a snapshot's override
					// count equals its sequence number.
					snap := sess.Snapshot()
					if snap.Seq() < lastSeq {
						readerErrs <- fmt.Errorf("reader %d: snapshot seq went back from %d to %d", r, lastSeq, snap.Seq())
						return
					}
					lastSeq = snap.Seq()
					restored := session.New()
					if err := visibility.Register(restored); err != nil {
						readerErrs <- err
						return
					}
					if err := restored.Restore(snap); err != nil {
						readerErrs <- err
						return
					}
					if got := uint64(visibility.Get(restored).Len()); got != snap.Seq() {
						readerErrs <- fmt.Errorf("reader %d: snapshot at seq %d holds %d overrides", r, snap.Seq(), got)
						return
					}
				case 1:
					o := visibility.Get(sess)
					n := o.Len()
					if got := len(o.Paths()); got != n {
						readerErrs <- fmt.Errorf("reader %d: overrides changed while read: %d paths, Len %d", r, got, n)
						return
					}
				case 2:
					for k, rec := range sess.Events() {
						if rec.Seq != uint64(k+1) {
							readerErrs <- fmt.Errorf("reader %d: record %d has seq %d", r, k, rec.Seq)
							return
						}
					}
				}
			}
		})
	}

	var writersWG sync.WaitGroup
	for w := range writers {
		writersWG.Go(func() {
			for i := range perWriter {
				err := sess.Dispatch(visibility.SetOverride{Path: fmt.Sprintf("w%d.s%d", w, i), Mode: visibility.Mode(i % 2)})
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		})
	}
	writersWG.Wait()
	close(done)
	wg.Wait()
	close(readerErrs)
	for err := range readerErrs {
		if err != nil {
			t.Error(err)
		}
	}

	const total = writers * perWriter
	if got := visibility.Get(sess).Len(); got != total {
		t.Errorf("got %d overrides, want %d", got, total)
	}
	events := sess.Events()
	if len(events) != total {
		t.Fatalf("got %d events, want %d", len(events), total)
	}
	if got := sess.Seq(); got != total {
		t.Errorf("got seq %d, want %d", got, total)
	}
	// Each writer's events appear in the order it dispatched them.
	next := make(map[int]int)
	for _, rec := range events {
		e := rec.Event.(visibility.SetOverride)
		var w, i int
		if _, err := fmt.Sscanf(e.Path, "w%d.s%d", &w, &i); err != nil {
			t.Fatal(err)
		}
		if i != next[w] {
			t.Errorf("writer %d: got event %d, want %d", w, i, next[w])
		}
		next[w] = i + 1
	}
	for w := range writers {
		if m, _ := visibility.Get(sess).Mode(fmt.Sprintf("w%d.s%d", w, 1)); m != visibility.Summary {
			t.Errorf("writer %d: got mode %v for s1, want SUMMARY", w, m)
		}
	}
}
