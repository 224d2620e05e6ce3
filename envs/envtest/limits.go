package envtest

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/tokens"
)

// defaultQuietLimit is the quiet limit the checks of the soft limits set,
// and the soft limits they set otherwise. Like settle, it bounds nothing:
// on a slow machine control may come back before a command printed, and
// the checks then wait on with empty commands.
const defaultQuietLimit = 300 * time.Millisecond

// defaultRounds bounds the empty commands a check sends to wait for
// something, each of which returns within its quiet limit.
const defaultRounds = 400

// quietLimit is the quiet limit the checks set (shorter in the suite's own
// tests).
func (c config) quietLimit() time.Duration { return cmp.Or(c.quiet, defaultQuietLimit) }

// rounds is how many empty commands a check sends at most to wait for
// something.
func (c config) rounds() int { return cmp.Or(c.maxRounds, defaultRounds) }

// limited returns env as a [envs.LimitedExecutor], wrapping it in
// [envs.Background] when it is not one, and whether it shows output while
// a command runs (Background does not).
func limited(env envs.Env) (envs.LimitedExecutor, bool) {
	if le, ok := env.(envs.LimitedExecutor); ok {
		return le, true
	}
	return envs.NewBackground(env, envs.Defaults{}), false
}

// quiet returns limits that give control back after the quiet limit
// without new output.
func (s *suite) quiet() envs.Limits { return envs.Limits{Quiet: s.cfg.quietLimit()} }

// limitedRun runs command under limits and the suite's timeout; it
// reports an error return and returns false then.
func (s *suite) limitedRun(r reporter, ctx context.Context, le envs.LimitedExecutor, command string, limits envs.Limits) (envs.Response, bool) {
	r.Helper()
	e, ok := bounded(r, s.cfg.timeout(), fmt.Sprintf("ExecuteLimited(%s)", describe(command)), func() executed {
		resp, err := le.ExecuteLimited(ctx, command, limits)
		return executed{resp, err}
	})
	if !ok {
		return envs.Response{}, false
	}
	if e.err != nil {
		r.Errorf("ExecuteLimited(%s): got error %v, want a response", describe(command), e.err)
		return envs.Response{}, false
	}
	return e.resp, true
}

// waitFor sends empty commands while resp says the command runs and done
// is false, and returns the last response and the output of every
// response, resp's included.
func (s *suite) waitFor(r reporter, le envs.LimitedExecutor, resp envs.Response, done func(resp envs.Response, all string) bool) (envs.Response, string, bool) {
	r.Helper()
	all := resp.Output
	for range s.cfg.rounds() {
		if !resp.Running || done(resp, all) {
			return resp, all, true
		}
		var ok bool
		if resp, ok = s.limitedRun(r, context.Background(), le, "", s.quiet()); !ok {
			return resp, all, false
		}
		all += "\n" + resp.Output
	}
	r.Errorf("after %d empty commands: got %s, want the command to get on", s.cfg.rounds(), result(resp, nil))
	return resp, all, false
}

// phased starts the phased command and waits until it has printed its
// first line; it returns the trigger file, the line it waits to print and
// what it printed so far.
func (s *suite) phased(r reporter, le envs.LimitedExecutor, streams bool, limits envs.Limits) (file, second, all string, ok bool) {
	r.Helper()
	file = filepath.Join(s.tempDir(), "go")
	first, second := "first-7Q2", "second-9Z4"
	cmd := s.cfg.Phased(first, file, second)
	resp, ok := s.limitedRun(r, context.Background(), le, cmd, limits)
	if !ok {
		return "", "", "", false
	}
	if !streams {
		if !resp.Running {
			r.Errorf("the phased command: got %s, want control back while it waits for its file", result(resp, nil))
			return "", "", "", false
		}
		return file, second, resp.Output, true
	}
	resp, all, ok = s.waitFor(r, le, resp, func(_ envs.Response, all string) bool { return strings.Contains(all, first) })
	if !ok {
		return "", "", "", false
	}
	switch {
	case !resp.Running:
		r.Errorf("the phased command ended before its file existed: got %s, want it running", result(resp, nil))
		return "", "", "", false
	case strings.Contains(all, second):
		r.Errorf("the phased command printed %q before its file existed: got %q", second, all)
		return "", "", "", false
	case resp.Success:
		r.Errorf("a response with Running set: got Success true, want false until the command ends")
	}
	return file, second, all, true
}

