package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/unfold-dev/unfold/internal/textgen"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens/bpe"
	"github.com/unfold-dev/unfold/visibility"
)

// runRender is the 50 x 20 render: ours from the spec list to text (build,
// bind, render), prompt-tsx from the same list to messages, each iteration
// on fresh bodies (see fresh); and ours again on a bound prompt, which
// reuses what its first render computed and so has no peer to compare with.
// After every round the three texts of one generation are checked equal.
func runRender(cfg *config) (*table, error) {
	w := newWorkload()
	node, err := nodeWorker(cfg)
	if err != nil {
		return nil, err
	}
	defer node.close()
	if err := loadWorkload(cfg, node, w); err != nil {
		return nil, err
	}
	first := &row{label: "unfold: build + bind + render", per: "render"}
	repeat := &row{label: "unfold: render a bound prompt again", per: "render"}
	peer := &row{label: "@vscode/prompt-tsx: build + render", per: "render"}
	build := func(specs []*spec) (*prompt.Rendered, error) {
		tmpl, err := prompt.New("bench", "render", sections(specs)...)
		if err != nil {
			return nil, err
		}
		p, err := tmpl.Bind(w.Params)
		if err != nil {
			return nil, err
		}
		return p.Render(session.New(), nil)
	}
	bound, err := prompt.MustNew("bench", "render", sections(fresh(w.Render, checkGen, ""))...).Bind(w.Params)
	if err != nil {
		return nil, err
	}
	sess := session.New()
	gen, peerAt := goGen, peerGen
	next := func() []*spec { gen++; return fresh(w.Render, gen, "") }
	var oursBytes int
	sides := func(round int, nFirst, nRepeat, nPeer int) error {
		return rotate(round,
			func() error {
				ds, err := timeFresh(nFirst, next, func(specs []*spec) error {
					r, err := build(specs)
					if err == nil {
						oursBytes = len(r.Text())
					}
					return err
				})
				if round >= 0 {
					first.s.add(round, ds)
				}
				if err != nil {
					return err
				}
				ds, err = timeN(nRepeat, func() error { _, err := bound.Render(sess, nil); return err })
				if round >= 0 {
					repeat.s.add(round, ds)
				}
				return err
			},
			func() error {
				var b peerBatch
				if err := node.call(map[string]any{"op": "render", "gen": peerAt, "iters": nPeer}, &b); err != nil {
					return err
				}
				peerAt += nPeer
				if round >= 0 {
					peer.s.add(round, nsToDurations(b.NS))
				}
				return nil
			})
	}
	check := func() error {
		r, err := build(fresh(w.Render, checkGen, ""))
		if err != nil {
			return err
		}
		again, err := bound.Render(sess, nil)
		if err != nil {
			return err
		}
		if err := sameText("unfold built afresh", r.Text(), "unfold bound", again.Text()); err != nil {
			return err
		}
		theirs, err := peerText(node, "render", checkGen)
		if err != nil {
			return err
		}
		return sameText("unfold", r.Text(), "prompt-tsx", theirs)
	}
	if err := sides(-1, 5, 10, 5); err != nil { // warm-up
		return nil, err
	}
	for round := range cfg.rounds {
		if err := sides(round, 20, 50, 10); err != nil {
			return nil, err
		}
		if err := check(); err != nil {
			return nil, fmt.Errorf("round %d: %w", round+1, err)
		}
	}
	return &table{
		name: "render",
		desc: "50 x 20 sections, every second child summarized (1,050 sections), fresh bodies every iteration",
		rows: []*row{first, repeat, peer},
		ratios: []ratio{
			{label: "prompt-tsx / unfold (build + render)", num: peer, den: first, target: "target: at least 20x"},
		},
		notes: []string{
			fmt.Sprintf("same text: after every round, unfold built afresh, unfold bound and prompt-tsx render one generation's tree to the same %d bytes (prompt-tsx's one user message, less the blank line after its last section)", oursBytes),
			"every timed iteration gets new bodies (each ends \"Revision N of <path>.\"), so unfold compiles 1,050 templates each time, as prompt-tsx fills its; the bound prompt reuses its executed bodies, which prompt-tsx cannot, so it has no ratio",
			"prompt-tsx gets a 4-bytes-a-token estimate as its tokenizer and an unbounded budget, so it measures rendering, not tokenization",
		},
	}, nil
}

