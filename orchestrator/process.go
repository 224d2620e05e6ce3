package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/procs"
	"github.com/unfold-dev/unfold/internal/term"
)

// ProcessSpec describes an environment served by an external process that
// speaks the process-environment protocol (docs/process-environments.md):
// one JSON request per line on its stdin, one JSON reply per line on its
// stdout.
type ProcessSpec struct {
	Name        string            // environment name
	File        string            // the spec file it came from, for messages; may be empty
	Executable  string            // a path, or a name looked up in PATH
	Args        []string          // arguments after the executable
	Dir         string            // working directory; empty: the current one
	Env         map[string]string // variables added to the inherited environment
	Description string            // one-line summary of the environment
	// Timeout is how long a call waits for a command at most before it
	// gives control back while the command runs on (0: [envs.DefaultWait];
	// negative: no bound). With Hard it interrupts the command instead.
	Timeout time.Duration
	// Hard makes Timeout interrupt the command, and makes it the most a
	// call may give a command: the call's own time limit, soft or hard,
	// interrupts it when it comes sooner.
	Hard   bool
	Quiet  time.Duration // control comes back after this long without output (0: [envs.DefaultQuiet]; negative: never)
	Budget int           // tokens a response's output may take (0: [envs.DefaultBudget]; negative: no bound)
	// Save keeps the whole output of a response cut to the budget or the
	// output limit and returns its name; nil means a new file in a
	// directory of the environment's own under the system's temporary
	// directory, removed by Close ([envs.Spool.Save]).
	Save      func(output io.Reader) (string, error)
	Resources procs.Limits // resource limits set on the process
	// OutputLimit is how many bytes of a command's output (what it sends
	// as output and in its reply) are kept in memory, head and tail; 0
	// means [envs.DefaultOutputLimit]. Past it the whole output goes to a
	// spool file (see [envs.Spool]), and the response names the file it
	// is saved in.
	OutputLimit int
	// StartCheck, when set, is called before every start of the process:
	// an error refuses the start, and the response gives it
	// ([WithoutSpecReload] sets it for spec files).
	StartCheck func() error
}

// Process timing defaults.
const (
	// processGrace is how long a process gets to answer after an interrupt,
	// and to exit after shutdown, before it is signalled harder.
	processGrace = 2 * time.Second
	// processScreenTimeout bounds a screen request.
	processScreenTimeout = 5 * time.Second
)

// Process is an environment backed by an external process. The process is
// started by the environment's first command (a screen starts nothing: until
// then the screen is the description); a process that died is started again
// by the next command, never by a screen, and that command's response says
// the earlier state was lost. Cancelling a
// command sends the process SIGINT and waits 2 seconds for its reply;
// a process that does not answer is killed (its state is lost).
type Process struct {
	spec          ProcessSpec
	spool         *envs.Spool // the whole output of commands past the output limit
	grace         time.Duration
	screenTimeout time.Duration
	maxLine       int

	// turn is held by a call for its whole run.
	turn *envs.Queue
	// run is held for a whole request and reply, so requests never
	// interleave on the pipe.
	run sync.Mutex

	// mu guards everything below.
	mu      sync.Mutex
	running *running // the command whose reply has not come, kept across calls
	child   *child
	started bool   // a process was started at least once
	stopped string // why the last process stopped, until the next start
	closed  bool
	last    envs.Screen // the last screen the process sent
	hasLast bool
}

var (
	_ envs.Env             = (*Process)(nil)
	_ envs.LimitedExecutor = (*Process)(nil)
	_ envs.Closer          = (*Process)(nil)
	_ envs.Summarizer      = (*Process)(nil)
)

// NewProcess returns a process environment for spec. Nothing starts until
// the environment is first used.
func NewProcess(spec ProcessSpec) (*Process, error) {
	if err := ValidName(spec.Name); err != nil {
		return nil, fmt.Errorf("orchestrator: new process: %w", err)
	}
	if spec.Executable == "" {
		return nil, fmt.Errorf("orchestrator: new process %s: empty executable", spec.Name)
	}
	if err := checkEnv(spec.Env); err != nil {
		return nil, fmt.Errorf("orchestrator: new process %s: env: %w", spec.Name, err)
	}
	if err := spec.Resources.Check(); err != nil {
		return nil, fmt.Errorf("orchestrator: new process %s: %w", spec.Name, err)
	}
	if spec.OutputLimit < 0 {
		return nil, fmt.Errorf("orchestrator: new process %s: output limit %d: use 0 for the default or a positive number of bytes", spec.Name, spec.OutputLimit)
	}
	return &Process{
		turn:          envs.NewQueue(),
		spec:          spec,
		spool:         envs.NewSpool("", 0),
		grace:         processGrace,
		screenTimeout: processScreenTimeout,
		maxLine:       DefaultMaxLineBytes,
	}, nil
}