// trigger creates the file the phased command waits for.
func trigger(r reporter, file string) bool {
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		r.Errorf("creating the trigger file: %v", err)
		return false
	}
	return true
}

// interrupt sends the interrupt key and waits for the command to end.
func (s *suite) interrupt(r reporter, le envs.LimitedExecutor) bool {
	r.Helper()
	resp, ok := s.limitedRun(r, context.Background(), le, envs.Interrupt, s.quiet())
	if !ok {
		return false
	}
	if resp, _, ok = s.waitFor(r, le, resp, func(envs.Response, string) bool { return false }); !ok {
		return false
	}
	if resp.Success {
		r.Errorf("after %s: got %s, want a failed response", envs.Interrupt, result(resp, nil))
		return false
	}
	return true
}

func checkSoftLimit(r reporter, s *suite) {
	if s.cfg.Phased == nil {
		r.Skipf("envtest: no phased command (WithPhased)")
		return
	}
	le, streams := limited(s.newEnv())
	for _, c := range []struct {
		name   string
		limits func() envs.Limits
	}{
		{"quiet", s.quiet},
		{"until", func() envs.Limits { return envs.Limits{Quiet: -1, Until: time.Now().Add(s.cfg.quietLimit())} }},
	} {
		if _, _, _, ok := s.phased(r, le, streams, c.limits()); !ok {
			r.Errorf("%s: the soft limit did not give control back with the output so far", c.name)
			return
		}
		if !s.interrupt(r, le) {
			return
		}
		if !s.limitedWorks(r, le, c.name+", then "+envs.Interrupt) {
			return
		}
	}
}

// limitedWorks checks that the trivial command succeeds through le.
func (s *suite) limitedWorks(r reporter, le envs.LimitedExecutor, after string) bool {
	r.Helper()
	resp, ok := s.limitedRun(r, context.Background(), le, s.cfg.Trivial, s.quiet())
	if !ok {
		return false
	}
	resp, _, ok = s.waitFor(r, le, resp, func(envs.Response, string) bool { return false })
	if ok && !resp.Success {
		r.Errorf("after %s, ExecuteLimited(%s): got %s, want success", after, describe(s.cfg.Trivial), result(resp, nil))
		return false
	}
	return ok
}

func checkDefaultLimit(r reporter, s *suite) {
	if s.cfg.Phased == nil || s.cfg.Quiet == 0 {
		r.Skipf("envtest: no phased command (WithPhased) or no default quiet limit (WithDefaultQuiet)")
		return
	}
	env := s.newEnv()
	le, _ := limited(env)
	file := filepath.Join(s.tempDir(), "go")
	// Execute, with no deadline and no limits: the environment's own.
	resp, err, ok := s.execute(r, context.Background(), env, s.cfg.Phased("first", file, "second"))
	if !ok {
		return
	}
	if err != nil || !resp.Running {
		r.Errorf("Execute of a command that waits, with no deadline: got %s, want control back with Running set", result(resp, err))
		return
	}
	if !trigger(r, file) {
		return
	}
	if resp, _, ok = s.waitFor(r, le, resp, func(envs.Response, string) bool { return false }); ok && !resp.Success {
		r.Errorf("once its file existed: got %s, want the command to succeed", result(resp, nil))
	}
}