// runBudget fits 1,000 sections into 8,000 o200k tokens: ours demotes to
// summaries; prompt-tsx prunes by priority, counting with gpt-tokenizer.
// Both fit fresh bodies every iteration; ours also fits a bound prompt
// again, which reuses its counts and has no peer to compare with. After
// every round the two sides' texts without a budget are checked equal, and
// ours fitted afresh against the bound prompt's fit.
func runBudget(cfg *config) (*table, error) {
	w := newWorkload()
	node, err := nodeWorker(cfg)
	if err != nil {
		return nil, err
	}
	defer node.close()
	if err := loadWorkload(cfg, node, w); err != nil {
		return nil, err
	}
	counter := bpe.O200kBase()
	if _, err := counter.CountErr("warm up the vocabulary"); err != nil {
		return nil, err
	}
	cold := &row{label: "unfold: build + bind + fit", per: "render"}
	warm := &row{label: "unfold: fit a bound prompt again", per: "render"}
	peer := &row{label: "prompt-tsx + gpt-tokenizer: build + fit", per: "render"}
	bind := func(specs []*spec) (*prompt.Prompt, error) {
		return prompt.MustNew("bench", "budget", sections(specs)...).Bind(w.Params)
	}
	fit := func(p *prompt.Prompt) (*prompt.Rendered, error) {
		return p.Render(nil, nil, prompt.WithBudget(w.BudgetTokens, counter))
	}
	bound, err := bind(fresh(w.Budget, checkGen, ""))
	if err != nil {
		return nil, err
	}
	gen, peerAt := goGen, peerGen
	next := func() []*spec { gen++; return fresh(w.Budget, gen, "") }
	var last peerBatch
	sides := func(round, nCold, nWarm, nPeer int) error {
		return rotate(round,
			func() error {
				ds, err := timeFresh(nCold, next, func(specs []*spec) error {
					p, err := bind(specs)
					if err == nil {
						_, err = fit(p)
					}
					return err
				})
				if round >= 0 {
					cold.s.add(round, ds)
				}
				if err != nil {
					return err
				}
				ds, err = timeN(nWarm, func() error { _, err := fit(bound); return err })
				if round >= 0 {
					warm.s.add(round, ds)
				}
				return err
			},
			func() error {
				if err := node.call(map[string]any{"op": "budget", "gen": peerAt, "iters": nPeer}, &last); err != nil {
					return err
				}
				peerAt += nPeer
				if round >= 0 {
					peer.s.add(round, nsToDurations(last.NS))
				}
				return nil
			})
	}
	var fullText string
	check := func() error {
		p, err := bind(fresh(w.Budget, checkGen, ""))
		if err != nil {
			return err
		}
		afresh, err := fit(p)
		if err != nil {
			return err
		}
		again, err := fit(bound)
		if err != nil {
			return err
		}
		if err := sameText("unfold fitted afresh", afresh.Text(), "unfold bound", again.Text()); err != nil {
			return err
		}
		full, err := p.Render(nil, nil)
		if err != nil {
			return err
		}
		fullText = full.Text()
		theirs, err := peerText(node, "budget", checkGen)
		if err != nil {
			return err
		}
		return sameText("unfold without a budget", fullText, "prompt-tsx without a budget", theirs)
	}
	if err := sides(-1, 2, 5, 2); err != nil {
		return nil, err
	}
	for round := range cfg.rounds {
		if err := sides(round, 5, 20, 4); err != nil {
			return nil, err
		}
		if err := check(); err != nil {
			return nil, fmt.Errorf("round %d: %w", round+1, err)
		}
	}
	r, err := fit(bound)
	if err != nil {
		return nil, err
	}
	oursText := counter.Count(r.Text())
	full, err := bound.Render(nil, nil, prompt.WithTokens(counter))
	if err != nil {
		return nil, err
	}
	inFull := 0
	for _, s := range r.Report() {
		if s.Visible && s.Mode == visibility.Full {
			inFull++
		}
	}
	pct := func(n int) string { return fmt.Sprintf("%.1f%%", float64(n)/float64(w.BudgetTokens)*100) }
	return &table{
		name: "budget",
		desc: fmt.Sprintf("1,000 sections (%d o200k tokens in full) fitted into %d tokens, fresh bodies every iteration", full.Tokens(), w.BudgetTokens),
		rows: []*row{cold, warm, peer},
		ratios: []ratio{
			{label: "prompt-tsx / unfold (build + fit)", num: peer, den: cold, target: "target: at least 20x"},
		},
		notes: []string{
			fmt.Sprintf("budget filled: unfold %s (%d tokens by its report, %d counting its text again, %d bytes, %d sections in full); prompt-tsx %s (%d tokens by its report, %d counting its text, %d bytes)",
				pct(r.Tokens()), r.Tokens(), oursText, len(r.Text()), inFull, pct(last.Tokens), last.Tokens, last.TextTokens, last.Bytes),
			fmt.Sprintf("same tree: after every round, unfold and prompt-tsx render one generation's tree without a budget to the same %d bytes, and unfold fits it afresh to the text the bound prompt fits", len(fullText)),
			"unfold demotes low-priority sections to their summaries; prompt-tsx removes low-priority elements (it has no summaries), so the fitted texts differ in kind",
			"the bound prompt reuses its token counts, which prompt-tsx cannot, so it has no ratio",
		},
	}, nil
}

