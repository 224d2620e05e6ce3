package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// maxReply bounds one reply line from a worker.
const maxReply = 64 << 20

// worker is a long-lived peer process speaking one JSON line in, one JSON
// line out.
type worker struct {
	name   string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *limitedBuffer
}

func startWorker(name string, cmd *exec.Cmd) (*worker, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w := &worker{name: name, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16), stderr: &limitedBuffer{max: 1 << 20}}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start: %w", name, err)
	}
	return w, nil
}

// call sends req (a JSON value, or a raw line when it is a string) and
// decodes the reply into resp.
func (w *worker) call(req, resp any) error {
	var line []byte
	if s, ok := req.(string); ok {
		line = []byte(s)
	} else {
		var err error
		if line, err = json.Marshal(req); err != nil {
			return err
		}
	}
	if _, err := w.in.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("%s: write: %w (stderr: %s)", w.name, err, w.stderr.String())
	}
	var reply []byte
	for {
		chunk, err := w.out.ReadSlice('\n')
		reply = append(reply, chunk...)
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull {
			return fmt.Errorf("%s: read: %w (stderr: %s)", w.name, err, w.stderr.String())
		}
		if len(reply) > maxReply {
			return fmt.Errorf("%s: reply over %d bytes", w.name, maxReply)
		}
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(reply, &e) == nil && e.Error != "" {
		return fmt.Errorf("%s: %s", w.name, e.Error)
	}
	return json.Unmarshal(reply, resp)
}

func (w *worker) close() {
	w.in.Close()
	if err := w.cmd.Wait(); err != nil {
		fmt.Fprintf(os.Stderr, "compare: %s exited: %v\n", w.name, err)
	}
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.TrimSpace(l.buf.String())
}
