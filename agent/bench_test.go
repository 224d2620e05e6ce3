package agent_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// BenchmarkStep measures the loop's own cost per step with a model that
// answers at once: render both prompts, dispatch the call, run the tool,
// diff the screens, write the transcript. It reports the median over the
// 1,000 steps of each run.
func BenchmarkStep(b *testing.B) {
	const steps = 1000
	echo := tools.MustNew("echo", "Echo text.", func(_ context.Context, _ tools.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	var secs []*section.Section
	for i := range 10 {
		secs = append(secs, section.New(section.Spec[section.None]{
			Key: fmt.Sprintf("s%d", i), Title: fmt.Sprintf("Section %d", i),
			Body: "Some instructions that stay the same from step to step, long enough to matter a little.",
		}))
	}
	secs = append(secs, section.New(section.Spec[section.None]{
		Key: "reference", Title: "Reference", Body: "Long reference text.", Summary: "Reference on request.",
		Visibility: visibility.Const(visibility.Summary),
	}))
	p := prompt.MustNew("bench/agent", "step", secs...).MustBind()

	var medians []time.Duration
	for b.Loop() {
		sess := session.New()
		o, err := orchestrator.New(orchestrator.WithSession(sess))
		if err != nil {
			b.Fatal(err)
		}
		if err := o.Register("box", &counter{}); err != nil {
			b.Fatal(err)
		}
		stamps := make([]time.Time, 0, steps+1)
		n := 0
		m := agent.ModelFunc(func(context.Context, agent.Request) (agent.Response, error) {
			stamps = append(stamps, time.Now())
			n++
			if n > steps {
				return agent.Response{Message: agent.Message{Content: "done"}}, nil
			}
			call := agent.ToolCall{ID: fmt.Sprint(n), Name: "echo", Arguments: `{"text":"hi"}`}
			if n%2 == 0 {
				call = agent.ToolCall{ID: fmt.Sprint(n), Name: "box", Arguments: `{"command":"tick"}`}
			}
			return agent.Response{Message: agent.Message{ToolCalls: []agent.ToolCall{call}}}, nil
		})
		a, err := agent.New(m, p, agent.WithSession(sess), agent.WithOrchestrator(o), agent.WithTools(echo), agent.WithMaxSteps(steps+1), agent.WithTranscript(io.Discard))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.Run(context.Background(), "tick"); err != nil {
			b.Fatal(err)
		}
		gaps := make([]time.Duration, 0, steps)
		for i := 1; i < len(stamps); i++ {
			gaps = append(gaps, stamps[i].Sub(stamps[i-1]))
		}
		slices.Sort(gaps)
		medians = append(medians, gaps[len(gaps)/2])
		_ = o.Close()
	}
	slices.Sort(medians)
	b.ReportMetric(float64(medians[len(medians)/2].Nanoseconds()), "ns/step-median")
}
