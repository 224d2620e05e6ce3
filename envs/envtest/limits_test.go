package envtest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// Faults the scripted environment can have; each should fail one check of
// the soft limits.
const (
	ignoresQuiet    = "ignores the quiet limit"
	ignoresUntil    = "ignores the time limit"
	repeatsOutput   = "repeats the output on continue"
	endsWithoutNews = "ends without the output after the first response"
	usesRefused     = "uses text sent while not waiting"
	noWaiting       = "does not say it waits for input"
	notHidden       = "does not hide a secret"
	losesAnswer     = "drops the answer"
	ignoresBudget   = "ignores the budget"
	noOutputFile    = "does not name the saved output"
	losesSavedLines = "saves part of the output"
	ignoresQueue    = "makes queued commands wait past their deadline"
	noDefaultQuiet  = "has no default quiet limit"
	keepsNoSpool    = "keeps no more output than its memory limit"
	ignoresMemory   = "ignores its output limit"
	leavesSpool     = "leaves its spool files after Close"
	spoolsEarly     = "spools the output of a quick command"
)

// scripted is a LimitedExecutor for the suite's own tests, with one
// configurable fault. Its commands: "ok"; "block" (until its context
// ends); "phased <first> <file> <second>"; "ask <question>" (then a line
// of input); "flood <n>".
type scripted struct {
	fault string
	turn  *envs.Queue
	spool *envs.Spool // nil without an output limit
	limit int         // the output limit; 0: none

	mu      sync.Mutex // guards the fields below
	job     *scriptJob
	closed  bool
	changed time.Time // when the job's output last grew
}

// scriptJob is a command running on its own goroutine.
type scriptJob struct {
	out     strings.Builder // all of its output
	shown   int             // how much of out was returned
	waiting string          // its question, while it waits for input
	input   chan *string    // a line of input; nil for end of input
	cancel  context.CancelFunc
	done    bool
	success bool
}

var _ envs.LimitedExecutor = (*scripted)(nil)

func newScripted(fault string, limit int) *scripted {
	f := &scripted{fault: fault, turn: envs.NewQueue(), limit: limit}
	if limit > 0 {
		f.spool = envs.NewSpool("", 0)
	}
	return f
}

func (f *scripted) Screen() (envs.Screen, error) { return envs.Screen{Content: "scripted"}, nil }

func (f *scripted) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if f.job != nil {
		f.job.cancel()
	}
	if f.fault == leavesSpool {
		return nil
	}
	return f.spool.Close()
}

func (f *scripted) Execute(ctx context.Context, command string) (envs.Response, error) {
	return f.ExecuteLimited(ctx, command, envs.Limits{})
}

func (f *scripted) ExecuteLimited(ctx context.Context, command string, limits envs.Limits) (envs.Response, error) {
	def := envs.Defaults{Quiet: 100 * time.Millisecond}
	if f.fault == noDefaultQuiet {
		def.Quiet = -1
	}
	limits = limits.Or(def, time.Now())
	until := limits.Until
	if f.fault == ignoresQueue {
		until = time.Time{}
	}
	if err := ctx.Err(); err != nil {
		return envs.NotRun(err), nil
	}
	if err := f.turn.Wait(ctx, until); err != nil {
		return envs.NotRun(err), nil
	}
	defer f.turn.Done()
	f.mu.Lock()
	j, closed := f.job, f.closed
	f.mu.Unlock()
	if closed {
		return envs.Response{}, envs.ErrClosed
	}
	var resp envs.Response
	switch {
	case j == nil && (envs.IsInterrupt(command) || envs.IsEndOfInput(command)):
		return envs.Response{Output: "nothing runs", Success: true}, nil
	case j == nil:
		resp = f.wait(ctx, f.start(command), limits)
	case command == "":
		resp = f.wait(ctx, j, limits)
	case envs.IsInterrupt(command):
		f.mu.Lock()
		j.waiting = "" // no more
		f.mu.Unlock()
		j.cancel()
		resp = f.wait(ctx, j, limits)
	default:
		f.mu.Lock()
		waiting := j.waiting != ""
		if !waiting && f.fault == usesRefused {
			j.out.WriteString(command + "\n")
		}
		f.mu.Unlock()
		if !waiting {
			return envs.Response{Output: "refused", Running: true}, nil
		}
		line := &command
		if envs.IsEndOfInput(command) {
			line = nil
		}
		if f.fault != losesAnswer {
			f.mu.Lock()
			j.waiting = "" // answered
			f.mu.Unlock()
			j.input <- line
		}
		resp = f.wait(ctx, j, limits)
	}
	if f.fault == ignoresBudget {
		return resp, nil
	}
	resp = f.spool.Fit(limits, resp)
	switch f.fault {
	case noOutputFile:
		resp.OutputFile = ""
	case losesSavedLines:
		if resp.OutputFile != "" {
			_ = os.WriteFile(resp.OutputFile, []byte("line 1\n"), 0o600)
		}
	}
	return resp, nil
}

