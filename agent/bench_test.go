package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
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

// BenchmarkReadTranscript reads a transcript of 20 steps, each with a
// 1 MB tool result (recorded twice: the tool record and the tool message)
// and a render report, keeping every record or only what a resume needs;
// both give the same conversation. B/op is the memory each keeps.
func BenchmarkReadTranscript(b *testing.B) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	big := strings.Repeat("output line\n", 1<<20/12)
	write := func(r agent.Record) {
		if err := enc.Encode(r); err != nil {
			b.Fatal(err)
		}
	}
	write(agent.Record{Kind: agent.KindRun, Task: "go"})
	write(agent.Record{Kind: agent.KindMessage, Message: &agent.Message{Role: agent.RoleUser, Content: "go"}})
	for i := range 20 {
		id := fmt.Sprintf("c%d", i)
		write(agent.Record{Kind: agent.KindMessage, Message: &agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: id, Name: "bash", Arguments: `{"command":"cat log"}`}}}})
		write(agent.Record{Kind: agent.KindCall, Tool: &agent.ToolRecord{ID: id, Name: "bash", Arguments: `{"command":"cat log"}`}})
		write(agent.Record{Kind: agent.KindTool, Tool: &agent.ToolRecord{ID: id, Name: "bash", Arguments: `{"command":"cat log"}`, Success: true, Result: big}})
		write(agent.Record{Kind: agent.KindMessage, Message: &agent.Message{Role: agent.RoleTool, ToolCallID: id, Content: big}})
		write(agent.Record{Kind: agent.KindRender, Render: &agent.RenderRecord{Report: []agent.SectionRecord{{Path: "task", Visible: true, Mode: "full"}}}, Message: &agent.Message{Role: agent.RoleSystem, Content: big}})
	}
	data := buf.Bytes()
	want, err := agent.ReadTranscript(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	for _, read := range []struct {
		name string
		f    func(io.Reader) (*agent.Transcript, error)
	}{{"records", agent.ReadTranscript}, {"resume", agent.ReadForResume}} {
		b.Run(read.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			var kept uint64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				tr, err := read.f(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				kept = after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
				if !slices.EqualFunc(tr.Messages(), want.Messages(), func(x, y agent.Message) bool { return x.Content == y.Content && x.ToolCallID == y.ToolCallID }) {
					b.Fatal("the conversations differ")
				}
			}
			b.ReportMetric(float64(kept), "kept-B")
		})
	}
}
