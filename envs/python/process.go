package python

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/unfold-dev/unfold/internal/procs"
)

// driverSource is the program the interpreter runs. The bootstrap reads it
// as the first line of fd 3 (JSON-encoded) and compiles it under the file
// name its tracebacks filter out.
//
//go:embed driver.py
var driverSource string

// bootstrap is the -c program: it reads the driver from fd 3 and runs it in
// a namespace of its own, handing it the open request stream.
const bootstrap = "import os,json;_r=os.fdopen(3,'rb',65536);" +
	"exec(compile(json.loads(_r.readline()),'<unfold-driver>','exec')," +
	"{'__name__':'__unfold_driver__','_requests':_r})"

const (
	// startTimeout bounds how long the interpreter may take to report ready.
	startTimeout = 30 * time.Second
	// maxReply bounds one reply line from the driver; replies hold at most
	// 100 short variable entries, so a longer line is a broken driver.
	maxReply = 1 << 20
	// stopStep is how long Close waits at each rung of its ladder: end of
	// input, SIGTERM, SIGKILL.
	stopStep = time.Second
)

// request is one line sent to the driver: a cell to run (Code), or, while
// one runs and waits for input, a line of input (Input) or end of input
// (EOF). ID ties the line to the cell.
type request struct {
	ID    string  `json:"id"`
	Code  *string `json:"code,omitempty"`
	Input *string `json:"input,omitempty"`
	EOF   bool    `json:"eof,omitempty"`
}

// reply is the driver's answer to a request, its ready message, or its
// request for a line of input.
type reply struct {
	// Status is "ready", "ok", "error", "interrupted" (KeyboardInterrupt),
	// "exit" (SystemExit), "input" (the cell waits for a line of input) or
	// "protocol" (a request it could not read).
	Status   string          `json:"status"`
	ID       *string         `json:"id"`  // the request's; null in the ready message
	PID      int             `json:"pid"` // the driver's process ID
	Success  bool            `json:"success"`
	ExitCode json.RawMessage `json:"exit_code"` // SystemExit's code: kept as sent, so no value breaks the reply
	Cwd      string          `json:"cwd"`
	Vars     [][2]string     `json:"vars"`
	Error    string          `json:"error"`
	Prompt   string          `json:"prompt"` // with "input": what the cell asked
	Hidden   bool            `json:"hidden"` // with "input": asked with getpass
	Forks    int             `json:"forks"`  // processes the cell forked
	// Restored lists the standard streams the cell left closed or
	// redirected, and the sys.stdout or sys.stderr it replaced with
	// something that does not reach the session, which the driver put
	// back, and a sys.stdin it closed, which the driver replaced.
	Restored []restored `json:"restored"`
}

// restored is a standard stream (fd 1 or 2) a cell closed or redirected:
// To is where it pointed (a path, "pipe:[...]", ...), nil when closed. Or,
// with Stream ("stdout", "stderr"), the sys object a cell replaced (How
// "replaced": To names what was in its place, a file's name, "a StringIO",
// "None") or closed or detached (How "closed"); sys.stdin only closed.
type restored struct {
	FD     int     `json:"fd"`
	Stream string  `json:"stream"`
	To     *string `json:"to"`
	How    string  `json:"how"`
}