// start runs command on its own goroutine.
func (f *scripted) start(command string) *scriptJob {
	ctx, cancel := context.WithCancel(context.Background())
	j := &scriptJob{input: make(chan *string, 1), cancel: cancel}
	f.mu.Lock()
	f.job, f.changed = j, time.Now()
	f.mu.Unlock()
	print := func(s string) {
		f.mu.Lock()
		j.out.WriteString(s)
		f.changed = time.Now()
		f.mu.Unlock()
	}
	end := func(ok bool) {
		f.mu.Lock()
		j.done, j.success = true, ok
		f.mu.Unlock()
	}
	word, arg, _ := strings.Cut(command, " ")
	go func() {
		switch word {
		case "ok":
			print("ok\n")
			end(true)
		case "block":
			<-ctx.Done()
			print("interrupted\n")
			end(false)
		case "phased":
			a := strings.Fields(arg)
			print(a[0] + "\n")
			for {
				if _, err := os.Stat(a[1]); err == nil {
					print(a[2] + "\n")
					end(true)
					return
				}
				select {
				case <-ctx.Done():
					end(false)
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		case "ask":
			print(arg)
			f.mu.Lock()
			j.waiting = strings.TrimSpace(arg)
			f.mu.Unlock()
			select {
			case line := <-j.input:
				f.mu.Lock()
				j.waiting = ""
				f.mu.Unlock()
				if line == nil {
					print("\nend of input\n")
					end(false)
					return
				}
				print("\ngot " + *line + "\n")
				end(true)
			case <-ctx.Done():
				end(false)
			}
		case "flood":
			n, _ := strconv.Atoi(arg)
			var b strings.Builder
			for i := 1; i <= n; i++ {
				fmt.Fprintf(&b, "line %d\n", i)
			}
			print(b.String())
			end(true)
		default:
			print("unknown\n")
			end(false)
		}
	}()
	return j
}

// wait polls j until it ends, waits for input, or a limit passes.
func (f *scripted) wait(ctx context.Context, j *scriptJob, limits envs.Limits) envs.Response {
	start := time.Now()
	for {
		f.mu.Lock()
		done, waiting, changed := j.done, j.waiting, f.changed
		f.mu.Unlock()
		if changed.Before(start) {
			changed = start // the quiet limit counts from the call
		}
		why, _ := limits.Due(time.Now(), changed)
		switch {
		case f.fault == ignoresQuiet && strings.HasPrefix(why, "no new output"):
			why = ""
		case f.fault == ignoresUntil && why == "the time limit passed":
			why = ""
		}
		switch {
		case done:
			f.mu.Lock()
			f.job = nil
			f.mu.Unlock()
			out := f.take(j)
			if f.fault == endsWithoutNews {
				out = ""
			}
			return envs.Response{Output: out, Success: j.success}
		case waiting != "" && f.fault != noWaiting:
			hidden := envs.SecretPrompt(waiting) && f.fault != notHidden
			return envs.Response{Output: f.take(j), Running: true, Waiting: true, Prompt: waiting, Hidden: hidden}
		case why != "":
			return envs.Response{Output: f.take(j) + envs.RunningNote(why), Running: true}
		case ctx.Err() != nil:
			j.cancel()
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// take returns the output not returned yet, through an envs.Output
// with the output limit.
func (f *scripted) take(j *scriptJob) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := j.out.String()
	if f.fault != repeatsOutput {
		out = out[j.shown:]
		j.shown += len(out)
	}
	if f.limit == 0 || f.fault == ignoresMemory {
		return out
	}
	o := f.spool.Output(f.limit)
	switch f.fault {
	case keepsNoSpool:
		o = envs.NewOutput(f.limit)
	case spoolsEarly:
		o = f.spool.Output(2)
	}
	_, _ = o.Write([]byte(out))
	return o.String()
}

// limitedConfig is fullConfig with the commands of the soft limits' checks.
var limitedConfig = config{
	Trivial: "ok", Blocking: "block", Timeout: 2 * time.Second,
	Phased:      func(first, file, second string) string { return "phased " + first + " " + file + " " + second },
	Question:    func(q string) string { return "ask " + q },
	Flood:       func(n int) string { return "flood " + strconv.Itoa(n) },
	Quiet:       100 * time.Millisecond,
	OutputLimit: 4 << 10,
	quiet:       30 * time.Millisecond, maxRounds: 50,
}

// runScripted runs the named check on a scripted environment with fault.
func runScripted(t *testing.T, name, fault string) *recorder {
	t.Helper()
	rec := &recorder{}
	var made []*scripted
	s := &suite{cfg: limitedConfig, tempDir: t.TempDir, setenv: t.Setenv, newEnv: func() envs.Env {
		e := newScripted(fault, limitedConfig.OutputLimit)
		made = append(made, e)
		return e
	}}
	defer func() {
		for _, e := range made {
			e.Close()
		}
	}()
	for _, c := range checks {
		if c.name == name {
			c.run(rec, s)
			return rec
		}
	}
	t.Fatalf("no check named %s", name)
	return nil
}

// TestLimitChecksCatchFaults: each check of the soft limits fails on an
// environment with the fault it is there for.
func TestLimitChecksCatchFaults(t *testing.T) {
	for _, tt := range []struct{ check, fault string }{
		{"SoftLimit", ignoresQuiet},
		{"SoftLimit", ignoresUntil},
		{"DefaultLimit", noDefaultQuiet},
		{"Continue", repeatsOutput},
		{"Continue", endsWithoutNews},
		{"Refused", usesRefused},
		{"Input", noWaiting},
		{"Input", notHidden},
		{"Input", losesAnswer},
		{"Budget", ignoresBudget},
		{"Budget", noOutputFile},
		{"Budget", losesSavedLines},
		{"Queue", ignoresQueue},
		{"WholeOutput", keepsNoSpool},
		{"WholeOutput", ignoresMemory},
		{"WholeOutput", leavesSpool},
		{"WholeOutput", spoolsEarly},
	} {
		t.Run(tt.check+"/"+tt.fault, func(t *testing.T) {
			rec := runScripted(t, tt.check, tt.fault)
			if len(rec.errors) == 0 {
				t.Errorf("got no failure from %s for an environment that %s, want one", tt.check, tt.fault)
			}
			for _, e := range rec.errors {
				t.Logf("reported: %s", e)
			}
		})
	}
}

// TestLimitChecksPassGoodEnv: every check passes on the scripted
// environment without a fault.
func TestLimitChecksPassGoodEnv(t *testing.T) {
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			rec := runScripted(t, c.name, good)
			if len(rec.errors) > 0 || rec.skipped {
				t.Errorf("got failures %q (skipped %v), want none", rec.errors, rec.skipped)
			}
		})
	}
}

// plain is an environment that shows output only when a command ends (not
// a LimitedExecutor): the checks run it through envs.Background. Its
// commands are the scripted environment's, but "ask".
type plain struct{}

func (plain) Screen() (envs.Screen, error) { return envs.Screen{Content: "plain"}, nil }

func (plain) Execute(ctx context.Context, command string) (envs.Response, error) {
	word, arg, _ := strings.Cut(command, " ")
	switch word {
	case "ok":
		return envs.Response{Output: "ok", Success: true}, nil
	case "block":
		<-ctx.Done()
		return envs.Response{Output: "interrupted"}, nil
	case "phased":
		a := strings.Fields(arg)
		for {
			if _, err := os.Stat(a[1]); err == nil {
				return envs.Response{Output: a[0] + "\n" + a[2], Success: true}, nil
			}
			select {
			case <-ctx.Done():
				return envs.Response{Output: a[0] + "\ninterrupted"}, nil
			case <-time.After(5 * time.Millisecond):
			}
		}
	case "flood":
		n, _ := strconv.Atoi(arg)
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return envs.Response{Output: b.String(), Success: true}, nil
	}
	return envs.Response{Output: "unknown"}, nil
}

// TestLimitChecksPassBackground: an environment that is not a
// LimitedExecutor passes the checks of the soft limits through
// envs.Background (but Input: it takes no input, and DefaultLimit, which
// needs the environment's own default).
func TestLimitChecksPassBackground(t *testing.T) {
	for _, name := range []string{"SoftLimit", "Continue", "Refused", "Budget", "Queue"} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			cfg := limitedConfig
			cfg.Question, cfg.Quiet = nil, 0
			s := &suite{cfg: cfg, tempDir: t.TempDir, setenv: t.Setenv, newEnv: func() envs.Env { return plain{} }}
			for _, c := range checks {
				if c.name == name {
					c.run(rec, s)
				}
			}
			if len(rec.errors) > 0 || rec.skipped {
				t.Errorf("got failures %q (skipped %v), want none", rec.errors, rec.skipped)
			}
		})
	}
}