// Summary returns the spec's description and whether the process runs.
func (p *Process) Summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	desc := p.spec.Description
	if desc == "" {
		desc = p.spec.Name
	}
	switch {
	case p.closed:
		return desc + " (closed)"
	case p.child != nil:
		return desc + " (ready)"
	case p.started:
		return desc + " (stopped)"
	}
	return desc + " (not started)"
}

// request is a line sent to the process.
type request struct {
	Type    string  `json:"type"`
	Command string  `json:"command,omitempty"`
	Text    *string `json:"text,omitempty"` // input: the line typed
	EOF     bool    `json:"eof,omitempty"`  // input: end of input instead
}

// reply is a line received from the process: a reply, or while a command
// runs, output ("output") or a request for input ("input").
type reply struct {
	Type     string  `json:"type"`
	Output   *string `json:"output"`
	Success  *bool   `json:"success"`
	Content  *string `json:"content"`
	MaxLines *int    `json:"max_lines"`
	Message  *string `json:"message"`
	Prompt   *string `json:"prompt"`
	Hidden   *bool   `json:"hidden"`
}

// Screen asks the process for its screen. While a command runs, it returns
// the last screen the process sent, marked as such.
func (p *Process) Screen() (envs.Screen, error) {
	if !p.run.TryLock() {
		return p.cached("[a command is running; this screen is from before it]"), nil
	}
	defer p.run.Unlock()
	p.mu.Lock()
	busy := p.running != nil
	p.mu.Unlock()
	if busy {
		return p.cached("[a command is running; this screen is from before it]"), nil
	}
	// A screen never starts the process, nor starts it again: only a
	// command does, so the command's response can say that the earlier
	// state was lost, and an environment nobody uses costs nothing.
	p.mu.Lock()
	if p.child != nil {
		if reason, dead := p.child.dead(); dead {
			p.child.cleanup()
			p.child = nil
			p.stopped = reason
		}
	}
	closed, c, started, stopped := p.closed, p.child, p.started, p.stopped
	p.mu.Unlock()
	switch {
	case closed:
		return p.cached("[closed]"), nil
	case c == nil && started:
		return p.cached("[the process stopped (" + stopped + "); it restarts on the next command]"), nil
	case c == nil:
		return p.cached("[not started; it starts with the first command]"), nil
	}
	req := request{Type: "screen"}
	if err := c.ask(req); err != nil {
		p.kill(c, "it broke the protocol")
		return envs.Screen{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.screenTimeout)
	defer cancel()
	rep, _, err := p.exchange(ctx, c, req, false)
	if err != nil {
		return envs.Screen{}, err
	}
	if rep.Type == "error" {
		return envs.Screen{}, fmt.Errorf("the process answered a screen request with an error: %s", term.Plain(*rep.Message))
	}
	if rep.Type != "screen" || rep.Content == nil {
		p.kill(c, "it broke the protocol")
		return envs.Screen{}, fmt.Errorf("the process answered a screen request with %s; want {\"type\":\"screen\",\"content\":\"...\"}. The process was stopped and restarts on the next command", describeReply(rep))
	}
	s := envs.Screen{Content: term.Plain(*rep.Content)}
	if rep.MaxLines != nil {
		s.MaxLines = *rep.MaxLines
	}
	p.mu.Lock()
	p.last, p.hasLast = s, true
	p.mu.Unlock()
	return s, nil
}

// cached returns the last screen with a note, or the description when the
// process never sent one.
func (p *Process) cached(note string) envs.Screen {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.last
	if !p.hasLast {
		s = envs.Screen{Content: p.spec.Description}
	}
	if s.Content != "" {
		s.Content += "\n"
	}
	s.Content += note
	return s
}

// Close asks the process to shut down, then escalates: stdin closed, SIGTERM,
// SIGKILL, 2 seconds apart. A command running meanwhile is cut off.
// Close is idempotent.
func (p *Process) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	c, busy := p.child, p.running != nil
	p.child, p.running = nil, nil
	p.mu.Unlock()
	var err error
	if c != nil {
		// Ask politely only when no request is in flight, so the request
		// cannot interleave with another on the pipe.
		if !busy && p.run.TryLock() {
			_ = c.send(request{Type: "shutdown"})
			p.run.Unlock()
		}
		err = c.stop(p.grace)
	}
	return errors.Join(err, p.spool.Close())
}

