package envtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// DefaultTimeout bounds each call without [WithTimeout].
const DefaultTimeout = 10 * time.Second

// settle is how long the suite lets a blocking command run before it looks
// at the environment. It is not a bound on anything: checks stay correct
// when the machine is slow, they only probe less.
const settle = 50 * time.Millisecond

// HugeSize is the length of the command text the HugeCommand check sends.
const HugeSize = 1 << 20

// config names commands in the environment's own syntax and bounds the
// suite's calls.
type config struct {
	Trivial  string
	Blocking string
	Timeout  time.Duration
	Phased   func(first, file, second string) string
	Question func(question string) string
	Flood    func(lines int) string
	Quiet    time.Duration // the factory's environments' default quiet limit; 0: unknown
	// OutputLimit is how many bytes of a command's output the factory's
	// environments keep in memory; 0: unknown.
	OutputLimit int

	// For the suite's own tests, which check it against fakes: the quiet
	// limit the checks set, and the most empty commands they send.
	quiet     time.Duration
	maxRounds int
}

// Option configures [Run].
type Option func(*config)

// WithBlocking names a command that runs until its context is cancelled,
// such as "sleep 600". Without it the Cancel check is skipped and the
// ConcurrentScreen check uses the trivial command.
func WithBlocking(command string) Option { return func(c *config) { c.Blocking = command } }

// WithPhased names a command that prints the line first, then waits until
// the file exists, then prints the line second and succeeds, such as
// `echo first; while [ ! -e file ]; do sleep 0.1; done; echo second` for a
// shell. It enables the checks of the soft limits (SoftLimit, Continue,
// Refused, Queue and, with [WithDefaultQuiet], DefaultLimit).
func WithPhased(f func(first, file, second string) string) Option {
	return func(c *config) { c.Phased = f }
}

// WithQuestion names a command that prints question (with no newline
// after it), reads one line of input and prints "got " and the line, such
// as `read -p 'question' x; echo "got $x"`. It enables the Input check.
func WithQuestion(f func(question string) string) Option {
	return func(c *config) { c.Question = f }
}

// WithFlood names a command that prints the lines "line 1" to "line n"
// and succeeds, such as `seq -f 'line %g' n`. It enables the Budget check.
func WithFlood(f func(n int) string) Option { return func(c *config) { c.Flood = f } }

// WithDefaultQuiet says that the factory's environments give control back
// after d without new output when a call sets no limits (their own
// option, set short for the test): the DefaultLimit check then runs the
// phased command through Execute, with no deadline, and wants it back
// still running.
func WithDefaultQuiet(d time.Duration) Option { return func(c *config) { c.Quiet = d } }

// WithOutputLimit says that the factory's environments keep at most n
// bytes of a command's output in memory (their own option, set small for
// the test, such as 64 KB): the WholeOutput check then has the flood
// command ([WithFlood]) print more than that, 1 MB at least.
func WithOutputLimit(n int) Option { return func(c *config) { c.OutputLimit = n } }

// WithTimeout bounds every call the suite makes into the environment
// (default [DefaultTimeout]).
func WithTimeout(d time.Duration) Option { return func(c *config) { c.Timeout = d } }

// Run runs every check against environments made by factory, each as a
// subtest (HugeCommand sends [HugeSize] bytes of command text). trivial is a command that succeeds quickly in the environment's
// own syntax, such as "true" for a shell or "pass" for Python. factory is
// called once per check with the subtest's t; the suite closes what it
// returns (when it is an [envs.Closer]) at the end of the check, so factory
// need not.
func Run(t *testing.T, factory func(t *testing.T) envs.Env, trivial string, opts ...Option) {
	t.Helper()
	cfg := config{Trivial: trivial}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.Trivial == "" {
		t.Fatal("envtest: the trivial command is empty; give a command that succeeds quickly")
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			s := &suite{cfg: cfg, tempDir: t.TempDir, setenv: t.Setenv, newEnv: func() envs.Env {
				env := factory(t)
				if env == nil {
					t.Fatal("envtest: factory returned nil")
				}
				t.Cleanup(func() { closeBounded(t, env, cfg.timeout()) })
				return env
			}}
			c.run(t, s)
		})
	}
}

