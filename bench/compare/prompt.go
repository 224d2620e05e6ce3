package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/unfold-dev/unfold/internal/textgen"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens/bpe"
)

// runRender is the 50 x 20 render: ours from the spec list to text (build,
// bind, render) and again on a bound prompt; prompt-tsx from the same list
// to messages.
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
	repeat := &row{label: "unfold: render a bound prompt", per: "render"}
	peer := &row{label: "@vscode/prompt-tsx: build + render", per: "render"}
	var oursText string
	build := func() error {
		tmpl, err := prompt.New("bench", "render", sections(w.Render)...)
		if err != nil {
			return err
		}
		p, err := tmpl.Bind(w.Params)
		if err != nil {
			return err
		}
		r, err := p.Render(session.New(), nil)
		if err == nil {
			oursText = r.Text()
		}
		return err
	}
	bound, err := prompt.MustNew("bench", "render", sections(w.Render)...).Bind(w.Params)
	if err != nil {
		return nil, err
	}
	sess := session.New()
	var peerBytes int
	sides := func(round int, nFirst, nRepeat, nPeer int) error {
		return rotate(round,
			func() error {
				ds, err := timeN(nFirst, build)
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
				if err := node.call(map[string]any{"op": "render", "iters": nPeer}, &b); err != nil {
					return err
				}
				if round >= 0 {
					peer.s.add(round, nsToDurations(b.NS))
				}
				peerBytes = b.Bytes
				return nil
			})
	}
	if err := sides(-1, 5, 10, 5); err != nil { // warm-up
		return nil, err
	}
	for round := range cfg.rounds {
		if err := sides(round, 20, 50, 10); err != nil {
			return nil, err
		}
	}
	return &table{
		name: "render",
		desc: "50 x 20 sections, every second child summarized (1,050 sections)",
		rows: []*row{first, repeat, peer},
		ratios: []ratio{
			{label: "prompt-tsx / unfold (build + render)", num: peer, den: first, target: "target: at least 20x"},
			{label: "prompt-tsx / unfold (bound prompt)", num: peer, den: repeat},
		},
		notes: []string{
			fmt.Sprintf("text size: unfold %d bytes, prompt-tsx %d bytes", len(oursText), peerBytes),
			"prompt-tsx gets a 4-bytes-a-token estimate as its tokenizer and an unbounded budget, so it measures rendering, not tokenization",
		},
	}, nil
}

// runBudget fits 1,000 sections into 8,000 o200k tokens: ours demotes to
// summaries; prompt-tsx prunes by priority, counting with gpt-tokenizer.
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
	cold := &row{label: "unfold: build + bind + fit (no cached counts)", per: "render"}
	warm := &row{label: "unfold: fit a bound prompt again", per: "render"}
	peer := &row{label: "prompt-tsx + gpt-tokenizer: build + fit", per: "render"}
	var oursTokens, oursText, oursBytes int
	fit := func() error {
		p, err := prompt.MustNew("bench", "budget", sections(w.Budget)...).Bind(w.Params)
		if err != nil {
			return err
		}
		r, err := p.Render(nil, nil, prompt.WithBudget(w.BudgetTokens, counter))
		if err == nil {
			oursTokens, oursBytes = r.Tokens(), len(r.Text())
		}
		return err
	}
	bound, err := prompt.MustNew("bench", "budget", sections(w.Budget)...).Bind(w.Params)
	if err != nil {
		return nil, err
	}
	var last peerBatch
	sides := func(round, nCold, nWarm, nPeer int) error {
		return rotate(round,
			func() error {
				ds, err := timeN(nCold, fit)
				if round >= 0 {
					cold.s.add(round, ds)
				}
				if err != nil {
					return err
				}
				ds, err = timeN(nWarm, func() error {
					_, err := bound.Render(nil, nil, prompt.WithBudget(w.BudgetTokens, counter))
					return err
				})
				if round >= 0 {
					warm.s.add(round, ds)
				}
				return err
			},
			func() error {
				if err := node.call(map[string]any{"op": "budget", "iters": nPeer}, &last); err != nil {
					return err
				}
				if round >= 0 {
					peer.s.add(round, nsToDurations(last.NS))
				}
				return nil
			})
	}
	if err := sides(-1, 2, 5, 2); err != nil {
		return nil, err
	}
	for round := range cfg.rounds {
		if err := sides(round, 5, 20, 4); err != nil {
			return nil, err
		}
	}
	r, err := bound.Render(nil, nil, prompt.WithBudget(w.BudgetTokens, counter))
	if err != nil {
		return nil, err
	}
	oursText = counter.Count(r.Text())
	full, err := bound.Render(nil, nil, prompt.WithTokens(counter))
	if err != nil {
		return nil, err
	}
	pct := func(n int) string { return fmt.Sprintf("%.1f%%", float64(n)/float64(w.BudgetTokens)*100) }
	return &table{
		name: "budget",
		desc: fmt.Sprintf("1,000 sections (%d o200k tokens in full) fitted into %d tokens", full.Tokens(), w.BudgetTokens),
		rows: []*row{cold, warm, peer},
		ratios: []ratio{
			{label: "prompt-tsx / unfold (no cached counts)", num: peer, den: cold, target: "target: at least 20x"},
			{label: "prompt-tsx / unfold (bound prompt)", num: peer, den: warm},
		},
		notes: []string{
			fmt.Sprintf("budget filled: unfold %s (%d tokens by its report, %d counting its text again, %d bytes); prompt-tsx %s (%d tokens by its report, %d counting its text, %d bytes)",
				pct(oursTokens), oursTokens, oursText, oursBytes, pct(last.Tokens), last.Tokens, last.TextTokens, last.Bytes),
			"unfold demotes low-priority sections to their summaries; prompt-tsx removes low-priority elements (it has no summaries), so the texts differ in kind",
		},
	}, nil
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
