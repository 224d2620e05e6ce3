package agent

import (
	"encoding/json"

	"github.com/unfold-dev/unfold/tokens"
)

// layout is a request cut into the pieces a provider's prompt cache sees,
// in its order (tools, then the system message, then the conversation),
// with the tokens of each piece.
type layout struct {
	segs []string
	toks []int
}

// layoutOf lays req out as the model's API sends it: an adapter that defers
// tools natively sends the tools outside the deferred groups, then the
// groups, which never change in a run.
func (r *run) layoutOf(req Request) layout {
	counter := r.a.cfg.Counter
	if counter == nil {
		counter = tokens.Estimate
	}
	var segs []string
	inGroup := map[string]bool{}
	defers := featuresOf(r.a.cfg.Model).DefersTools
	if defers {
		for _, g := range req.Deferred {
			for _, t := range g.Tools {
				inGroup[t.Name] = true
			}
		}
	}
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
		// A piece the previous request had at the same place was counted.
		if i < len(r.layout.segs) && r.layout.segs[i] == s {
			l.toks[i] = r.layout.toks[i]
			continue
		}
		l.toks[i] = counter.Count(s)
	}
	return l
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
