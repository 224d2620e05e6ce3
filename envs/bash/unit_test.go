package bash

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// testPID is the shell's process ID in the stream tests.
const testPID = 77

// testPSLen is the length of PS1 in the stream tests' markers.
const testPSLen = 60

// testMarker is a marker as the shell with secret and pid prints it; an
// override status ("+N") makes PS1 longer, as the one-shot prompt does.
func testMarker(secret string, pid, number, jobs int, status, cwd string) string {
	tag := "\x1e" + secret
	psLen := testPSLen
	if strings.HasPrefix(status, "+") {
		psLen += len(status) - len("$?")
	}
	return fmt.Sprintf("%s\x1f%d\x1f%d\x1f0\x1f%d\x1f%s\x1f%d\x1fhimBHs\x1f%s%s\x1e", tag, pid, number, jobs, status, psLen, cwd, tag)
}

// visible is text as the output filter keeps it: control characters other
// than newlines dropped.
func visible(text string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' {
			return -1
		}
		return r
	}, text)
}

// feedChunks feeds in to s in chunks of size bytes.
func feedChunks(s *stream, in string, size int) {
	for b := []byte(in); len(b) > 0; {
		n := min(size, len(b))
		s.feed(b[:n])
		b = b[n:]
	}
}

func TestStreamMarker(t *testing.T) {
	const secret = "SECRET"
	tag := "\x1e" + secret
	marker := func(number, jobs int, status, cwd string) string {
		return testMarker(secret, testPID, number, jobs, status, cwd)
	}
	jobsBlock := tag + "\x1d[1]+ 42 Running                 sleep 9 &\n"
	for _, c := range []struct {
		name, in string
		after    int64
		output   string
		want     frame
	}{
		{"simple", "hello\n" + marker(5, 0, "0", "/"), 4, "hello\n", frame{pid: testPID, number: 5, psLen: testPSLen, cwd: "/"}},
		{"status and cwd", marker(5, 0, "3", "/tmp/a b"), -1, "", frame{pid: testPID, number: 5, psLen: testPSLen, status: 3, cwd: "/tmp/a b"}},
		{"override", marker(5, 0, "+130", "/"), 4, "", frame{pid: testPID, number: 5, psLen: testPSLen, status: 130, override: true, cwd: "/"}},
		{"jobs counted, not listed", marker(5, 1, "0", "/"), 4, "", frame{pid: testPID, number: 5, psLen: testPSLen, jobCount: 1, cwd: "/"}},
		{"with jobs", "out" + jobsBlock + marker(5, 1, "0", "/"), 4, "out", frame{pid: testPID, number: 5, psLen: testPSLen, jobCount: 1, listed: true, jobs: []string{"[1] 42 sleep 9"}, cwd: "/"}},
		// Markers that do not end the command are dropped from its output.
		{"old marker", marker(3, 0, "0", "/old") + "mid\n" + marker(7, 0, "0", "/"), 4, "mid\n", frame{pid: testPID, number: 7, psLen: testPSLen, cwd: "/"}},
		{"same number", marker(4, 0, "0", "/old") + marker(5, 0, "0", "/"), 4, "", frame{pid: testPID, number: 5, psLen: testPSLen, cwd: "/"}},
		{"old jobs block", jobsBlock + marker(2, 1, "0", "/") + "x" + marker(5, 0, "0", "/"), 4, "x", frame{pid: testPID, number: 5, psLen: testPSLen, cwd: "/"}},
		{"another shell", "a" + testMarker(secret, testPID+1, 9, 0, "0", "/nested") + "b" + marker(5, 0, "0", "/"), 4, "ab", frame{pid: testPID, number: 5, psLen: testPSLen, cwd: "/"}},
		// What is not a marker of this shell's is output.
		{"other secrets", "\x1eOTHER\x1f77\x1f9\x1f0\x1f0\x1f/\x1eOTHER\x1e\x1eSECRE\n" + marker(5, 0, "0", "/"), 4, "\x1eOTHER\x1f77\x1f9\x1f0\x1f0\x1f/\x1eOTHER\x1e\x1eSECRE\n", frame{pid: testPID, number: 5, psLen: testPSLen, cwd: "/"}},
		{"lone tag", tag + " no marker\n" + marker(5, 0, "0", "/"), 4, tag + " no marker\n", frame{pid: testPID, number: 5, psLen: testPSLen, cwd: "/"}},
		{"old marker without end", tag + "\x1f77\x1f3\x1f0\x1f0\x1f/old" + marker(5, 0, "0", "/"), 4, tag + "\x1f77\x1f3\x1f0\x1f0\x1f/old", frame{pid: testPID, number: 5, psLen: testPSLen, cwd: "/"}},
		{"malformed", tag + "\x1f77\x1fx\x1f0\x1f0\x1f/" + tag + "\x1e" + marker(5, 0, "0", "/"), 4, tag + "\x1f77\x1fx\x1f0\x1f0\x1f/" + tag + "\x1e", frame{pid: testPID, number: 5, psLen: testPSLen, cwd: "/"}},
		{"fields missing", tag + "\x1f5\x1f0\x1f0\x1f/" + tag + "\x1e" + marker(5, 0, "0", "/"), 4, tag + "\x1f5\x1f0\x1f0\x1f/" + tag + "\x1e", frame{pid: testPID, number: 5, psLen: testPSLen, cwd: "/"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for size := 1; size <= len(c.in); size++ {
				s := newStream(secret, testPID)
				out := envs.NewOutput(0)
				s.expect(c.after, 0, out)
				feedChunks(s, c.in, size)
				var fr frame
				select {
				case fr = <-s.done:
				default:
					t.Fatalf("chunks of %d: got no frame, want %+v", size, c.want)
				}
				s.finish()
				if got, want := out.String(), visible(c.output); got != want {
					t.Fatalf("chunks of %d: output got %q, want %q", size, got, want)
				}
				if !reflect.DeepEqual(fr, c.want) {
					t.Fatalf("chunks of %d: frame got %+v, want %+v", size, fr, c.want)
				}
			}
		})
	}
}

