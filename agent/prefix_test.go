package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tokens"
)

// grow appends one step of a run to msgs: an assistant reply with a tool
// call, then its result; every tenth step carries Native data.
func grow(msgs []Message, step int) []Message {
	id := fmt.Sprintf("call_%d", step)
	reply := Message{Role: RoleAssistant, Content: "Looking at the file next.", ToolCalls: []ToolCall{{ID: id, Name: "bash", Arguments: fmt.Sprintf(`{"command":"sed -n %d,%dp main.go"}`, step, step+40)}}}
	if step%10 == 0 {
		reply.Native = &Native{API: "openai.responses", Data: json.RawMessage(fmt.Sprintf(`{"id":"rs_%d","summary":[]}`, step))}
	}
	result := Message{Role: RoleTool, ToolCallID: id, Content: strings.Repeat(fmt.Sprintf("line %d of the output\n", step), 40)}
	return append(msgs, reply, result)
}

// BenchmarkLayout lays out the requests of a run of n steps as the loop
// does, one per step, each after the previous one's reply and result: the
// cost per step must not grow with the steps before it.
func BenchmarkLayout(b *testing.B) {
	tools := []ToolDef{
		{Name: "bash", Description: "Run a command.", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		{Name: "edit", Description: "Edit a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}}}`)},
	}
	for _, n := range []int{100, 500, 2000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := &run{a: &Agent{}}
				msgs := []Message{{Role: RoleSystem, Content: "You are a careful engineer."}, {Role: RoleUser, Content: "Fix the bug."}}
				for step := range n {
					lay := r.layoutOf(Request{Messages: msgs, Tools: tools})
					_ = lay.shared(r.layout)
					r.layout = lay
					msgs = grow(msgs, step)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
		})
	}
}

// freshLayout lays req out from nothing: every piece marshalled and
// counted, as each step did before pieces were kept.
func freshLayout(req Request, defers bool) layout {
	inGroup := map[string]bool{}
	if defers {
		for _, g := range req.Deferred {
			for _, t := range g.Tools {
				inGroup[t.Name] = true
			}
		}
	}
	var segs []string
	for _, t := range req.Tools {
		if !inGroup[t.Name] {
			segs = append(segs, marshal(t))
		}
	}
	if defers {
		for _, g := range req.Deferred {
			segs = append(segs, marshal(g))
		}
	}
	for _, m := range req.Messages {
		segs = append(segs, marshal(m))
	}
	l := layout{segs: segs, toks: make([]int, len(segs))}
	for i, s := range segs {
		l.toks[i] = tokens.Estimate.Count(s)
	}
	return l
}

// defersModel is a model whose API defers tools natively.
type defersModel struct{ ModelFunc }

func (defersModel) Features() Features { return Features{DefersTools: true, CachesPrefixes: true} }

// TestLayoutKeptPieces lays out the requests of a run whose conversation
// and tools change the ways a run and its adapters change them, earlier
// messages included, and checks each layout against one made from
// nothing: the same pieces, byte for byte, the same tokens, and the same
// prefix shared with the request before.
func TestLayoutKeptPieces(t *testing.T) {
	bash := ToolDef{Name: "bash", Description: "Run a command.", Parameters: json.RawMessage(`{"type":"object"}`)}
	edit := ToolDef{Name: "edit", Description: "Edit a file.", Parameters: json.RawMessage(`{"type": "object"}`)}
	search := ToolDef{Name: "search", Description: "Search the docs.", Parameters: json.RawMessage(`{"type":"object"}`)}
	start := func() []Message {
		return grow(grow([]Message{{Role: RoleSystem, Content: "You are careful."}, {Role: RoleUser, Content: "Fix it."}}, 1), 2)
	}
	// Each change returns the request after it; the messages are changed
	// in place where a run could change them so.
	type change struct {
		name string
		do   func(req Request) Request
	}
	changes := []change{
		{"first", func(req Request) Request { return req }},
		{"same again", func(req Request) Request { return req }},
		{"a step", func(req Request) Request { req.Messages = grow(req.Messages, 3); return req }},
		{"the system message rendered again", func(req Request) Request {
			req.Messages[0] = Message{Role: RoleSystem, Content: "You are careful.\n\n# Reference\n\nOpened."}
			return req
		}},
		{"a call ID renamed in place", func(req Request) Request {
			req.Messages[2].ToolCalls[0].ID = "renamed"
			req.Messages[3].ToolCallID = "renamed"
			return req
		}},
		{"a call cut in place", func(req Request) Request { req.Messages[4].ToolCalls[0].Cut = true; return req }},
		{"repeated call IDs made distinct", func(req Request) Request {
			for i := range req.Messages {
				if len(req.Messages[i].ToolCalls) > 0 {
					req.Messages[i].ToolCalls[0].ID = "dup"
				} else if req.Messages[i].Role == RoleTool {
					req.Messages[i].ToolCallID = "dup"
				}
			}
			first := Request{Messages: slices.Clone(req.Messages), Tools: req.Tools, Deferred: req.Deferred}
			req.Messages = DistinctCallIDs(req.Messages)
			if slices.EqualFunc(first.Messages, req.Messages, func(a, b Message) bool { return sameMessage(&a, &b) }) {
				t.Fatal("DistinctCallIDs changed no ID")
			}
			return req
		}},
		{"loads nil to empty", func(req Request) Request {
			req.Messages = slices.Clone(req.Messages)
			req.Messages[3].Loads = []string{}
			return req
		}},
		{"loads in place", func(req Request) Request {
			req.Messages[5].Loads = []string{"search"}
			return req
		}},
		{"native data replaced", func(req Request) Request {
			req.Messages = grow(req.Messages, 10)
			n := len(req.Messages) - 2
			req.Messages[n].Native = &Native{API: "openai.responses", Data: json.RawMessage(`{"id":"rs_other"}`)}
			return req
		}},
		{"native data nil", func(req Request) Request {
			req.Messages[len(req.Messages)-2].Native = &Native{API: "openai.responses"}
			return req
		}},
		{"native data empty in place", func(req Request) Request {
			req.Messages[len(req.Messages)-2].Native.Data = json.RawMessage{}
			return req
		}},
		{"native dropped", func(req Request) Request {
			req.Messages[len(req.Messages)-2].Native = nil
			return req
		}},
		{"cut to a summary", func(req Request) Request {
			req.Messages = append(req.Messages[:2:2], Message{Role: RoleUser, Content: "Summary of the steps so far."})
			return req
		}},
		{"grown after the cut", func(req Request) Request { req.Messages = grow(grow(req.Messages, 4), 5); return req }},
		{"a tool added", func(req Request) Request { req.Tools = append(req.Tools, search); return req }},
		{"a tool's description changed", func(req Request) Request {
			req.Tools = slices.Clone(req.Tools)
			req.Tools[0].Description = "Run a bash command."
			return req
		}},
		{"a tool's schema nil", func(req Request) Request {
			req.Tools = slices.Clone(req.Tools)
			req.Tools[1].Parameters = nil
			return req
		}},
		{"a tool's schema empty", func(req Request) Request {
			req.Tools = slices.Clone(req.Tools)
			req.Tools[1].Parameters = json.RawMessage{}
			return req
		}},
		{"a tool removed", func(req Request) Request { req.Tools = req.Tools[1:]; return req }},
		{"a group's tools empty", func(req Request) Request {
			req.Deferred = slices.Clone(req.Deferred)
			req.Deferred[0].Tools = []ToolDef{}
			return req
		}},
		{"a group's tools nil", func(req Request) Request {
			req.Deferred = slices.Clone(req.Deferred)
			req.Deferred[0].Tools = nil
			return req
		}},
		{"no messages", func(req Request) Request { req.Messages = nil; return req }},
	}
	for _, defers := range []bool{false, true} {
		t.Run(fmt.Sprintf("defers=%v", defers), func(t *testing.T) {
			var m Model = ModelFunc(nil)
			if defers {
				m = defersModel{}
			}
			r := &run{a: &Agent{cfg: config{Model: m}}}
			req := Request{
				Messages: start(),
				Tools:    []ToolDef{bash, edit, search},
				Deferred: []ToolGroup{{Section: "docs", Title: "Docs", Tools: []ToolDef{search}}},
			}
			prev := layout{}
			for _, c := range changes {
				req = c.do(req)
				got, want := r.layoutOf(req), freshLayout(req, defers)
				if !slices.Equal(got.segs, want.segs) {
					t.Fatalf("%s: got pieces\n%q\nwant\n%q", c.name, got.segs, want.segs)
				}
				if !slices.Equal(got.toks, want.toks) {
					t.Fatalf("%s: got tokens %v, want %v", c.name, got.toks, want.toks)
				}
				if g, w := got.shared(r.layout), want.shared(prev); g != w {
					t.Fatalf("%s: got %d tokens shared, want %d", c.name, g, w)
				}
				r.layout, prev = got, want
			}
		})
	}
}

// TestLayoutCostOfAStep checks that laying out a request costs what is
// new in it, not the whole conversation: a step after 1,000 others
// allocates as little as a step after 10.
func TestLayoutCostOfAStep(t *testing.T) {
	allocs := func(steps int) float64 {
		r := &run{a: &Agent{}}
		msgs := []Message{{Role: RoleSystem, Content: "You are careful."}, {Role: RoleUser, Content: "Fix it."}}
		for step := range steps {
			msgs = grow(msgs, step)
		}
		req := Request{Messages: msgs}
		r.layout = r.layoutOf(req)
		return testing.AllocsPerRun(10, func() { r.layoutOf(req) })
	}
	short, long := allocs(10), allocs(1000)
	if long > short+1 {
		t.Errorf("laying out a request after 1,000 steps: got %v allocations, want about the %v after 10 steps", long, short)
	}
}
