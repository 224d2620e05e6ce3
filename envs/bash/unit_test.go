package bash

import (
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/envs"
)

func TestStreamMarker(t *testing.T) {
	tg := []byte("\x1eNONCE")
	frameBytes := string(tg) + "\x1d[1]+ 42 Running                 sleep 9 &\n" + string(tg) + "\x1f3\x1f/tmp/a b\x1e" + "NONCE\x1e"
	for _, c := range []struct{ name, in, output string }{
		{"simple", "hello\n" + string(tg) + "\x1f0\x1f/\x1eNONCE\x1e", "hello\n"},
		{"forged shapes", "\x1eOTHER\x1f0\x1f/\x1eOTHER\x1e\x1eNONC\n" + frameBytes, "\x1eOTHER\x1f0\x1f/\x1eOTHER\x1e\x1eNONC\n"},
		{"with jobs", "out" + frameBytes, "out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for size := 1; size <= len(c.in); size++ {
				s := newStream()
				out := envs.NewOutput(0)
				s.expect([]byte("NONCE"), out)
				for in := []byte(c.in); len(in) > 0; {
					n := min(size, len(in))
					s.feed(in[:n])
					in = in[n:]
				}
				var fr frame
				select {
				case fr = <-s.done:
				default:
					t.Fatalf("chunks of %d: no frame", size)
				}
				s.finish()
				wantOut := strings.Map(func(r rune) rune {
					if r < 0x20 && r != '\n' {
						return -1
					}
					return r
				}, c.output)
				if got := out.String(); got != wantOut {
					t.Fatalf("chunks of %d: output got %q, want %q", size, got, wantOut)
				}
				if c.name == "with jobs" && (fr.status != 3 || fr.cwd != "/tmp/a b" || !slices.Equal(fr.jobs, []string{"[1] 42 sleep 9"})) {
					t.Fatalf("chunks of %d: frame got %+v, want status 3, cwd /tmp/a b, one job", size, fr)
				}
			}
		})
	}
}

func TestParseJobs(t *testing.T) {
	in := "[1]  12345 Running                 ./server --port 8080 &\n" +
		"[2]- 12346 Stopped                 vim notes\n" +
		"[3]+ 12347 Done                    make\n" +
		"[4]  12348 Running                 yes &\n" +
		"      12349                       | head &\n" +
		"[5]  12350 Exit 1                  false\n" +
		"[6]  12351 Stopped (tty input)     cat\n"
	want := []string{"[1] 12345 ./server --port 8080", "[2] 12346 vim notes (stopped)", "[4] 12348 yes", "[6] 12351 cat (stopped)"}
	if got := parseJobs(in); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestTypable(t *testing.T) {
	for _, c := range []struct {
		command string
		want    bool
	}{
		{"true", true},
		{"ls -la /tmp/x_y.go", true},
		{"kill %1", true},
		{"cd ~/src", true},
		{"a=1 b=2", true},
		{"", false},
		{"echo $HOME", false},
		{"echo 'a b'", false},
		{"echo a; echo b", false},
		{"a | b", false},
		{"sleep 1 &", false},
		{"cat <<EOF", false},
		{"echo one \\", false},
		{"if true", false},
		{"for x in a b", false},
		{"return 3", false},
		{"echo a\nb", false},
		{"echo \x03", false},
		{"echo café", false},
		{"echo " + strings.Repeat("a", maxTyped), false},
	} {
		t.Run(c.command, func(t *testing.T) {
			if got := typable(c.command); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
