//go:build linux

package term_test

import (
	"testing"

	"github.com/unfold-dev/unfold/internal/term"
)

// TestCanonical: a terminal is canonical as OpenPTY opens it and while a
// program reads a line without a line editor; raw mode turns it off.
func TestCanonical(t *testing.T) {
	for _, c := range []struct {
		name   string
		script string
		want   bool
	}{
		{"read", "read x", true},
		{"raw mode", "stty raw; read x", false},
		{"-icanon", "stty -icanon; read x", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			master, slave, cmd, _, _ := startOn(t, "bash", "--norc", "--noprofile", "-c", c.script)
			if !eventually(func() bool { _, ok := term.ReadingTerminal(cmd.Process.Pid, slave.Name()); return ok }) {
				t.Fatalf("%s: never read the terminal", c.script)
			}
			if got := term.Canonical(master); got != c.want {
				t.Errorf("Canonical(master) while %s reads: got %v, want %v", c.script, got, c.want)
			}
			if got := term.Canonical(slave); got != c.want {
				t.Errorf("Canonical(slave) while %s reads: got %v, want %v", c.script, got, c.want)
			}
		})
	}
	master, _, err := term.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	if !term.Canonical(master) {
		t.Errorf("Canonical of a terminal as OpenPTY opened it: got false, want true")
	}
}