func checkContinue(r reporter, s *suite) {
	if s.cfg.Phased == nil {
		r.Skipf("envtest: no phased command (WithPhased)")
		return
	}
	le, streams := limited(s.newEnv())
	file, second, before, ok := s.phased(r, le, streams, s.quiet())
	if !ok || !trigger(r, file) {
		return
	}
	resp, ok := s.limitedRun(r, context.Background(), le, "", s.quiet())
	if !ok {
		return
	}
	resp, after, ok := s.waitFor(r, le, resp, func(envs.Response, string) bool { return false })
	if !ok {
		return
	}
	if !resp.Success || resp.Running {
		r.Errorf("the end of a continued command: got %s, want success and Running false", result(resp, nil))
	}
	if n := strings.Count(before+after, second); n != 1 {
		r.Errorf("the continued command's output: got %q then %q, with %q %d times, want it once", before, after, second, n)
	}
	if streams && strings.Contains(after, "first-7Q2") {
		r.Errorf("after the first response: got %q, want only the output new since it", after)
	}
	s.limitedWorks(r, le, "a continued command")
}

func checkRefused(r reporter, s *suite) {
	if s.cfg.Phased == nil {
		r.Skipf("envtest: no phased command (WithPhased)")
		return
	}
	le, streams := limited(s.newEnv())
	file, _, _, ok := s.phased(r, le, streams, s.quiet())
	if !ok {
		return
	}
	const text = "refused-8K1"
	resp, ok := s.limitedRun(r, context.Background(), le, text, s.quiet())
	if !ok {
		return
	}
	if !resp.Running || resp.Success {
		r.Errorf("text sent while a command runs and does not wait for input: got %s, want it refused with Running set", result(resp, nil))
	}
	if !trigger(r, file) {
		return
	}
	_, all, ok := s.waitFor(r, le, resp, func(envs.Response, string) bool { return false })
	if !ok {
		return
	}
	resp, ok = s.limitedRun(r, context.Background(), le, s.cfg.Trivial, s.quiet())
	if !ok {
		return
	}
	if strings.Contains(all+resp.Output, text) {
		r.Errorf("refused text: got %q in the output, want it not used", all+resp.Output)
	}
}

func checkInput(r reporter, s *suite) {
	if s.cfg.Question == nil {
		r.Skipf("envtest: no command that asks a question (WithQuestion)")
		return
	}
	le, _ := limited(s.newEnv())
	for _, c := range []struct {
		question, answer string
		hidden           bool
		key              string // the key command sent instead of an answer
	}{
		{question: "Your name? ", answer: "hello-4T8"},
		{question: "Password: ", answer: "s3cret-6P1", hidden: true},
		{question: "Go on? [y/N] ", key: envs.EndOfInput},
		{question: "Still there? ", key: envs.Interrupt},
	} {
		resp, ok := s.limitedRun(r, context.Background(), le, s.cfg.Question(c.question), s.quiet())
		if !ok {
			return
		}
		if resp, _, ok = s.waitFor(r, le, resp, func(resp envs.Response, _ string) bool { return resp.Waiting }); !ok {
			return
		}
		q := strings.TrimSpace(c.question)
		if !resp.Running || !resp.Waiting || !strings.Contains(resp.Prompt, q) || resp.Hidden != c.hidden {
			r.Errorf("a command that asks %q: got %s with Prompt %q, Hidden %v; want Running and Waiting, the question as the prompt, Hidden %v",
				c.question, result(resp, nil), resp.Prompt, resp.Hidden, c.hidden)
			return
		}
		if c.key != "" {
			if resp, ok = s.limitedRun(r, context.Background(), le, c.key, s.quiet()); !ok {
				return
			}
			if resp, _, ok = s.waitFor(r, le, resp, func(envs.Response, string) bool { return false }); !ok {
				return
			}
			if !s.limitedWorks(r, le, c.key+" to a command waiting for input") {
				return
			}
			continue
		}
		if resp, ok = s.limitedRun(r, context.Background(), le, c.answer, s.quiet()); !ok {
			return
		}
		resp, all, ok := s.waitFor(r, le, resp, func(envs.Response, string) bool { return false })
		if !ok {
			return
		}
		if !resp.Success || !strings.Contains(all, "got "+c.answer) {
			r.Errorf("after the answer %q: got %s (all output %q), want success and %q", c.answer, result(resp, nil), all, "got "+c.answer)
		}
	}
}

