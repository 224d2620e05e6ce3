package bash

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/envs"
)

func TestStreamMarker(t *testing.T) {
	const secret = "SECRET"
	tag := "\x1e" + secret
	marker := func(number, jobs int, status, cwd string) string {
		return fmt.Sprintf("%s\x1f%d\x1f%d\x1f%s\x1f%s%s\x1e", tag, number, jobs, status, cwd, tag)
	}
	jobsBlock := tag + "\x1d[1]+ 42 Running                 sleep 9 &\n"
	for _, c := range []struct {
		name, in string
		after    int64
		output   string
		want     frame
	}{
		{"simple", "hello\n" + marker(5, 0, "0", "/"), 4, "hello\n", frame{number: 5, cwd: "/"}},
		{"status and cwd", marker(5, 0, "3", "/tmp/a b"), -1, "", frame{number: 5, status: 3, cwd: "/tmp/a b"}},
		{"override", marker(5, 0, "+130", "/"), 4, "", frame{number: 5, status: 130, override: true, cwd: "/"}},
		{"jobs counted, not listed", marker(5, 1, "0", "/"), 4, "", frame{number: 5, jobCount: 1, cwd: "/"}},
		{"with jobs", "out" + jobsBlock + marker(5, 1, "0", "/"), 4, "out", frame{number: 5, jobCount: 1, listed: true, jobs: []string{"[1] 42 sleep 9"}, cwd: "/"}},
		{"old marker", marker(3, 0, "0", "/old") + "mid\n" + marker(7, 0, "0", "/"), 4, marker(3, 0, "0", "/old") + "mid\n", frame{number: 7, cwd: "/"}},
		{"same number", marker(4, 0, "0", "/old") + marker(5, 0, "0", "/"), 4, marker(4, 0, "0", "/old"), frame{number: 5, cwd: "/"}},
		{"old jobs block", jobsBlock + marker(2, 1, "0", "/") + "x" + marker(5, 0, "0", "/"), 4, jobsBlock + marker(2, 1, "0", "/") + "x", frame{number: 5, cwd: "/"}},
		{"other secrets", "\x1eOTHER\x1f9\x1f0\x1f0\x1f/\x1eOTHER\x1e\x1eSECRE\n" + marker(5, 0, "0", "/"), 4, "\x1eOTHER\x1f9\x1f0\x1f0\x1f/\x1eOTHER\x1e\x1eSECRE\n", frame{number: 5, cwd: "/"}},
		{"lone tag", tag + " no marker\n" + marker(5, 0, "0", "/"), 4, tag + " no marker\n", frame{number: 5, cwd: "/"}},
		{"old marker without end", tag + "\x1f3\x1f0\x1f0\x1f/old" + marker(5, 0, "0", "/"), 4, tag + "\x1f3\x1f0\x1f0\x1f/old", frame{number: 5, cwd: "/"}},
		{"malformed", tag + "\x1fx\x1f0\x1f0\x1f/" + tag + "\x1e" + marker(5, 0, "0", "/"), 4, tag + "\x1fx\x1f0\x1f0\x1f/" + tag + "\x1e", frame{number: 5, cwd: "/"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for size := 1; size <= len(c.in); size++ {
				s := newStream(secret)
				out := envs.NewOutput(0)
				s.expect(c.after, out)
				for in := []byte(c.in); len(in) > 0; {
					n := min(size, len(in))
					s.feed(in[:n])
					in = in[n:]
				}
				var fr frame
				select {
				case fr = <-s.done:
				default:
					t.Fatalf("chunks of %d: got no frame, want %+v", size, c.want)
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
				if !reflect.DeepEqual(fr, c.want) {
					t.Fatalf("chunks of %d: frame got %+v, want %+v", size, fr, c.want)
				}
			}
		})
	}
}

func TestStreamNoMarker(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"old only", "\x1eS\x1f3\x1f0\x1f0\x1f/\x1eS\x1e"},
		{"long frame", "\x1eS" + strings.Repeat("a", maxFrame+10) + "\x1eS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStream("S")
			out := envs.NewOutput(0)
			s.expect(4, out)
			s.feed([]byte(c.in))
			select {
			case fr := <-s.done:
				t.Fatalf("got frame %+v, want none", fr)
			default:
			}
			s.finish()
			if got, want := out.Total(), int64(len(strings.Map(func(r rune) rune {
				if r < 0x20 {
					return -1
				}
				return r
			}, c.in))); got != want {
				t.Errorf("output: got %d bytes, want %d (all of the input but control characters)", got, want)
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
		{"  ", false},
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
