package envs_test

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/tokens"
)

// numbered returns the lines "line 1" to "line n", with a two-byte
// character and a byte that is not UTF-8 in every 100th, so that cuts
// land in the middle of characters.
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i%100 == 0 {
			fmt.Fprintf(&b, "line %d é \xff\n", i)
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// valid returns s as the saved file holds it: valid UTF-8, as responses
// show output.
func valid(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// writeChunks writes s to o in chunks of random sizes.
func writeChunks(t *testing.T, o *envs.Output, s string) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	for len(s) > 0 {
		k := min(len(s), 1+r.IntN(3000))
		if n, err := o.Write([]byte(s[:k])); n != k || err != nil {
			t.Fatalf("Write: got %d, %v", n, err)
		}
		s = s[k:]
	}
}

// saveIn returns a Limits.Save that saves to new files in dir.
func saveIn(dir string) func(io.Reader) (string, error) {
	return func(r io.Reader) (string, error) { return envs.SaveIn(dir, "out-*.txt", r) }
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestSpoolQuickOutput: output within the limit makes no file.
func TestSpoolQuickOutput(t *testing.T) {
	parent := t.TempDir()
	sp := envs.NewSpool(parent, 0)
	o := sp.Output(64 << 10)
	writeChunks(t, o, numbered(1000))
	resp := sp.Fit(envs.Limits{Budget: -1}, envs.Response{Output: o.String()})
	if resp.Output != strings.ToValidUTF8(numbered(1000), "\uFFFD") || resp.OutputFile != "" {
		t.Errorf("got a changed output or a file %q, want the output as written", resp.OutputFile)
	}
	if got := entries(t, parent); len(got) != 0 {
		t.Errorf("got %q, want no spool directory", got)
	}
	if err := sp.Close(); err != nil {
		t.Error(err)
	}
}

// leftOut returns what of saved, the file a response names, the response
// shown leaves out at its one note.
func leftOut(saved, shown string) string {
	i := strings.Index(shown, "[... ")
	j := i + strings.Index(shown[i:], "]\n") + 2
	head, tail := shown[:i], shown[j:]
	if !strings.HasPrefix(saved, head) {
		// The note's line break, after a head that ends mid-line.
		head = strings.TrimSuffix(head, "\n")
	}
	return saved[len(head) : len(saved)-len(tail)]
}

// TestSpoolWholeOutput: an output far past its memory limit is kept whole
// on disk; fitting a response that shows it saves the response's output
// with the whole output in its place, byte for byte, and removes the
// spool file; Close removes the directory.
func TestSpoolWholeOutput(t *testing.T) {
	whole := numbered(100000)
	for _, c := range []struct {
		name   string
		budget int
	}{{"memory limit only", -1}, {"and the budget", 500}} {
		t.Run(c.name, func(t *testing.T) {
			parent, saves := t.TempDir(), t.TempDir()
			sp := envs.NewSpool(parent, 0)
			defer sp.Close()
			const limit = 4 << 10
			o := sp.Output(limit)
			writeChunks(t, o, whole)
			shown := o.String()
			if len(shown) > limit+300 {
				t.Fatalf("String: got %d bytes, want the %d kept and a note", len(shown), limit)
			}
			resp := sp.Fit(envs.Limits{Budget: c.budget, Save: saveIn(saves)}, envs.Response{Output: "before\n" + shown + "\n[after]", Success: true})
			if resp.OutputFile == "" || !strings.Contains(resp.Output, "the whole output is saved in "+resp.OutputFile) || !resp.Success {
				t.Fatalf("got %+v, want a note naming the saved file", resp)
			}
			data, err := os.ReadFile(resp.OutputFile)
			if err != nil {
				t.Fatal(err)
			}
			if want := "before\n" + valid(whole) + "\n[after]"; string(data) != want {
				t.Errorf("the saved file: got %d bytes, want the %d of the output as written", len(data), len(want))
			}
			if !strings.HasPrefix(resp.Output, "before\nline 1\n") || !strings.HasSuffix(resp.Output, "line 100000 é \uFFFD\n\n[after]") {
				t.Errorf("got %q, want the head and the tail", resp.Output)
			}
			if c.budget > 0 {
				if n := tokens.Estimate.Count(resp.Output); n > c.budget {
					t.Errorf("got %d tokens, want at most %d", n, c.budget)
				}
				m := regexp.MustCompile(`(\d+) of (\d+) lines \(([0-9.]+ [KM]?B) of ([0-9.]+ [KM]?B)\)`).FindStringSubmatch(resp.Output)
				if m == nil {
					t.Fatalf("got %q, want a note with the counts", resp.Output)
				}
				shownLines := strings.Count(resp.Output, "\n") - 1 // less the note's own line
				left, _ := strconv.Atoi(m[1])
				if m[2] != strconv.Itoa(strings.Count(string(data), "\n")+1) || left+shownLines != strings.Count(string(data), "\n") {
					t.Errorf("got the counts %q, want %d lines in all, %d of them shown", m[0], strings.Count(string(data), "\n")+1, shownLines)
				}
				if want := fmt.Sprintf("%.1f MB", float64(len(data))/(1<<20)); m[4] != want {
					t.Errorf("got %s in all, want %s", m[4], want)
				}
			} else if m := regexp.MustCompile(`\[\.\.\. (\d+) lines \([0-9.]+ [KM]B\) left out here, past the 4.0 KB of output kept in memory; the whole output is saved in `).FindStringSubmatch(resp.Output); m == nil {
				t.Errorf("got %q, want a note saying how much is left out and where it is", resp.Output)
			} else if left := leftOut(string(data), resp.Output); m[1] != strconv.Itoa(strings.Count(left, "\n")) {
				t.Errorf("got %s lines left out, want the %d the response does not show", m[1], strings.Count(left, "\n"))
			}
			dirs := entries(t, parent)
			if len(dirs) != 1 {
				t.Fatalf("got %q in the spool's parent, want its directory", dirs)
			}
			if files := entries(t, filepath.Join(parent, dirs[0])); len(files) != 0 {
				t.Errorf("after the fit: got %q, want the spool file removed", files)
			}
			if err := sp.Close(); err != nil {
				t.Error(err)
			}
			if got := entries(t, parent); len(got) != 0 {
				t.Errorf("after Close: got %q, want nothing", got)
			}
		})
	}
}

// TestSpoolDiskLimit: past the spool's limit on disk, the file saved
// says where and how much output is missing, and so does the response.
func TestSpoolDiskLimit(t *testing.T) {
	sp := envs.NewSpool(t.TempDir(), 100<<10)
	defer sp.Close()
	o := sp.Output(4 << 10)
	whole := numbered(100000)
	writeChunks(t, o, whole)
	resp := sp.Fit(envs.Limits{Budget: -1, Save: saveIn(t.TempDir())}, envs.Response{Output: o.String()})
	data, err := os.ReadFile(resp.OutputFile)
	if err != nil {
		t.Fatal(err)
	}
	kept, rest, ok := strings.Cut(string(data), "\n[... ")
	if !ok || !strings.HasPrefix(valid(whole), kept) || len(kept) < 100<<10 {
		t.Fatalf("the saved file: got %d bytes before a note, want the first 100 KB of the output", len(kept))
	}
	note, tail, _ := strings.Cut(rest, "\n")
	if !regexp.MustCompile(`^[0-9.]+ KB of output missing here: the output passed the 100.0 KB an environment keeps on disk \.\.\.\]$`).MatchString(note) {
		t.Errorf("got the note %q, want it to say how much is missing and why", note)
	}
	if !strings.HasSuffix(valid(whole), tail) || len(tail) < 1<<10 {
		t.Errorf("got a tail of %d bytes, want the end of the output", len(tail))
	}
	if !regexp.MustCompile(`left out here, past the 4.0 KB kept in memory; the output is saved in \S+, except [0-9.]+ KB of it, lost as the output passed the 100.0 KB an environment keeps on disk \(the file marks the place\)`).MatchString(resp.Output) {
		t.Errorf("got %q, want the response to say that part of the output is missing", resp.Output)
	}
	o = sp.Output(4 << 10)
	writeChunks(t, o, whole)
	resp = sp.Fit(envs.Limits{Budget: 300, Save: saveIn(t.TempDir())}, envs.Response{Output: o.String()})
	if !regexp.MustCompile(`\[\.\.\. [0-9.]+ MB of the [0-9.]+ MB of output left out here to fit the budget of 300 tokens; the output is saved in \S+, except [0-9.]+ KB of it, lost as the output passed the 100.0 KB an environment keeps on disk \(the file marks the place\): view it with the editor, or search it with grep\.\]`).MatchString(resp.Output) {
		t.Errorf("under a budget: got %q, want the note to say that part of the output is lost", resp.Output)
	}
}

// TestSpoolSaveFails: when the save asked for fails, the whole output goes
// to the system's temporary directory, and the note says why; when that
// fails too, what memory kept is shown and the rest is said to be lost.
func TestSpoolSaveFails(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	sp := envs.NewSpool(t.TempDir(), 0)
	defer sp.Close()
	fail := func(io.Reader) (string, error) { return "", fmt.Errorf("no room") }
	whole := numbered(20000)
	o := sp.Output(4 << 10)
	writeChunks(t, o, whole)
	resp := sp.Fit(envs.Limits{Budget: 300, Save: fail}, envs.Response{Output: o.String()})
	if filepath.Dir(resp.OutputFile) != tmp || !strings.Contains(resp.Output, "(Saving it where asked failed: no room.)") {
		t.Fatalf("got %+v, want the output saved in the temporary directory and a note saying why", resp)
	}
	if data, _ := os.ReadFile(resp.OutputFile); string(data) != valid(whole) {
		t.Errorf("the saved file: got %d bytes, want the whole output", len(data))
	}

	t.Setenv("TMPDIR", filepath.Join(tmp, "missing"))
	o = sp.Output(4 << 10)
	writeChunks(t, o, whole)
	resp = sp.Fit(envs.Limits{Budget: 300, Save: fail}, envs.Response{Output: o.String()})
	if resp.OutputFile != "" || !strings.HasPrefix(resp.Output, "line 1\n") || !strings.HasSuffix(resp.Output, "line 20000 é \uFFFD\n") ||
		!strings.Contains(resp.Output, "saving the whole output failed (") || !strings.Contains(resp.Output, "(Saving it where asked failed: no room.)") || len(resp.Output) > 5<<10 {
		t.Errorf("got %+v, want what memory kept and a note that the rest is lost", resp)
	}
}

// TestSpoolClose: an output written after its spool closed keeps its
// memory part and says the rest was dropped; one that a response did not
// show keeps its file until Close.
func TestSpoolClose(t *testing.T) {
	parent := t.TempDir()
	sp := envs.NewSpool(parent, 0)
	unshown := sp.Output(1 << 10)
	writeChunks(t, unshown, numbered(1000))
	_ = unshown.String()
	resp := sp.Fit(envs.Limits{Budget: -1}, envs.Response{Output: "something else"})
	if resp.Output != "something else" || resp.OutputFile != "" {
		t.Errorf("got %+v, want the response as it was", resp)
	}
	dirs := entries(t, parent)
	if len(dirs) != 1 || len(entries(t, filepath.Join(parent, dirs[0]))) != 1 {
		t.Fatalf("got %q, want the spool file of the output not shown yet", dirs)
	}
	o := sp.Output(1 << 10)
	writeChunks(t, o, numbered(10))
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sp.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if got := entries(t, parent); len(got) != 0 {
		t.Errorf("after Close: got %q, want nothing", got)
	}
	writeChunks(t, o, numbered(1000))
	writeChunks(t, unshown, numbered(10))
	for _, o := range []*envs.Output{o, unshown} {
		if s := o.String(); !strings.HasPrefix(s, "line 1\n") || !strings.Contains(s, "of output dropped (") {
			t.Errorf("after Close: got %q, want the head, the tail and a note saying why the middle was dropped", s)
		}
	}
}

// TestSpoolSplitCharacters: where the memory limit cuts a character in
// two, the response shows neither half, and the saved file has it whole.
func TestSpoolSplitCharacters(t *testing.T) {
	sp := envs.NewSpool(t.TempDir(), 0)
	defer sp.Close()
	o := sp.Output(4)
	whole := "aé" + strings.Repeat("x", 100) + "éb"
	writeChunks(t, o, whole)
	shown := o.String()
	if !strings.HasPrefix(shown, "a\n[... ") || !strings.HasSuffix(shown, "...]\nb") || strings.Contains(shown, "\uFFFD") {
		t.Errorf("String: got %q, want the whole characters at both ends, and no half of one", shown)
	}
	resp := sp.Fit(envs.Limits{Budget: -1, Save: saveIn(t.TempDir())}, envs.Response{Output: shown})
	if data, err := os.ReadFile(resp.OutputFile); err != nil || string(data) != whole {
		t.Errorf("the saved file: got %q, %v; want %q", data, err, whole)
	}
}

// TestSpoolSaveLimit: an output far past the save limit is saved as its
// head and its tail, in whole lines, with a line saying how much of the
// middle is left out; the response says the same instead of "the whole
// output", and Fit reads back no more of the spool file than it saves.
func TestSpoolSaveLimit(t *testing.T) {
	whole := numbered(200000) // 2.3 MB
	const saveLimit = 64 << 10
	for _, c := range []struct {
		name   string
		budget int
		note   string
	}{
		{"memory limit only", -1, `\[\.\.\. 2\.\d MB of output left out here, past the 4\.0 KB kept in memory; the output is saved in \S+, except 2\.\d MB of its middle, left out as a saved output holds at most 64\.0 KB \(the file marks the place\): view it with the editor, or search it with grep\.\]`},
		{"and the budget", 300, `\[\.\.\. 2\.\d MB of the 2\.\d MB of output left out here to fit the budget of 300 tokens; the output is saved in \S+, except 2\.\d MB of its middle, left out as a saved output holds at most 64\.0 KB \(the file marks the place\): view it with the editor, or search it with grep\.\]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := envs.NewSpool(t.TempDir(), 0)
			defer sp.Close()
			o := sp.Output(4 << 10)
			writeChunks(t, o, whole)
			before := envs.SpoolRead()
			resp := sp.Fit(envs.Limits{Budget: c.budget, Save: saveIn(t.TempDir()), SaveLimit: saveLimit}, envs.Response{Output: o.String()})
			if read := envs.SpoolRead() - before; read > saveLimit+4*4<<10 {
				t.Errorf("Fit read %d bytes of the spool file, want at most the %d saved and a few windows", read, saveLimit)
			}
			if !regexp.MustCompile(c.note).MatchString(resp.Output) || strings.Contains(resp.Output, "the whole output") {
				t.Errorf("got %q, want a note saying what the saved file leaves out", resp.Output)
			}
			data, err := os.ReadFile(resp.OutputFile)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) > saveLimit+200 {
				t.Errorf("the saved file: got %d bytes, want at most the limit of %d and a note", len(data), saveLimit)
			}
			head, rest, ok := strings.Cut(string(data), "[... ")
			note, tail, _ := strings.Cut(rest, "\n")
			if !ok || !strings.HasPrefix(valid(whole), head) || !strings.HasSuffix(head, "\n") || len(head) < 28<<10 ||
				!strings.HasSuffix(valid(whole), tail) || !strings.HasPrefix(tail, "line ") || len(tail) < 28<<10 {
				t.Fatalf("the saved file: got a head of %d bytes and a tail of %d, want about 32 KB of whole lines from each end", len(head), len(tail))
			}
			if !regexp.MustCompile(`^2\.\d MB of output left out here, as a saved output holds at most 64\.0 KB \.\.\.\]$`).MatchString(note) {
				t.Errorf("the saved file: got the note %q, want it to say how much is left out there and why", note)
			}
		})
	}
}

// TestSpoolSaveDefault checks that a response fit by a spool without a
// Save of its own is saved in the spool's directory, and that Close
// removes it with the spool files: an environment used alone leaves
// nothing in the temporary directory.
func TestSpoolSaveDefault(t *testing.T) {
	tmp := t.TempDir()
	sp := envs.NewSpool(tmp, 0)
	big := strings.Repeat("line of output\n", 20000)
	resp := sp.Fit(envs.Limits{Budget: 300}, envs.Response{Output: big, Success: true})
	if resp.OutputFile == "" || !strings.HasPrefix(resp.OutputFile, tmp+string(filepath.Separator)) {
		t.Fatalf("OutputFile %q: want a file under the spool's parent %s", resp.OutputFile, tmp)
	}
	if data, err := os.ReadFile(resp.OutputFile); err != nil || string(data) != big {
		t.Fatalf("the saved file holds %d bytes (%v), want the whole output", len(data), err)
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("after Close, %s holds %v, want nothing", tmp, left)
	}
	if _, err := sp.Save(strings.NewReader("late")); !errors.Is(err, envs.ErrClosed) {
		t.Errorf("Save after Close: %v, want ErrClosed", err)
	}
}

// TestSpoolSaveClosed: an output whose environment closed while it was
// being fit is not saved anywhere else (the temporary directory kept
// files nobody removed), and a Save under way when Close comes finishes
// before the directory goes, so that nothing is left behind.
func TestSpoolSaveClosed(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	sp := envs.NewSpool(t.TempDir(), 0)
	closed := func(io.Reader) (string, error) { return "", fmt.Errorf("save: %w", envs.ErrClosed) }
	whole := numbered(20000)
	o := sp.Output(4 << 10)
	writeChunks(t, o, whole)
	resp := sp.Fit(envs.Limits{Budget: 300, Save: closed}, envs.Response{Output: o.String()})
	if resp.OutputFile != "" || strings.Contains(resp.Output, "Saving it where asked failed") {
		t.Errorf("got %+v, want the output not saved elsewhere", resp)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the temporary directory holds %v, want nothing", left)
	}

	parent := t.TempDir()
	sp = envs.NewSpool(parent, 0)
	started, release := make(chan struct{}), make(chan struct{})
	saved := make(chan error, 1)
	go func() {
		_, err := sp.Save(io.MultiReader(strings.NewReader("head\n"), readerFunc(func(p []byte) (int, error) {
			close(started)
			<-release
			return 0, io.EOF
		})))
		saved <- err
	}()
	<-started
	closeDone := make(chan error, 1)
	go func() { closeDone <- sp.Close() }()
	// Close waits for the save: it has not returned a while later (a
	// slow machine can only make this pass when it should not).
	var closeErr error
	select {
	case closeErr = <-closeDone:
		t.Error("Close returned while a Save was under way")
		close(release)
	case <-time.After(200 * time.Millisecond):
		close(release)
		closeErr = <-closeDone
	}
	if err := <-saved; err != nil {
		t.Errorf("the Save under way: %v, want it done", err)
	}
	if closeErr != nil {
		t.Fatal(closeErr)
	}
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Errorf("after Close, %s holds %v, want nothing", parent, left)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