// note says what happened to the stream, in the words bash uses for a
// shell whose streams were redirected.
func (r restored) note() string {
	if r.Stream == "stdin" {
		return "The code closed sys.stdin, so nothing could be read from it any more. A new sys.stdin reading this session's input was put in its place; variables and imports are kept."
	}
	if r.Stream != "" && r.How == "closed" {
		return fmt.Sprintf("The code closed sys.%s (or detached its buffer), so nothing could be written to it any more. A new sys.%s writing to this session's output was put in its place; variables and imports are kept.",
			printable(r.Stream), printable(r.Stream))
	}
	if r.Stream != "" {
		to := "something else"
		if r.To != nil {
			to = printable(*r.To)
		}
		return fmt.Sprintf("The code replaced sys.%s with %s, which does not write to this session's output, so what later code prints would be lost. sys.%s was put back; variables and imports are kept. To capture output within one command, use contextlib.redirect_%s.",
			printable(r.Stream), to, printable(r.Stream), printable(r.Stream))
	}
	name := fmt.Sprintf("standard stream (descriptor %d)", r.FD)
	switch r.FD {
	case 1:
		name = "standard output (descriptor 1)"
	case 2:
		name = "standard error (descriptor 2)"
	}
	what := "was closed by the code, so what it prints would be lost"
	if r.To != nil {
		what = fmt.Sprintf("went to %s instead of this session's output (the code redirected it), so later output would be lost",
			printable(*r.To))
	}
	return "The interpreter's " + name + " " + what + ". It was put back; variables and imports are kept."
}

// proc is one running interpreter with its pipes.
type proc struct {
	cmd     *exec.Cmd
	group   *procs.Group // the interpreter and everything it started
	req     *os.File     // fd 3 of the driver: requests
	rep     *os.File     // fd 4 of the driver: replies
	replies chan reply   // closed when fd 4 ends or carries garbage
	out     *stream      // fds 1 and 2
	exited  chan struct{}
	waitErr error         // set before exited is closed
	quit    chan struct{} // closed by stop, releases the reply reader
	readers chan struct{} // closed when the reply reader returns
	stopped sync.Once
}

// start runs the interpreter and waits for the driver's ready message.
func start(ctx context.Context, o options, dir string) (*proc, reply, error) {
	var files []*os.File // every pipe end, closed if starting fails
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	var ends [6]*os.File
	for i := 0; i < len(ends); i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, reply{}, fmt.Errorf("python: start: %w", err)
		}
		ends[i], ends[i+1] = r, w
		files = append(files, r, w)
	}
	reqR, reqW, repR, repW, outR, outW := ends[0], ends[1], ends[2], ends[3], ends[4], ends[5]
	cmd := exec.Command(o.Python, "-u", "-c", bootstrap)
	cmd.Dir = dir
	group := procs.NewGroup()
	cmd.Env = append(environment(o.Env), group.Env())
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.ExtraFiles = []*os.File{reqR, repW}
	newSession(cmd)
	if err := group.Start(cmd, cmd.Start); err != nil {
		group.Close()
		closeAll()
		return nil, reply{}, err
	}
	if err := o.Resources.Apply(cmd.Process.Pid); err != nil {
		// Before the driver runs any code: it waits for its source.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		group.Close()
		closeAll()
		return nil, reply{}, err
	}
	// The child has its copies; ours of its ends would hide its exit.
	_ = reqR.Close()
	_ = repW.Close()
	p := &proc{
		cmd: cmd, req: reqW, rep: repR, group: group,
		replies: make(chan reply, 1),
		out:     newStream(outR, outW, o.OutputLimit, o.spool),
		exited:  make(chan struct{}),
		quit:    make(chan struct{}),
		readers: make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		// A blocked request write has nobody left to read it.
		_ = p.req.SetWriteDeadline(time.Unix(1, 0))
		close(p.exited)
	}()
	go p.readReplies()

	src, _ := json.Marshal(driverSource)
	if err := p.send(ctx, append(src, '\n')); err != nil {
		if p.waitExit(stopStep) {
			// The write failed because the interpreter exited: say how.
			return nil, reply{}, p.failedStart(nil)
		}
		return nil, reply{}, p.failedStart(err)
	}
	t := time.NewTimer(startTimeout)
	defer t.Stop()
	select {
	case rep, ok := <-p.replies:
		if ok && rep.Status == "ready" && rep.PID == cmd.Process.Pid {
			return p, rep, nil
		}
		if !ok && p.waitExit(stopStep) {
			// The reply stream ends when the interpreter does.
			return nil, reply{}, p.failedStart(nil)
		}
		return nil, reply{}, p.failedStart(errors.New("the driver did not report ready"))
	case <-p.exited:
		return nil, reply{}, p.failedStart(nil)
	case <-ctx.Done():
		p.kill()
		p.stop()
		return nil, reply{}, ctx.Err()
	case <-t.C:
		return nil, reply{}, p.failedStart(fmt.Errorf("no ready message within %v", startTimeout))
	}
}

