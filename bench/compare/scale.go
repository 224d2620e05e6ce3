package main

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tokens/bpe"
)

// runScale fits the budget workload's tree at 1k, 10k and 100k sections
// into 8 o200k tokens a section, to show that fitting costs the same per
// section at any size: a new prompt bound from a template built on fresh
// bodies (nothing executed or counted yet; the build itself is not timed),
// and a bound prompt fitted again. unfold only: there is no peer to
// compare. Besides the wall clock, it notes the processor time per
// section, which other work on a shared machine disturbs less.
func runScale(cfg *config) (*table, error) {
	counter := bpe.O200kBase()
	if _, err := counter.CountErr("warm up the vocabulary"); err != nil {
		return nil, err
	}
	params := newWorkload().Params
	t := &table{name: "scale", desc: "the budget tree (parts of 19 steps, all with summaries and priorities) at 1k, 10k and 100k sections, fitted into 8 o200k tokens a section"}
	var cold, warm, fill []string
	for _, n := range []int{1000, 10000, 100000} {
		specs := budgetSpecs(n / 20)
		budget := 8 * n
		fit := func(p *prompt.Prompt) (*prompt.Rendered, error) {
			return p.Render(nil, nil, prompt.WithBudget(budget, counter))
		}
		bound, err := prompt.MustNew("bench", "scale", sections(fresh(specs, checkGen, ""))...).Bind(params)
		if err != nil {
			return nil, err
		}
		r, err := fit(bound)
		if err != nil {
			return nil, err
		}
		size := fmt.Sprintf("%dk", n/1000)
		c := &row{label: "unfold " + size + ": bind + fit", per: "render"}
		w := &row{label: "unfold " + size + ": fit a bound prompt again", per: "render"}
		// About 100 ms of work per side and round, whatever the size.
		nCold, nWarm := max(1, 50_000/n), max(2, 1_000_000/n)
		gen := goGen
		next := func() *prompt.Template {
			gen++
			return prompt.MustNew("bench", "scale", sections(fresh(specs, gen, ""))...)
		}
		var coldCPU, warmCPU time.Duration
		for round := -1; round < cfg.rounds; round++ {
			cpu0 := processTime()
			var built time.Duration // processor time spent building templates
			ds, err := timeFresh(nCold, func() *prompt.Template {
				b0 := processTime()
				defer func() { built += processTime() - b0 }()
				return next()
			}, func(tmpl *prompt.Template) error {
				p, err := tmpl.Bind(params)
				if err == nil {
					_, err = fit(p)
				}
				return err
			})
			if err != nil {
				return nil, err
			}
			cpu1 := processTime()
			ws, err := timeN(nWarm, func() error { _, err := fit(bound); return err })
			if err != nil {
				return nil, err
			}
			if round >= 0 { // the first round warms up
				c.s.add(round, ds)
				w.s.add(round, ws)
				coldCPU += cpu1 - cpu0 - built
				warmCPU += processTime() - cpu1
			}
		}
		perSection := func(r *row, cpu time.Duration) string {
			return fmt.Sprintf("%s %d ns (%d ns of processor time)", size, r.s.median().Nanoseconds()/int64(n), cpu.Nanoseconds()/int64(r.s.count())/int64(n))
		}
		cold = append(cold, perSection(c, coldCPU))
		warm = append(warm, perSection(w, warmCPU))
		fill = append(fill, fmt.Sprintf("%s %.1f%% (%d tokens)", size, float64(r.Tokens())/float64(budget)*100, r.Tokens()))
		t.rows = append(t.rows, c, w)
	}
	t.notes = []string{
		"per section, a new prompt bound and fitted: " + strings.Join(cold, ", "),
		"per section, a bound prompt fitted again: " + strings.Join(warm, ", "),
		"budget filled: " + strings.Join(fill, ", "),
	}
	return t, nil
}

// processTime is the processor time this process has used, all threads.
func processTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