// peerText asks the Node.js worker for the text prompt-tsx renders from
// the workload's tree at generation gen, without a budget.
func peerText(node *worker, workload string, gen int) (string, error) {
	var reply struct {
		Text string `json:"text"`
	}
	err := node.call(map[string]any{"op": "text", "workload": workload, "gen": gen}, &reply)
	return reply.Text, err
}

// sameText returns an error naming the first line where a and b differ.
func sameText(aName, a, bName, b string) error {
	if a == b {
		return nil
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			return fmt.Errorf("texts differ: %s (%d bytes) and %s (%d bytes) at line %d: %q and %q", aName, len(a), bName, len(b), i+1, x, y)
		}
	}
	return fmt.Errorf("texts differ: %s and %s", aName, bName)
}

// runTokens counts 1 MB of mixed markdown with both encodings.
func runTokens(cfg *config) (*table, error) {
	text := textgen.Markdown(1 << 20)
	file := filepath.Join(cfg.tmp, "mixed.md")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return nil, err
	}
	node, err := nodeWorker(cfg)
	if err != nil {
		return nil, err
	}
	defer node.close()
	t := &table{name: "tokens", desc: fmt.Sprintf("count %d bytes of mixed markdown", len(text))}
	for _, enc := range []string{"o200k_base", "cl100k_base"} {
		counter, err := bpe.For(enc)
		if err != nil {
			return nil, err
		}
		ours := &row{label: "unfold tokens/bpe " + enc, per: "count"}
		gpt := &row{label: "gpt-tokenizer " + enc, per: "count"}
		tik := &row{label: "js-tiktoken " + enc, per: "count"}
		var n, nGPT, nTik int
		peer := func(lib string, r *row, n *int, round, iters int) func() error {
			return func() error {
				var b peerBatch
				if err := node.call(map[string]any{"op": "count", "lib": lib, "encoding": enc, "file": file, "iters": iters}, &b); err != nil {
					return err
				}
				if round >= 0 {
					r.s.add(round, nsToDurations(b.NS))
				}
				*n = b.Count
				return nil
			}
		}
		for round := -1; round < cfg.rounds; round++ {
			iters := 3
			if round < 0 {
				iters = 1
			}
			err := rotate(max(round, 0),
				func() error {
					ds, err := timeN(iters, func() error {
						var err error
						n, err = counter.CountErr(text)
						return err
					})
					if round >= 0 {
						ours.s.add(round, ds)
					}
					return err
				},
				peer("gpt-tokenizer", gpt, &nGPT, round, iters),
				peer("js-tiktoken", tik, &nTik, round, iters))
			if err != nil {
				return nil, err
			}
		}
		agree := "agree"
		if n != nGPT || n != nTik {
			agree = "DIFFER"
		}
		t.rows = append(t.rows, ours, gpt, tik)
		t.ratios = append(t.ratios,
			ratio{label: "gpt-tokenizer / unfold " + enc, num: gpt, den: ours},
			ratio{label: "js-tiktoken / unfold " + enc, num: tik, den: ours})
		t.notes = append(t.notes, fmt.Sprintf("%s counts %s: unfold %d, gpt-tokenizer %d, js-tiktoken %d", enc, agree, n, nGPT, nTik))
	}
	return t, nil
}
