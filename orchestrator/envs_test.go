package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/unfold-dev/unfold/envs"
)

// testEnv is a configurable environment for tests. Its zero value echoes
// commands and counts closes.
type testEnv struct {
	execute func(ctx context.Context, cmd string) (envs.Response, error)
	screen  func() (envs.Screen, error)
	close   func() error

	// mu guards last and closes.
	mu     sync.Mutex
	last   string
	closes int
}

var (
	_ envs.Env    = (*testEnv)(nil)
	_ envs.Closer = (*testEnv)(nil)
)

func (e *testEnv) Execute(ctx context.Context, cmd string) (envs.Response, error) {
	e.mu.Lock()
	e.last = cmd
	e.mu.Unlock()
	if e.execute != nil {
		return e.execute(ctx, cmd)
	}
	return envs.Response{Output: "echo: " + cmd, Success: cmd != "fail"}, nil
}

func (e *testEnv) Screen() (envs.Screen, error) {
	if e.screen != nil {
		return e.screen()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last == "" {
		return envs.Screen{Content: "Echo environment: every command is echoed back.\nNo command yet."}, nil
	}
	return envs.Screen{Content: "Echo environment: every command is echoed back.\nLast command: " + e.last}, nil
}

func (e *testEnv) Close() error {
	e.mu.Lock()
	e.closes++
	e.mu.Unlock()
	if e.close != nil {
		return e.close()
	}
	return nil
}

func (e *testEnv) closeCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closes
}

// catalogue returns the named test environments used by transcripts.
func catalogue(name string) (*testEnv, error) {
	switch name {
	case "echo":
		return &testEnv{}, nil
	case "boom":
		return &testEnv{
			execute: func(context.Context, string) (envs.Response, error) { panic("kaboom") },
			screen: func() (envs.Screen, error) {
				return envs.Screen{Content: "Boom environment: every command panics."}, nil
			},
		}, nil
	case "broken":
		return &testEnv{
			execute: func(context.Context, string) (envs.Response, error) {
				return envs.Response{}, errors.New("disk on fire")
			},
			screen: func() (envs.Screen, error) { return envs.Screen{}, errors.New("screen broke") },
		}, nil
	case "tall":
		return &testEnv{
			screen: func() (envs.Screen, error) {
				var b strings.Builder
				for i := 1; i <= 12; i++ {
					fmt.Fprintf(&b, "line %d\n", i)
				}
				return envs.Screen{Content: b.String(), MaxLines: 5}, nil
			},
		}, nil
	case "sleepy":
		return &testEnv{
			execute: func(ctx context.Context, cmd string) (envs.Response, error) {
				<-ctx.Done()
				return envs.Response{Output: "interrupted: " + ctx.Err().Error()}, nil
			},
			screen: func() (envs.Screen, error) {
				return envs.Screen{Content: "Sleepy environment: every command waits until it is interrupted."}, nil
			},
		}, nil
	case "screenpanic":
		return &testEnv{
			screen: func() (envs.Screen, error) { panic("screen exploded") },
		}, nil
	}
	return nil, fmt.Errorf("no test environment %q", name)
}
