package orchestrator

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
)

// previewEnv counts the screens drawn as shown and as previews.
type previewEnv struct {
	testEnv
	// mu guards shown and previews.
	mu              sync.Mutex
	shown, previews int
}

var _ Previewer = (*previewEnv)(nil)

func (e *previewEnv) Screen() (envs.Screen, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.shown++
	return envs.Screen{Content: "shown"}, nil
}

func (e *previewEnv) Preview() (envs.Screen, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.previews++
	return envs.Screen{Content: "preview"}, nil
}

func (e *previewEnv) counts() (shown, previews int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.shown, e.previews
}

// TestPreview checks which screens count as shown: the one the command
// tool returns with its environment's command, and those [Orchestrator.Run]
// and [Orchestrator.Screens] collect; a section's render and
// [Orchestrator.Preview] draw previews. An environment that is no
// Previewer is drawn with Screen for both.
func TestPreview(t *testing.T) {
	o := mustNew(t)
	env := &previewEnv{}
	if err := o.Register("env", env); err != nil {
		t.Fatal(err)
	}
	if err := o.Register("plain", &testEnv{screen: func() (envs.Screen, error) { return envs.Screen{Content: "plain"}, nil }}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name            string
		do              func(t *testing.T)
		shown, previews int
	}{
		{"preview", func(t *testing.T) {
			if s, ok := o.Preview("env"); !ok || s.Content != "preview" {
				t.Errorf("got %q, %v; want the preview", s.Content, ok)
			}
			if s, ok := o.Preview("plain"); !ok || s.Content != "plain" {
				t.Errorf("got %q, %v for an environment without previews; want its screen", s.Content, ok)
			}
			if _, ok := o.Preview("none"); ok {
				t.Error("got a preview of an environment that is not registered")
			}
			if _, ok := o.Preview(ScreenName); ok {
				t.Error("got the orchestrator's screen while no spec file failed")
			}
		}, 0, 1},
		{"section", func(t *testing.T) {
			secs, err := o.Sections()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := prompt.MustNew("test", "preview", secs...).MustBind().Render(nil, nil); err != nil {
				t.Fatal(err)
			}
		}, 0, 1},
		{"command tool", func(t *testing.T) {
			tool, err := o.CommandTool("env")
			if err != nil {
				t.Fatal(err)
			}
			res, err := tool.Call(context.Background(), tools.Context{}, json.RawMessage(`{"command":"x"}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Value.(CommandOutput).Screen; got != "shown" {
				t.Errorf("the command tool returned screen %q, want the one counted as shown", got)
			}
		}, 1, 0},
		{"run", func(t *testing.T) { o.Execute(context.Background(), "env", "x") }, 1, 0},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			shown, previews := env.counts()
			st.do(t)
			s2, p2 := env.counts()
			if s2-shown != st.shown || p2-previews != st.previews {
				t.Errorf("got %d screens shown and %d previews, want %d and %d", s2-shown, p2-previews, st.shown, st.previews)
			}
		})
	}
}