// ensure returns the running child, starting one if needed. note is set when
// an earlier process had stopped: its state was lost.
func (p *Process) ensure() (*child, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, "", envs.ErrClosed
	}
	if p.child != nil {
		if reason, dead := p.child.dead(); dead {
			p.child.cleanup()
			p.child = nil
			p.stopped = reason
		}
	}
	if p.child != nil {
		return p.child, "", nil
	}
	note := ""
	if p.started {
		note = fmt.Sprintf("[%s had stopped (%s); it was restarted and its earlier state was lost.]\n", p.spec.Name, p.stopped)
	}
	if p.spec.StartCheck != nil {
		if err := p.spec.StartCheck(); err != nil {
			if p.started {
				note = fmt.Sprintf("[%s had stopped (%s).]\n", p.spec.Name, p.stopped)
			}
			return nil, note, fmt.Errorf("%s was not started: %w", p.spec.Name, err)
		}
	}
	c, err := startChild(p.spec, p.maxLine)
	if err != nil {
		return nil, note, err
	}
	p.child, p.started, p.stopped = c, true, ""
	return c, note, nil
}

// kill stops c and forgets it, recording why.
func (p *Process) kill(c *child, why string) {
	c.killNow()
	c.cleanup()
	p.mu.Lock()
	if p.child == c {
		p.child = nil
		p.stopped = why
	}
	p.mu.Unlock()
}

// interruptError is a command cut off by its context whose process had to be
// killed; its text is the response the model sees.
type interruptError struct{ msg string }

func (e *interruptError) Error() string { return e.msg }

func interruptReason(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "the command timed out"
	}
	return "the command was cancelled"
}

// exchange sends req, which c was readied for with ask, and waits for one
// reply line. When ctx ends first and
// interrupt is set, the process gets SIGINT and the grace period to answer
// (interrupted reports that it did); otherwise, or when it does not answer,
// it is killed.
func (p *Process) exchange(ctx context.Context, c *child, req request, interrupt bool) (rep reply, interrupted bool, err error) {
	sent := make(chan error, 1)
	go func() { sent <- c.send(req) }()
	deadline := ctx.Done()
	var graceTimer <-chan time.Time
	for {
		select {
		case err := <-sent:
			sent = nil
			if err != nil {
				reason := p.waitReason(c)
				p.kill(c, reason)
				return reply{}, interrupted, fmt.Errorf("cannot send the request to the process (%s); it restarts on the next command%s", reason, c.stderrNote())
			}
		case m, ok := <-c.lines:
			if !ok {
				reason := p.waitReason(c)
				p.kill(c, reason)
				return reply{}, interrupted, fmt.Errorf("the process stopped before answering (%s); it restarts on the next command, and its state was lost%s", reason, c.stderrNote())
			}
			if m.tooLong > 0 {
				return reply{}, interrupted, fmt.Errorf("the process sent a reply of %d bytes, more than the limit of %d; the reply was discarded", m.tooLong, p.maxLine)
			}
			if !m.valid {
				p.kill(c, "it broke the protocol")
				return reply{}, interrupted, fmt.Errorf("the process wrote a line that is not a protocol reply: %q (write logs to stderr, not stdout). The process was stopped and restarts on the next command", clip(string(m.data)))
			}
			return m.rep, interrupted, nil
		case <-deadline:
			deadline = nil
			if !interrupt {
				p.kill(c, "it did not answer in time")
				return reply{}, interrupted, fmt.Errorf("the process did not answer a %s request within %v; it was stopped and restarts on the next command", req.Type, p.screenTimeout)
			}
			c.interrupt()
			interrupted = true
			graceTimer = time.After(p.grace)
		case <-graceTimer:
			p.kill(c, "it did not answer an interrupt")
			return reply{}, interrupted, &interruptError{msg: fmt.Sprintf("%s, and %s did not answer the interrupt within %v, so the process was stopped. It restarts on the next command; its state was lost.", capitalize(interruptReason(ctx)), p.spec.Name, p.grace)}
		}
	}
}

// waitReason describes how c ended, waiting briefly for its exit status.
func (p *Process) waitReason(c *child) string {
	select {
	case <-c.exited:
		return c.exitReason()
	case <-time.After(p.grace):
		return "it closed its output"
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func describeReply(r reply) string {
	b, _ := json.Marshal(r)
	return clip(string(b))
}
