package section

import "testing"

// TestPrintfChargesWhatItMade: printf is refused on its guessed size, which
// may be many times the text (330 bytes and more for a %f), but charged
// what it read and made: a loop printing prices does not run a render's
// work out at a small part of it.
func TestPrintfChargesWhatItMade(t *testing.T) {
	w := NewWork()
	w.bytes.Store(2000)
	for i := range 100 {
		if _, err := w.printf("%.2f", 1.5); err != nil { // the format and the number read, 4 made
			t.Fatalf("call %d: %v", i+1, err)
		}
		if _, err := w.sprint("print", []any{1.5}, false); err != nil {
			t.Fatalf("print, call %d: %v", i+1, err)
		}
	}
	// printf: 4 + 1 read, 4 made; print: 1 read, 3 made.
	if left, want := w.bytes.Load(), int64(2000-100*(9+4)); left != want {
		t.Errorf("bytes left: got %d, want %d", left, want)
	}
}