// failedStart stops p and describes why it did not start, with whatever
// the interpreter printed (a missing module, a version too old).
func (p *proc) failedStart(err error) error {
	p.kill()
	out, _ := p.out.sync(backgroundLimit, false)
	p.stop()
	msg := strings.TrimSpace(out.String())
	if err == nil {
		err = errors.New(exitDescription(p.waitErr))
	}
	if msg != "" {
		return fmt.Errorf("%w; it printed:\n%s", err, msg)
	}
	return err
}

// environment is the interpreter's environment: the inherited one, then
// defaults that keep tools from waiting on a terminal, then extra.
func environment(extra []string) []string {
	env := os.Environ()
	env = append(env,
		"TERM=dumb", "PAGER=cat", "GIT_PAGER=cat", "MANPAGER=cat",
		"GIT_TERMINAL_PROMPT=0", "PIP_NO_INPUT=1", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONUNBUFFERED=1")
	if _, ok := os.LookupEnv("MPLBACKEND"); !ok {
		env = append(env, "MPLBACKEND=Agg")
	}
	return append(env, extra...)
}

// readReplies turns fd 4 into replies until it ends or breaks.
func (p *proc) readReplies() {
	defer close(p.readers)
	defer close(p.replies)
	br := bufio.NewReaderSize(p.rep, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxReply {
			p.deliver(reply{Status: "protocol", Error: fmt.Sprintf("reply longer than %d bytes", maxReply)})
			return
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return
		}
		var rep reply
		if err := json.Unmarshal(line, &rep); err != nil {
			p.deliver(reply{Status: "protocol", Error: "unreadable reply: " + err.Error()})
			return
		}
		if !p.deliver(rep) {
			return
		}
		line = line[:0]
	}
}

func (p *proc) deliver(rep reply) bool {
	select {
	case p.replies <- rep:
		return true
	case <-p.quit:
		return false
	}
}

// send writes one request line, giving up when ctx ends or the
// interpreter exits.
func (p *proc) send(ctx context.Context, line []byte) error {
	stop := context.AfterFunc(ctx, func() { _ = p.req.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	_, err := p.req.Write(line)
	return err
}

// dead reports whether the interpreter has exited.
func (p *proc) dead() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// kill kills the interpreter's whole process group and waits for the
// interpreter to exit.
func (p *proc) kill() {
	signalGroup(p.cmd, sigKill)
	<-p.exited
}

// stop ends the interpreter: its input closed (the driver exits when
// idle), then SIGTERM, then SIGKILL, each after a wait; then whatever is left
// of its process group is killed and the pipes are closed.
func (p *proc) stop() { p.stopped.Do(p.doStop) }

func (p *proc) doStop() {
	_ = p.req.Close()
	for _, sig := range []processSignal{sigTerminate, sigKill} {
		if p.waitExit(stopStep) {
			break
		}
		signalGroup(p.cmd, sig)
	}
	<-p.exited
	signalGroup(p.cmd, sigKill)
	// What left the process group (setsid, a daemon) is still in the group.
	_ = p.group.Kill()
	p.group.Close()
	close(p.quit)
	_ = p.rep.Close()
	<-p.readers
	p.out.close()
}

func (p *proc) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// exitDescription says how the interpreter ended, from cmd.Wait's error.
func exitDescription(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "the Python process exited with status 0"
	case errors.As(err, &ee):
		if s := signalName(ee.ProcessState); s != "" {
			return "the Python process was killed by signal: " + s
		}
		return fmt.Sprintf("the Python process exited with status %d", ee.ExitCode())
	default:
		return "the Python process ended: " + err.Error()
	}
}
