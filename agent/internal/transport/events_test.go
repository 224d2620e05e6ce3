package transport

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestEventsNoProgress: a reader that keeps returning nothing, and no
// error, ends the stream with io.ErrNoProgress instead of a spin.
func TestEventsNoProgress(t *testing.T) {
	if _, _, err := NewEvents(emptyReader{}).Next(); err != io.ErrNoProgress {
		t.Errorf("got %v, want io.ErrNoProgress", err)
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

// TestEventsEndedByCR: an event whose blank line is a "\r" at the end of
// what came so far is given at once, not when the next byte comes.
func TestEventsEndedByCR(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	go w.Write([]byte("event: a\rdata: 1\r\r"))
	got := make(chan string, 1)
	go func() {
		name, data, err := NewEvents(r).Next()
		got <- name + "=" + string(data) + " " + strings.TrimSpace(errText(err))
	}()
	select {
	case g := <-got:
		if g != "a=1 " {
			t.Errorf("got %q, want the event a=1", g)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the event was held back waiting for the stream's next byte")
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// BenchmarkEventsLongLine reads one event whose data line of 8 MiB comes
// in 16 KiB reads: each piece of the line is searched once.
func BenchmarkEventsLongLine(b *testing.B) {
	stream := "data: " + strings.Repeat("x", 8<<20) + "\n\n"
	for b.Loop() {
		e := NewEvents(&chunks{s: stream, step: 16 << 10})
		if _, data, err := e.Next(); err != nil || len(data) != 8<<20 {
			b.Fatal(err)
		}
	}
}
