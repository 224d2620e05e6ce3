package envs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/tokens"
)

// saveTo returns a Limits.Save that writes into dir and the output it
// saved last.
func saveTo(t *testing.T) (func(io.Reader) (string, error), *string) {
	t.Helper()
	dir := t.TempDir()
	var last string
	return func(out io.Reader) (string, error) {
		var b strings.Builder
		name, err := envs.SaveIn(dir, "out-*.txt", io.TeeReader(out, &b))
		last = b.String()
		return name, err
	}, &last
}

func TestFit(t *testing.T) {
	var lines strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	oneLine := strings.Repeat("word ", 20000)
	for _, c := range []struct {
		name, output string
		budget       int
		cut          bool
		head, tail   string
	}{
		{"under the budget", "a\nb\n", 100, false, "a\n", "b\n"},
		{"no budget", lines.String(), -1, false, "line 1\n", "line 5000\n"},
		{"lines", lines.String(), 300, true, "line 1\nline 2\n", "line 4999\nline 5000\n"},
		{"one long line", oneLine, 300, true, "word word", "word word "},
	} {
		t.Run(c.name, func(t *testing.T) {
			save, saved := saveTo(t)
			resp := envs.Limits{Budget: c.budget, Save: save}.Fit(envs.Response{Output: c.output, Success: true})
			if !resp.Success {
				t.Errorf("got Success false, want it kept")
			}
			if !strings.HasPrefix(resp.Output, c.head) || !strings.HasSuffix(resp.Output, c.tail) {
				t.Errorf("got %q...%q, want it to start with %q and end with %q", resp.Output[:min(40, len(resp.Output))], resp.Output[max(0, len(resp.Output)-40):], c.head, c.tail)
			}
			if !c.cut {
				if resp.Output != c.output || resp.OutputFile != "" {
					t.Errorf("got a cut output (file %q), want it whole", resp.OutputFile)
				}
				return
			}
			if got := tokens.Estimate.Count(resp.Output); got > c.budget {
				t.Errorf("got %d tokens, want at most %d", got, c.budget)
			}
			data, err := os.ReadFile(resp.OutputFile)
			if err != nil || string(data) != c.output || *saved != c.output {
				t.Errorf("the saved file: got %d bytes, %v; want the whole output", len(data), err)
			}
			if !strings.Contains(resp.Output, "left out here to fit the budget of 300 tokens; the whole output is saved in "+resp.OutputFile) {
				t.Errorf("got %q, want the note naming the file", resp.Output)
			}
			if strings.Contains(resp.Output, "\n\n") {
				t.Errorf("got a blank line in %q, want none: the output had none", resp.Output)
			}
			if c.name == "lines" {
				// Whole lines on both sides of the note.
				for _, l := range strings.Split(strings.TrimSuffix(resp.Output, "\n"), "\n") {
					if !strings.HasPrefix(l, "line ") && !strings.HasPrefix(l, "[... ") {
						t.Errorf("got the line %q, want whole lines of the output", l)
					}
				}
			}
		})
	}
}

// TestFitWholeLines: whatever the budget, a cut keeps whole lines on both
// sides of the note when lines fit.
func TestFitWholeLines(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "entry %d of the list\n", i)
	}
	save, _ := saveTo(t)
	for budget := 200; budget < 220; budget++ {
		resp := envs.Limits{Budget: budget, Save: save}.Fit(envs.Response{Output: b.String()})
		for _, l := range strings.Split(strings.TrimSuffix(resp.Output, "\n"), "\n") {
			if !strings.HasPrefix(l, "entry ") && !strings.HasPrefix(l, "[... ") {
				t.Errorf("budget %d: got the line %q, want whole lines", budget, l)
			}
		}
	}
}

// TestFitSaveFails: when the output cannot be saved, it is returned whole,
// with a note saying why: nothing is lost.
func TestFitSaveFails(t *testing.T) {
	out := strings.Repeat("x y ", 10000)
	resp := envs.Limits{Budget: 100, Save: func(io.Reader) (string, error) { return "", errors.New("disk full") }}.Fit(envs.Response{Output: out})
	if !strings.HasPrefix(resp.Output, out) || !strings.Contains(resp.Output, "could not be saved to a file (disk full)") || resp.OutputFile != "" {
		t.Errorf("got %d bytes ending %q, want the whole output and a note", len(resp.Output), resp.Output[len(resp.Output)-100:])
	}
}

func TestSaveIn(t *testing.T) {
	dir := t.TempDir()
	path, err := envs.SaveIn(dir, "bash-*.txt", strings.NewReader("hello"))
	if err != nil || filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "bash-") {
		t.Fatalf("got %q, %v; want a new file in %s", path, err, dir)
	}
	if data, _ := os.ReadFile(path); string(data) != "hello" {
		t.Errorf("got %q, want hello", data)
	}
	if _, err := envs.SaveIn(filepath.Join(dir, "missing"), "x-*.txt", strings.NewReader("x")); err == nil {
		t.Error("in a missing directory: got no error, want one")
	}
}

func TestLimitsDue(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name    string
		limits  envs.Limits
		changed time.Time
		why     string
		next    time.Time
	}{
		{"quiet passed", envs.Limits{Quiet: time.Second}, now.Add(-2 * time.Second), "no new output for 1s", time.Time{}},
		{"quiet ahead", envs.Limits{Quiet: time.Second}, now, "", now.Add(time.Second)},
		{"until first", envs.Limits{Quiet: time.Minute, Until: now.Add(time.Second)}, now, "", now.Add(time.Second)},
		{"until passed", envs.Limits{Quiet: time.Minute, Until: now.Add(-time.Millisecond)}, now, "the time limit passed", time.Time{}},
		{"no quiet limit", envs.Limits{Quiet: -1}, now.Add(-time.Hour), "", time.Time{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			why, next := c.limits.Due(now, c.changed)
			if why != c.why || !next.Equal(c.next) {
				t.Errorf("got (%q, %v), want (%q, %v)", why, next, c.why, c.next)
			}
		})
	}
	l := envs.Limits{}.Or(envs.Defaults{Quiet: 5 * time.Second}, now)
	if l.Quiet != 5*time.Second || !l.Until.Equal(now.Add(envs.DefaultWait)) || l.Budget != envs.DefaultBudget || l.SaveLimit != envs.DefaultSaveLimit {
		t.Errorf("Or: got %+v, want the defaults filled in", l)
	}
}

// TestQueue: a waiter whose soft limit or context ends first comes back
// without the turn; a free turn is taken even past the soft limit.
func TestQueue(t *testing.T) {
	q := envs.NewQueue()
	if err := q.Wait(context.Background(), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := q.Wait(context.Background(), time.Now().Add(10*time.Millisecond)); !errors.Is(err, envs.ErrBusy) {
		t.Errorf("soft limit: got %v, want ErrBusy", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := q.Wait(ctx, time.Time{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: got %v, want DeadlineExceeded", err)
	}
	q.Done()
	if err := q.Wait(context.Background(), time.Now().Add(-time.Second)); err != nil {
		t.Errorf("a free turn, the soft limit passed: got %v, want the turn", err)
	}
	if r := envs.NotRun(envs.ErrBusy); !strings.HasPrefix(r.Output, "[Not run: an earlier command held the environment") {
		t.Errorf("NotRun(ErrBusy): got %q", r.Output)
	}
}
