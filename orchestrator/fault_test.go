package orchestrator

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/session"
)

// echoEnv answers each command with its own text; it counts the commands
// it ran, from any goroutine.
type echoEnv struct{ n atomic.Int64 }

func (e *echoEnv) Execute(_ context.Context, command string) (envs.Response, error) {
	e.n.Add(1)
	return envs.Response{Output: "echo " + command, Success: true}, nil
}

func (e *echoEnv) Screen() (envs.Screen, error) {
	return envs.Screen{Content: fmt.Sprintf("ran %d", e.n.Load())}, nil
}

// TestSlowConsumer has a client that writes every command at once (a
// batch) and reads the responses slowly, in small pieces. Serve waits for the reader
// (it does not drop, reorder or buffer without bound): every line is
// answered, in order, and the session records every command.
func TestSlowConsumer(t *testing.T) {
	const commands = 300
	sess := session.New()
	o := mustNew(t, WithSession(sess))
	env := &echoEnv{}
	if err := o.Register("echo", env); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- o.Serve(context.Background(), inR, outW, WithBatch()); outW.Close() }()
	go func() {
		for i := range commands {
			fmt.Fprintf(inW, `{"type":"command","environment":"echo","command":"c%d"}`+"\n", i)
			if i%50 == 49 {
				fmt.Fprintln(inW, "not json") // a bad line among them
			}
		}
		inW.Close()
	}()
	// Read 7 bytes at a time, pausing now and then.
	br := bufio.NewReader(&slowReader{r: outR, chunk: 7, every: 4096, pause: time.Millisecond})
	got, bad := 0, 0
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Type     string        `json:"type"`
			Response envs.Response `json:"response"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			t.Fatalf("line %d: %v: %q", got+bad, err, line)
		}
		if msg.Type == "error" {
			bad++
			continue
		}
		if want := fmt.Sprintf("echo c%d", got); msg.Response.Output != want {
			t.Fatalf("response %d: got %q, want %q", got, msg.Response.Output, want)
		}
		got++
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if got != commands || bad != commands/50 {
		t.Errorf("got %d responses and %d errors, want %d and %d", got, bad, commands, commands/50)
	}
	if n := GetUsage(sess).Count("echo"); n != commands {
		t.Errorf("session: got %d commands recorded, want %d", n, commands)
	}
}

// slowReader returns at most chunk bytes per Read and sleeps pause after
// every `every` bytes.
type slowReader struct {
	r            io.Reader
	chunk, every int
	pause        time.Duration
	since        int
}

func (s *slowReader) Read(p []byte) (int, error) {
	if s.since >= s.every {
		time.Sleep(s.pause)
		s.since = 0
	}
	n, err := s.r.Read(p[:min(len(p), s.chunk)])
	s.since += n
	return n, err
}

// TestConcurrentExecute sends commands from many goroutines to one
// orchestrator with a session, while others read screens and render the
// session's usage. Under -race it shows the dispatch path is safe; every
// command is answered with its own text and recorded once.
func TestConcurrentExecute(t *testing.T) {
	const goroutines, each = 16, 50
	sess := session.New()
	o := mustNew(t, WithSession(sess))
	defer o.Close()
	names := []string{"a", "b", "c"}
	for _, n := range names {
		if err := o.Register(n, &echoEnv{}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				name := names[(g+i)%len(names)]
				cmd := fmt.Sprintf("g%d-%d", g, i)
				r := o.Execute(context.Background(), name, cmd)
				if !r.Response.Success || r.Response.Output != "echo "+cmd {
					errs <- fmt.Errorf("%s %s: got %+v, want echo %s", name, cmd, r.Response, cmd)
				}
				if len(r.Screens) != len(names) {
					errs <- fmt.Errorf("%s %s: got %d screens, want %d", name, cmd, len(r.Screens), len(names))
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range each {
				_ = o.Screens()
				_ = GetUsage(sess).Environments()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := 0
	for _, n := range names {
		total += GetUsage(sess).Count(n)
	}
	if total != goroutines*each {
		t.Errorf("session: got %d commands recorded, want %d", total, goroutines*each)
	}
	if got := strings.Join(GetUsage(sess).Environments(), ","); got != "a,b,c" {
		t.Errorf("environments used: got %q, want %q", got, "a,b,c")
	}
}