func checkBudget(r reporter, s *suite) {
	if s.cfg.Flood == nil {
		r.Skipf("envtest: no command that prints many lines (WithFlood)")
		return
	}
	le, _ := limited(s.newEnv())
	const lines, budget = 3000, 400
	limits := envs.Limits{Quiet: -1, Budget: budget, Save: saveIn(s.tempDir(), "out")}
	resp, ok := s.limitedRun(r, context.Background(), le, s.cfg.Flood(lines), limits)
	if !ok {
		return
	}
	if resp.Running {
		r.Errorf("a flood of output with no quiet limit: got Running, want the command to end")
		return
	}
	if got := tokens.Estimate.Count(resp.Output); got > budget {
		r.Errorf("a response under a budget of %d tokens: got %d tokens", budget, got)
	}
	last := fmt.Sprintf("line %d", lines)
	if !strings.HasPrefix(resp.Output, "line 1\n") || !strings.Contains(resp.Output, last) {
		r.Errorf("a cut response: got %q, want its head (line 1) and its tail (%s)", resp.Output, last)
	}
	if resp.OutputFile == "" {
		r.Errorf("a cut response: got no OutputFile, want the file holding the whole output")
		return
	}
	data, err := os.ReadFile(resp.OutputFile)
	if err != nil {
		r.Errorf("the saved output: %v", err)
		return
	}
	if !strings.Contains(resp.Output, resp.OutputFile) {
		r.Errorf("a cut response: got %q, want it to name the file %s", resp.Output, resp.OutputFile)
	}
	saved := make(map[string]bool)
	for _, l := range strings.Split(string(data), "\n") {
		saved[l] = true
	}
	for i := 1; i <= lines; i++ {
		if !saved[fmt.Sprintf("line %d", i)] {
			r.Errorf("the saved output has no line %d: got %d bytes, want every line", i, len(data))
			return
		}
	}
	s.limitedWorks(r, le, "a cut response")
}

func checkQueue(r reporter, s *suite) {
	if s.cfg.Phased == nil {
		r.Skipf("envtest: no phased command (WithPhased)")
		return
	}
	le, _ := limited(s.newEnv())
	file := filepath.Join(s.tempDir(), "go")
	held := make(chan envs.Response, 1)
	go func() {
		// Never quiet, so this call holds the environment until the file
		// exists.
		resp, _ := le.ExecuteLimited(context.Background(), s.cfg.Phased("first", file, "second"), envs.Limits{Quiet: -1, Until: time.Now().Add(s.cfg.timeout())})
		held <- resp
	}()
	refusals := 0
	for range s.cfg.rounds() {
		refusals = 0
		// A hard deadline, then a soft one, each counted from arrival.
		for _, limits := range []func() (context.Context, context.CancelFunc, envs.Limits){
			func() (context.Context, context.CancelFunc, envs.Limits) {
				ctx, cancel := context.WithTimeout(context.Background(), s.cfg.quietLimit())
				return ctx, cancel, envs.Limits{}
			},
			func() (context.Context, context.CancelFunc, envs.Limits) {
				return context.Background(), func() {}, envs.Limits{Until: time.Now().Add(s.cfg.quietLimit())}
			},
		} {
			ctx, cancel, l := limits()
			resp, ok := s.limitedRun(r, ctx, le, s.cfg.Trivial, l)
			cancel()
			if !ok {
				r.Errorf("a command queued behind a busy one did not come back at its own deadline")
				return
			}
			if !resp.Success && !resp.Running {
				refusals++
			}
		}
		if refusals == 2 {
			break
		}
		time.Sleep(settle)
	}
	select {
	case resp := <-held:
		r.Errorf("the command holding the environment returned before its file existed: got %s", result(resp, nil))
		return
	default:
	}
	if refusals < 2 {
		r.Errorf("commands queued behind a busy one: got %d not run, want both the hard and the soft deadline to send them back", refusals)
	}
	if !trigger(r, file) {
		return
	}
	resp, ok := bounded(r, s.cfg.timeout(), "the command holding the environment", func() envs.Response { return <-held })
	if ok && !resp.Success {
		r.Errorf("the command holding the environment, once its file existed: got %s, want success", result(resp, nil))
	}
}
