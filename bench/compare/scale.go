package main

import (
	"fmt"
	"strings"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tokens/bpe"
)

// runScale fits the budget workload's tree at 1k, 10k and 100k sections
// into 8 o200k tokens a section, to show that fitting costs the same per
// section at any size: built afresh (fresh bodies, nothing cached) and a
// bound prompt fitted again. unfold only: there is no peer to compare.
func runScale(cfg *config) (*table, error) {
	counter := bpe.O200kBase()
	if _, err := counter.CountErr("warm up the vocabulary"); err != nil {
		return nil, err
	}
	params := newWorkload().Params
	t := &table{name: "scale", desc: "the budget tree (parts of 19 steps, all with summaries and priorities) at 1k, 10k and 100k sections, fitted into 8 o200k tokens a section"}
	var cold, warm []string
	for _, n := range []int{1000, 10000, 100000} {
		specs := budgetSpecs(n / 20)
		budget := 8 * n
		build := func(specs []*spec) (*prompt.Prompt, error) {
			return prompt.MustNew("bench", "scale", sections(specs)...).Bind(params)
		}
		fit := func(p *prompt.Prompt) (*prompt.Rendered, error) {
			return p.Render(nil, nil, prompt.WithBudget(budget, counter))
		}
		bound, err := build(fresh(specs, checkGen, ""))
		if err != nil {
			return nil, err
		}
		r, err := fit(bound)
		if err != nil {
			return nil, err
		}
		size := fmt.Sprintf("%dk", n/1000)
		c := &row{label: "unfold " + size + ": build + bind + fit", per: "render"}
		w := &row{label: "unfold " + size + ": fit a bound prompt again", per: "render"}
		// About 100 ms of work per side and round, whatever the size.
		nCold, nWarm := max(1, 50_000/n), max(2, 1_000_000/n)
		gen := goGen
		next := func() []*spec { gen++; return fresh(specs, gen, "") }
		for round := -1; round < cfg.rounds; round++ {
			ds, err := timeFresh(nCold, next, func(specs []*spec) error {
				p, err := build(specs)
				if err == nil {
					_, err = fit(p)
				}
				return err
			})
			if err != nil {
				return nil, err
			}
			ws, err := timeN(nWarm, func() error { _, err := fit(bound); return err })
			if err != nil {
				return nil, err
			}
			if round >= 0 { // the first round warms up
				c.s.add(round, ds)
				w.s.add(round, ws)
			}
		}
		perSection := func(r *row) string {
			return fmt.Sprintf("%s %d ns", size, r.s.median().Nanoseconds()/int64(n))
		}
		cold, warm = append(cold, perSection(c)), append(warm, perSection(w))
		t.rows = append(t.rows, c, w)
		t.notes = append(t.notes, fmt.Sprintf("%s: %.1f%% of the budget filled, %d tokens", size, float64(r.Tokens())/float64(budget)*100, r.Tokens()))
	}
	t.notes = append([]string{
		"per section, built afresh: " + strings.Join(cold, ", "),
		"per section, a bound prompt again: " + strings.Join(warm, ", "),
	}, t.notes...)
	return t, nil
}