func (c config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// reporter is the part of *testing.T the checks use. Checks return after
// Skipf and after any failure they cannot continue from, so a recorder that
// does not stop the goroutine works too.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
}

// suite is what a check gets: a way to make environments, a way to make
// temporary directories, a way to set an environment variable for the
// check, and the config.
type suite struct {
	cfg     config
	newEnv  func() envs.Env
	tempDir func() string
	setenv  func(key, value string)
}

type check struct {
	name string
	run  func(r reporter, s *suite)
}

var checks = []check{
	{"Screen", checkScreen},
	{"Trivial", checkTrivial},
	{"ConcurrentScreen", checkConcurrentScreen},
	{"Cancel", checkCancel},
	{"CloseTwice", checkCloseTwice},
	{"ExecuteAfterClose", checkExecuteAfterClose},
	{"HugeCommand", checkHugeCommand},
	{"EmptyCommand", checkEmptyCommand},
	{"SoftLimit", checkSoftLimit},
	{"DefaultLimit", checkDefaultLimit},
	{"Continue", checkContinue},
	{"Refused", checkRefused},
	{"Input", checkInput},
	{"Budget", checkBudget},
	{"WholeOutput", checkWholeOutput},
	{"Queue", checkQueue},
}

// bounded runs f on its own goroutine and waits at most timeout for its
// result. It reports a panic or a timeout as a failure naming what, and
// returns whether f returned normally. A timed-out f is left running; its
// result, when it comes, is dropped.
func bounded[T any](r reporter, timeout time.Duration, what string, f func() T) (T, bool) {
	r.Helper()
	type outcome struct {
		v     T
		panic any
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			o.panic = recover()
			done <- o
		}()
		o.v = f()
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var zero T
	select {
	case o := <-done:
		if o.panic != nil {
			r.Errorf("%s panicked: %v", what, o.panic)
			return zero, false
		}
		return o.v, true
	case <-t.C:
		r.Errorf("%s did not return within %v", what, timeout)
		return zero, false
	}
}

// executed is what Execute returned.
type executed struct {
	resp envs.Response
	err  error
}

// execute runs command with ctx under the suite's timeout.
func (s *suite) execute(r reporter, ctx context.Context, env envs.Env, command string) (envs.Response, error, bool) {
	r.Helper()
	e, ok := bounded(r, s.cfg.timeout(), fmt.Sprintf("Execute(%s)", describe(command)), func() executed {
		resp, err := env.Execute(ctx, command)
		return executed{resp, err}
	})
	return e.resp, e.err, ok
}

// blockingExecute runs command until ctx ends: for a
// [envs.LimitedExecutor], without a quiet limit, which would give control
// back before.
func blockingExecute(ctx context.Context, env envs.Env, command string) (envs.Response, error) {
	if le, ok := env.(envs.LimitedExecutor); ok {
		return le.ExecuteLimited(ctx, command, envs.Limits{Quiet: -1})
	}
	return env.Execute(ctx, command)
}

// screened is what Screen returned.
type screened struct {
	screen envs.Screen
	err    error
}

// screen calls Screen under the suite's timeout.
func (s *suite) screen(r reporter, env envs.Env) (envs.Screen, error, bool) {
	r.Helper()
	sc, ok := bounded(r, s.cfg.timeout(), "Screen()", func() screened {
		sc, err := env.Screen()
		return screened{sc, err}
	})
	return sc.screen, sc.err, ok
}

// finished waits, with empty commands, for a command that came back still
// running (an environment with a short default quiet limit, on a slow
// machine) to end.
func (s *suite) finished(r reporter, env envs.Env, resp envs.Response, err error) (envs.Response, error, bool) {
	r.Helper()
	for range s.cfg.rounds() {
		if err != nil || !resp.Running {
			return resp, err, true
		}
		var ok bool
		if resp, err, ok = s.execute(r, context.Background(), env, ""); !ok {
			return resp, err, false
		}
	}
	r.Errorf("after %d empty commands: got %s, want the command to end", s.cfg.rounds(), result(resp, err))
	return resp, err, false
}

