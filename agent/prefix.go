package agent

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/unfold-dev/unfold/tokens"
)

// layout is a request cut into the pieces a provider's prompt cache sees,
// in its order (tools, then the system message, then the conversation),
// with the tokens of each piece.
type layout struct {
	segs []string
	toks []int
}

// pieces keeps, by place, what each piece of the last request laid out
// was, its JSON and its tokens, so that a step marshals and counts only
// what changed since: in a long run nearly all of a request is the
// conversation of the steps before, and laying it all out again each step
// made the run quadratic in its length.
type pieces struct {
	tools  []piece[ToolDef]   // the tools sent outside the deferred groups
	groups []piece[ToolGroup] // the deferred groups
	msgs   []piece[Message]
}

// piece is a value as it was laid out (a copy: its slices are the
// piece's own), its JSON and its tokens.
type piece[T any] struct {
	v    T
	seg  string
	toks int
}

// layoutOf lays req out as the model's API sends it: an adapter that defers
// tools natively sends the tools outside the deferred groups, then the
// groups, which never change in a run.
func (r *run) layoutOf(req Request) layout {
	counter := r.a.cfg.Counter
	if counter == nil {
		counter = tokens.Estimate
	}
	inGroup := map[string]bool{}
	defers := featuresOf(r.a.cfg.Model).DefersTools
	if defers {
		for _, g := range req.Deferred {
			for _, t := range g.Tools {
				inGroup[t.Name] = true
			}
		}
	}
	n := len(req.Tools) + len(req.Messages)
	if defers {
		n += len(req.Deferred)
	}
	l := layout{segs: make([]string, 0, n), toks: make([]int, 0, n)}
	add := func(seg string, toks int) {
		l.segs = append(l.segs, seg)
		l.toks = append(l.toks, toks)
	}
	tools := 0
	for i := range req.Tools {
		if t := &req.Tools[i]; !inGroup[t.Name] {
			add(lay(&r.pieces.tools, tools, t, sameTool, cloneTool, counter))
			tools++
		}
	}
	trim(&r.pieces.tools, tools)
	if defers {
		for i := range req.Deferred {
			add(lay(&r.pieces.groups, i, &req.Deferred[i], sameGroup, cloneGroup, counter))
		}
		trim(&r.pieces.groups, len(req.Deferred))
	}
	for i := range req.Messages {
		add(lay(&r.pieces.msgs, i, &req.Messages[i], sameMessage, cloneMessage, counter))
	}
	trim(&r.pieces.msgs, len(req.Messages))
	return l
}

// lay returns the JSON and the tokens of v, the piece at place i of kept:
// those kept when v is the value laid out there before, else v's own,
// which are kept. Places are filled in order, so i is at most len(*kept).
func lay[T any](kept *[]piece[T], i int, v *T, same func(a, b *T) bool, clone func(T) T, counter tokens.Counter) (string, int) {
	if i < len(*kept) {
		if p := &(*kept)[i]; same(&p.v, v) {
			return p.seg, p.toks
		}
	}
	seg := marshal(*v)
	p := piece[T]{v: clone(*v), seg: seg, toks: counter.Count(seg)}
	if i < len(*kept) {
		(*kept)[i] = p
	} else {
		*kept = append(*kept, p)
	}
	return p.seg, p.toks
}

// trim keeps the first n pieces of kept, letting go of the others (the
// messages a cut dropped).
func trim[T any](kept *[]piece[T], n int) {
	clear((*kept)[n:])
	*kept = (*kept)[:n]
}

// The comparisons below look at every field that is marshalled. Strings
// and raw JSON that are the same memory compare at once, so a piece that
// did not change costs little however long it is. A message's calls and
// loads are copied when kept, so a call ID renamed in place is seen;
// raw JSON (a schema, Native data) is kept as it is, being replaced, not
// edited, when it changes.

func sameTool(a, b *ToolDef) bool {
	return a.Name == b.Name && a.Description == b.Description &&
		(a.Parameters == nil) == (b.Parameters == nil) && bytes.Equal(a.Parameters, b.Parameters)
}

func cloneTool(t ToolDef) ToolDef { return t }

func sameGroup(a, b *ToolGroup) bool {
	return a.Section == b.Section && a.Title == b.Title && a.Summary == b.Summary &&
		(a.Tools == nil) == (b.Tools == nil) && slices.EqualFunc(a.Tools, b.Tools, func(x, y ToolDef) bool { return sameTool(&x, &y) })
}

func cloneGroup(g ToolGroup) ToolGroup {
	g.Tools = slices.Clone(g.Tools)
	return g
}

func sameMessage(a, b *Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID &&
		slices.Equal(a.ToolCalls, b.ToolCalls) && slices.Equal(a.Loads, b.Loads) &&
		(a.Loads == nil) == (b.Loads == nil) && sameNative(a.Native, b.Native)
}

func cloneMessage(m Message) Message {
	m.ToolCalls = slices.Clone(m.ToolCalls)
	m.Loads = slices.Clone(m.Loads)
	if m.Native != nil {
		n := *m.Native
		m.Native = &n
	}
	return m
}

func sameNative(a, b *Native) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.API == b.API && (a.Data == nil) == (b.Data == nil) && bytes.Equal(a.Data, b.Data)
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// total returns the tokens of the whole request.
func (l layout) total() int {
	n := 0
	for _, t := range l.toks {
		n += t
	}
	return n
}

// shared returns the tokens of l in a prefix identical to prev: the pieces
// equal to prev's, in order, up to the first that differs.
func (l layout) shared(prev layout) int {
	n := 0
	for i, s := range l.segs {
		if i >= len(prev.segs) || prev.segs[i] != s {
			break
		}
		n += l.toks[i]
	}
	return n
}