func TestStreamNoMarker(t *testing.T) {
	for _, c := range []struct{ name, in, output string }{
		{"old only", testMarker("S", testPID, 3, 0, "0", "/"), ""},
		{"another shell only", testMarker("S", testPID+1, 9, 0, "0", "/"), ""},
		{"long frame", "\x1eS" + strings.Repeat("a", maxFrame+10) + "\x1eS", "S" + strings.Repeat("a", maxFrame+10) + "S"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStream("S", testPID)
			out := envs.NewOutput(0)
			s.expect(4, 0, out)
			s.feed([]byte(c.in))
			select {
			case fr := <-s.done:
				t.Fatalf("got frame %+v, want none", fr)
			default:
			}
			s.finish()
			if got := out.String(); got != c.output {
				t.Errorf("output: got %d bytes, want %d", len(got), len(c.output))
			}
		})
	}
}

// TestStreamBackground: between commands, a prompt the shell repeats is
// dropped, also when it is split around the start of the next command,
// and other output is background output.
func TestStreamBackground(t *testing.T) {
	const secret = "SECRET"
	marker := func(number int) string { return testMarker(secret, testPID, number, 0, "0", "/") }
	for size := 1; size <= len(marker(5)); size++ {
		s := newStream(secret, testPID)
		out := envs.NewOutput(0)
		s.expect(4, 0, out)
		repeated := marker(5)
		cut := min(size, len(repeated)-1)
		feedChunks(s, "cmd\n"+marker(5)+"job done\n"+repeated[:cut], size)
		select {
		case <-s.done:
		default:
			t.Fatalf("chunks of %d: got no frame for the first command", size)
		}
		s.finish()
		if got := out.String(); got != "cmd\n" {
			t.Fatalf("chunks of %d: first output got %q, want %q", size, got, "cmd\n")
		}
		if got := s.background(); got != "job done\n" {
			t.Fatalf("chunks of %d: background got %q, want %q", size, got, "job done\n")
		}
		out = envs.NewOutput(0)
		s.expect(5, 0, out)
		feedChunks(s, repeated[cut:]+"next\n"+marker(6), size)
		var fr frame
		select {
		case fr = <-s.done:
		default:
			t.Fatalf("chunks of %d: got no frame for the second command", size)
		}
		s.finish()
		if got := out.String(); got != "next\n" || fr.number != 6 {
			t.Fatalf("chunks of %d: second command got %q and number %d, want %q and 6", size, got, fr.number, "next\n")
		}
	}
}