// works checks that the trivial command succeeds, after what.
func (s *suite) works(r reporter, env envs.Env, after string) bool {
	r.Helper()
	resp, err, ok := s.execute(r, context.Background(), env, s.cfg.Trivial)
	if !ok {
		return false
	}
	if resp, err, ok = s.finished(r, env, resp, err); !ok {
		return false
	}
	if err != nil || !resp.Success {
		r.Errorf("after %s, Execute(%s): got %s, want success", after, describe(s.cfg.Trivial), result(resp, err))
		return false
	}
	return true
}

func checkScreen(r reporter, s *suite) {
	env := s.newEnv()
	sc, err, ok := s.screen(r, env)
	if !ok {
		return
	}
	if err != nil {
		r.Errorf("Screen(): got error %v, want none", err)
	}
	if sc.MaxLines < 0 {
		r.Errorf("Screen(): got MaxLines %d, want 0 (default) or more", sc.MaxLines)
	}
	if sum, isSum := env.(envs.Summarizer); isSum {
		line, ok := bounded(r, s.cfg.timeout(), "Summary()", sum.Summary)
		if !ok {
			return
		}
		if strings.TrimSpace(line) == "" || strings.ContainsAny(line, "\r\n") {
			r.Errorf("Summary(): got %q, want one non-empty line", line)
		}
	}
}

func checkTrivial(r reporter, s *suite) {
	env := s.newEnv()
	for i := range 2 {
		if !s.works(r, env, fmt.Sprintf("%d commands", i)) {
			return
		}
	}
}

