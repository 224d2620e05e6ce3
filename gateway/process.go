package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/internal/procs"
)

// CloseTimeout bounds [Gateway.Close]: the servers are stopped in
// parallel, each within about stdinGrace plus the second procs gives
// after SIGTERM, under the 4 s a front end gives itself to shut down
// after a signal.
const CloseTimeout = 3 * time.Second

// stdinGrace is how long a stdio server gets to exit once its stdin is
// closed (as MCP asks a client to stop it) before its processes are sent
// SIGTERM, then SIGKILL.
const stdinGrace = time.Second

// pipeGrace is how long Wait waits, once the server exited, for its
// stderr to close: a process it left behind may hold it.
const pipeGrace = time.Second

// process is a running stdio server: its program and everything it
// starts, in a process group of its own and a [procs.Group], so that
// stopping it ends a wrapper's children too (sh -c, npx, uv).
type process struct {
	cmd    *exec.Cmd
	group  *procs.Group
	stdin  *os.File
	stdout *os.File
	exited chan struct{} // closed when cmd.Wait returned

	once sync.Once
	err  error // what close found, once it ran
}

// commandTransport is a stdio server's transport: newline-delimited JSON
// over the pipes of a process started by [startProcess]. Closing the
// connection stops the process; so does Close, for a connection that
// never began.
type commandTransport struct {
	sdk.IOTransport
	p *process
}

// Close stops the server's processes.
func (t *commandTransport) Close() error { return t.p.close() }

// command starts the configured command and returns its transport, a
// *commandTransport watched for tools that need tasks.
func (u *Upstream) command() (sdk.Transport, error) {
	cmd := exec.Command(u.cfg.Command, u.cfg.Args...)
	cmd.Dir = u.cfg.Dir
	group := procs.NewGroup()
	cmd.Env = append(os.Environ(), group.Env())
	for k, v := range u.cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	u.tail.reset()
	cmd.Stderr = u.tail
	cmd.WaitDelay = pipeGrace
	p, err := startProcess(cmd, group)
	if err != nil {
		return nil, err
	}
	// Closing the connection closes stdin, which begins the stop; stdout
	// stays open until the server is gone, so that what it writes as it
	// ends meets no closed pipe.
	r := io.NopCloser(p.stdout)
	w := closerFunc{File: p.stdin, close: p.close}
	return watchTransport{Transport: &commandTransport{IOTransport: sdk.IOTransport{Reader: r, Writer: w}, p: p}, tasks: &u.tasks}, nil
}

// startProcess starts cmd in group, in a process group of its own, with
// its stdin and stdout on pipes.
func startProcess(cmd *exec.Cmd, group *procs.Group) (*process, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		group.Close()
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		group.Close()
		closeFiles(stdinR, stdinW)
		return nil, err
	}
	// Files, not an io.Writer: Wait then does not wait for a process the
	// server left behind to close them.
	cmd.Stdin, cmd.Stdout = stdinR, stdoutW
	cmd.SysProcAttr = sysProcAttr()
	err = group.Start(cmd, cmd.Start)
	closeFiles(stdinR, stdoutW)
	if err != nil {
		group.Close()
		closeFiles(stdinW, stdoutR)
		return nil, err
	}
	p := &process{cmd: cmd, group: group, stdin: stdinW, stdout: stdoutR, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// close stops the server as MCP says a client does: it closes stdin and
// waits stdinGrace for the program to exit, then ends whatever of the
// group is left (the program, or what a wrapper started) with SIGTERM and
// SIGKILL. It is idempotent; the error names processes that survived.
func (p *process) close() error {
	p.once.Do(func() {
		_ = p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(stdinGrace):
		}
		p.err = p.group.Kill()
		select {
		case <-p.exited: // SIGKILL ended it, and WaitDelay bounds its stderr
		case <-time.After(pipeGrace):
			// Not even SIGKILL ended it (a process stuck in the kernel):
			// its Wait stays in the background.
		}
		p.group.Close()
		_ = p.stdout.Close()
	})
	if p.err != nil {
		return fmt.Errorf("stop %s: %w", p.cmd.Path, p.err)
	}
	return nil
}

// closerFunc is a file whose Close is close.
type closerFunc struct {
	*os.File
	close func() error
}

func (c closerFunc) Close() error { return c.close() }

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// closeAll stops every server in parallel, and waits for the starts and
// re-lists under way, at most CloseTimeout; the error names the servers
// still stopping then.
func (g *Gateway) closeAll() error {
	errs := make([]error, len(g.ups))
	left := make([]chan struct{}, len(g.ups))
	for i, u := range g.ups {
		left[i] = make(chan struct{})
		go func() {
			defer close(left[i])
			if err := u.close(); err != nil {
				errs[i] = fmt.Errorf("gateway: close %s: %w", u.cfg.Name, err)
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		for _, l := range left {
			<-l
		}
		g.starts.Wait()
		g.bg.Wait()
		close(done)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), CloseTimeout)
	defer cancel()
	select {
	case <-done:
		return errors.Join(errs...)
	case <-ctx.Done():
	}
	var names []string
	var stopped []error
	for i, l := range left {
		select {
		case <-l:
			stopped = append(stopped, errs[i])
		default:
			names = append(names, g.ups[i].cfg.Name)
		}
	}
	if len(names) == 0 {
		return errors.Join(append(stopped, fmt.Errorf("gateway: close: a start or a re-list still under way after %v", CloseTimeout))...)
	}
	return errors.Join(append(stopped, fmt.Errorf("gateway: close: %s still stopping after %v", strings.Join(names, ", "), CloseTimeout))...)
}