// TestStreamRepeatEnds: after repeatEnds, a marker with the last number
// ends the command.
func TestStreamRepeatEnds(t *testing.T) {
	s := newStream("S", testPID)
	s.expect(5, 0, envs.NewOutput(0))
	s.feed([]byte(testMarker("S", testPID, 5, 0, "130", "/")))
	select {
	case fr := <-s.done:
		t.Fatalf("before repeatEnds: got frame %+v, want none", fr)
	default:
	}
	s.repeatEnds()
	s.feed([]byte(testMarker("S", testPID, 5, 0, "130", "/")))
	select {
	case fr := <-s.done:
		if fr.number != 5 || fr.status != 130 {
			t.Errorf("got frame %+v, want number 5, status 130", fr)
		}
	default:
		t.Fatal("after repeatEnds: got no frame")
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

func TestCutPrompt(t *testing.T) {
	for _, c := range []struct {
		text, prompt string
		copies       int
		want         string
	}{
		{"out\n$ ", "$ ", 1, "out\n"},
		{"out\n$ \n$ ", "$ ", 3, "out\n"},
		{"keep\n$ \n$ ", "$ ", 1, "keep\n$ \n"},
		{"out\n$ \nn4\n", "$ ", 1, "out\n$ \nn4\n"},
		{"partial$ ", "$ ", 1, "partial"},
		{"changed\n$ ", "$ ", 1, "changed\n"},
		{"12:00:01 > ", "12:00:02 > ", 1, ""},
		{"x\n12 $ ", "7 $ ", 1, "x\n12 $ "},
		{"x\n12 $ ", "2 $ ", 1, "x\n12 $ "},
		{"a > ", "", 1, "a > "},
		{"> ", "a > ", 1, "> "},
	} {
		if got := cutPrompt(c.text, c.prompt, c.copies); got != c.want {
			t.Errorf("cutPrompt(%q, %q, %d) = %q, want %q", c.text, c.prompt, c.copies, got, c.want)
		}
	}
}

func TestPromptAt(t *testing.T) {
	for _, c := range []struct {
		text   string
		i      int
		prompt string
		want   bool
	}{
		{"> out", 0, "> ", true},
		{"12:00:01 > bg", 0, "12:00:02 > ", true},
		{"7 $ 3", 0, "7 $ ", true},
		{"[41] 01", 0, "[40] 0", false}, // digits go on past the end
		{"12 $ ", 1, "2 $ ", false},     // a count grown a digit
		{"> ", 0, "a > ", false},
		{"> ", 0, "", false},
		{"x> ", -1, "x> ", false},
	} {
		if got := promptAt(c.text, c.i, c.prompt); got != c.want {
			t.Errorf("promptAt(%q, %d, %q) = %v, want %v", c.text, c.i, c.prompt, got, c.want)
		}
	}
}

func TestSpinFor(t *testing.T) {
	if got := spinFor(-1); got != 0 {
		t.Errorf("Spin -1: got %v, want none", got)
	}
	if got := spinFor(time.Millisecond); got != time.Millisecond {
		t.Errorf("Spin 1ms: got %v, want 1ms", got)
	}
	want := time.Duration(0)
	if runtime.NumCPU() > 1 && runtime.GOMAXPROCS(0) > 1 {
		want = DefaultSpin
	}
	if got := spinFor(0); got != want {
		t.Errorf("Spin 0 with %d processors and GOMAXPROCS %d: got %v, want %v", runtime.NumCPU(), runtime.GOMAXPROCS(0), got, want)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if got := spinFor(0); got != 0 {
		t.Errorf("Spin 0 with GOMAXPROCS 1: got %v, want none", got)
	}
}

// TestStreamID: a marker ends the command only when it carries the id
// the command's line set; after repeatEnds, one with an earlier id does.
func TestStreamID(t *testing.T) {
	s := newStream("S", testPID)
	withID := func(number, id int) string {
		return strings.Replace(testMarker("S", testPID, number, 0, "0", "/"), fmt.Sprintf("\x1f%d\x1f0\x1f", number), fmt.Sprintf("\x1f%d\x1f%d\x1f", number, id), 1)
	}
	out := envs.NewOutput(0)
	s.expect(5, 3, out)
	s.feed([]byte("stray\n" + withID(6, 2)))
	select {
	case fr := <-s.done:
		t.Fatalf("marker of id 2: got frame %+v, want none", fr)
	default:
	}
	s.feed([]byte("mine\n" + withID(7, 3)))
	select {
	case fr := <-s.done:
		if fr.number != 7 || fr.id != 3 || out.String() != "stray\nmine\n" {
			t.Errorf("got frame %+v and output %q, want number 7, id 3, output %q", fr, out.String(), "stray\nmine\n")
		}
	default:
		t.Fatal("marker of id 3: got no frame")
	}
	s.expect(7, 4, envs.NewOutput(0))
	s.repeatEnds()
	s.feed([]byte(withID(7, 3)))
	select {
	case fr := <-s.done:
		if fr.number != 7 || fr.id != 3 {
			t.Errorf("after repeatEnds: got frame %+v, want number 7, id 3", fr)
		}
	default:
		t.Fatal("after repeatEnds: got no frame")
	}
}