func checkConcurrentScreen(r reporter, s *suite) {
	env := s.newEnv()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	command, rounds := s.cfg.Blocking, 1
	if command == "" {
		command, rounds = s.cfg.Trivial, 20
	}
	// The command runs unbounded here; the wait below bounds it.
	ran := make(chan any, 1)
	go func() {
		defer func() { ran <- recover() }()
		for range rounds {
			if _, err := blockingExecute(ctx, env, command); err != nil {
				panic(fmt.Sprintf("Execute(%s) failed: %v", describe(command), err))
			}
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex // guards failed
	failed := false
	deadline := time.Now().Add(settle)
	for range 4 {
		wg.Go(func() {
			for i := 0; i < 5 || time.Now().Before(deadline); i++ {
				if _, _, ok := s.screen(r, env); !ok {
					mu.Lock()
					failed = true
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if failed {
		return
	}
	if s.cfg.Blocking != "" {
		select {
		case p := <-ran:
			if p != nil {
				r.Errorf("%v; want it to block until its context is cancelled", p)
				return
			}
			r.Errorf("Execute(%s) returned before its context was cancelled; want it to block", describe(command))
			return
		default:
		}
		cancel()
	}
	t := time.NewTimer(s.cfg.timeout())
	defer t.Stop()
	select {
	case p := <-ran:
		if p != nil {
			r.Errorf("while screens were read: %v", p)
		}
	case <-t.C:
		r.Errorf("Execute(%s) did not return within %v", describe(command), s.cfg.timeout())
	}
}

func checkCancel(r reporter, s *suite) {
	if s.cfg.Blocking == "" {
		r.Skipf("envtest: no blocking command (WithBlocking); the environment has none")
		return
	}
	env := s.newEnv()
	cancelled := func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(settle, cancel)
		return ctx, cancel
	}
	deadline := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), settle)
	}
	already := func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	}
	for _, c := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{{"cancel", cancelled}, {"deadline", deadline}, {"already cancelled context", already}} {
		ctx, cancel := c.ctx()
		e, ok := bounded(r, s.cfg.timeout(), fmt.Sprintf("Execute(%s)", describe(s.cfg.Blocking)), func() executed {
			resp, err := blockingExecute(ctx, env, s.cfg.Blocking)
			return executed{resp, err}
		})
		resp, err := e.resp, e.err
		cancel()
		if !ok {
			return
		}
		if err != nil || resp.Success {
			r.Errorf("%s: Execute(%s): got %s, want a failed response saying it was interrupted", c.name, describe(s.cfg.Blocking), result(resp, err))
		}
		if !s.works(r, env, c.name) {
			return
		}
	}
}

func checkCloseTwice(r reporter, s *suite) {
	env := s.newEnv()
	c, isCloser := env.(envs.Closer)
	if !isCloser {
		r.Skipf("envtest: %T does not implement envs.Closer", env)
		return
	}
	first, ok := bounded(r, s.cfg.timeout(), "Close()", c.Close)
	if !ok {
		return
	}
	second, ok := bounded(r, s.cfg.timeout(), "second Close()", c.Close)
	if !ok {
		return
	}
	if first == nil && second != nil {
		r.Errorf("second Close(): got %v, want nil like the first", second)
	}
	if first != nil {
		r.Logf("Close(): %v", first)
	}
}

func checkExecuteAfterClose(r reporter, s *suite) {
	env := s.newEnv()
	c, isCloser := env.(envs.Closer)
	if !isCloser {
		r.Skipf("envtest: %T does not implement envs.Closer", env)
		return
	}
	if _, ok := bounded(r, s.cfg.timeout(), "Close()", c.Close); !ok {
		return
	}
	for _, command := range []string{s.cfg.Trivial, s.cfg.Blocking} {
		if command == "" {
			continue
		}
		resp, err, ok := s.execute(r, context.Background(), env, command)
		if !ok {
			return
		}
		if !errors.Is(err, envs.ErrClosed) {
			r.Errorf("Execute(%s) after Close: got %s, want an error wrapping envs.ErrClosed", describe(command), result(resp, err))
		}
	}
	s.screen(r, env)
}

func checkHugeCommand(r reporter, s *suite) {
	env := s.newEnv()
	line := strings.Repeat("x", 99) + "\n"
	for _, c := range []struct{ name, text string }{
		{"one line", strings.Repeat("x", HugeSize)},
		{"many lines", strings.Repeat(line, HugeSize/len(line))},
	} {
		resp, err, ok := s.execute(r, context.Background(), env, c.text)
		if !ok {
			return
		}
		if resp, err, ok = s.finished(r, env, resp, err); !ok {
			return
		}
		if err != nil {
			r.Errorf("%s: got error %v, want a response", c.name, err)
		}
		r.Logf("%s: response of %d bytes, success %v", c.name, len(resp.Output), resp.Success)
		if !s.works(r, env, "a huge command ("+c.name+")") {
			return
		}
	}
}

func checkEmptyCommand(r reporter, s *suite) {
	env := s.newEnv()
	for _, text := range []string{"", " ", "\n\n\t\n"} {
		resp, err, ok := s.execute(r, context.Background(), env, text)
		if !ok {
			return
		}
		if resp, err, ok = s.finished(r, env, resp, err); !ok {
			return
		}
		if err != nil {
			r.Errorf("Execute(%q): got error %v, want a response", text, err)
		}
		r.Logf("Execute(%q): %s", text, result(resp, err))
		if !s.works(r, env, fmt.Sprintf("Execute(%q)", text)) {
			return
		}
	}
}

// closeBounded closes env if it is a Closer, reporting a hang or a panic.
func closeBounded(r reporter, env envs.Env, timeout time.Duration) {
	if c, ok := env.(envs.Closer); ok {
		bounded(r, timeout, "Close() at cleanup", c.Close)
	}
}

// describe shortens a command for messages.
func describe(command string) string {
	if len(command) > 40 {
		return fmt.Sprintf("%q... (%d bytes)", command[:40], len(command))
	}
	return fmt.Sprintf("%q", command)
}

// result formats a response and error for messages, output shortened.
func result(resp envs.Response, err error) string {
	if err != nil {
		return fmt.Sprintf("error %v", err)
	}
	out := resp.Output
	if len(out) > 200 {
		out = out[:200] + "..."
	}
	return fmt.Sprintf("{Output: %q, Success: %v, Running: %v, Waiting: %v}", out, resp.Success, resp.Running, resp.Waiting)
}
