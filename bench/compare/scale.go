package main

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tokens/bpe"
)

// scaleBudgets are the budgets the scale workload fits each tree into, in
// o200k tokens a section. What fitting costs depends on where the budget
// leaves off (when the room left is about what one more part takes, every
// part after it is counted nearly in full before it is found not to fit),
// so one budget alone measures that remainder, at any size; the spread
// measures the size.
var scaleBudgets = []float64{7.5, 7.75, 8, 8.25, 8.5, 8.75}

// runScale fits the budget workload's tree at 1k, 10k and 100k sections
// into each of scaleBudgets, to show that fitting costs the same per
// section at any size: a new prompt bound from a template built on fresh
// bodies (one for each budget, nothing executed or counted yet; the builds are not timed),
// and a bound prompt fitted again. One timed iteration fits every budget
// once. unfold only: there is no peer to compare. Besides the wall clock,
// it notes the processor time per section, which other work on a shared
// machine disturbs less.
func runScale(cfg *config) (*table, error) {
	counter := bpe.O200kBase()
	if _, err := counter.CountErr("warm up the vocabulary"); err != nil {
		return nil, err
	}
	params := newWorkload().Params
	t := &table{name: "scale", desc: fmt.Sprintf("the budget tree (parts of 19 steps, all with summaries and priorities) at 1k, 10k and 100k sections, fitted into %s o200k tokens a section (one iteration fits all %d)", joinBudgets(), len(scaleBudgets))}
	var cold, warm, fill []string
	for _, n := range []int{1000, 10000, 100000} {
		specs := budgetSpecs(n / 20)
		budgets := make([]int, len(scaleBudgets))
		for i, per := range scaleBudgets {
			budgets[i] = int(per * float64(n))
		}
		// fitAll fits the prompt next gives for each budget into it and
		// returns the least full of them, as a share of its budget.
		fitAll := func(next func(i int) (*prompt.Prompt, error)) (least float64, err error) {
			least = 1
			for i, budget := range budgets {
				p, err := next(i)
				if err != nil {
					return 0, err
				}
				r, err := p.Render(nil, nil, prompt.WithBudget(budget, counter))
				if err != nil {
					return 0, err
				}
				least = min(least, float64(r.Tokens())/float64(budget))
			}
			return least, nil
		}
		bound, err := prompt.MustNew("bench", "scale", sections(fresh(specs, checkGen, ""))...).Bind(params)
		if err != nil {
			return nil, err
		}
		again := func(int) (*prompt.Prompt, error) { return bound, nil }
		least, err := fitAll(again)
		if err != nil {
			return nil, err
		}
		size := fmt.Sprintf("%dk", n/1000)
		c := &row{label: "unfold " + size + ": bind + fit", per: "render"}
		w := &row{label: "unfold " + size + ": fit a bound prompt again", per: "render"}
		// About 100 ms of work per side and round, whatever the size.
		nCold, nWarm := max(1, 50_000/n/len(budgets)), max(2, 1_000_000/n/len(budgets))
		gen := goGen
		// next builds a template on fresh bodies for each budget.
		next := func() []*prompt.Template {
			tmpls := make([]*prompt.Template, len(budgets))
			for i := range tmpls {
				gen++
				tmpls[i] = prompt.MustNew("bench", "scale", sections(fresh(specs, gen, ""))...)
			}
			return tmpls
		}
		var coldCPU, warmCPU time.Duration
		for round := -1; round < cfg.rounds; round++ {
			cpu0 := processTime()
			var built time.Duration // processor time spent building templates
			ds, err := timeFresh(nCold, func() []*prompt.Template {
				b0 := processTime()
				defer func() { built += processTime() - b0 }()
				return next()
			}, func(tmpls []*prompt.Template) error {
				_, err := fitAll(func(i int) (*prompt.Prompt, error) { return tmpls[i].Bind(params) })
				return err
			})
			if err != nil {
				return nil, err
			}
			cpu1 := processTime()
			ws, err := timeN(nWarm, func() error { _, err := fitAll(again); return err })
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
		fits := int64(n * len(budgets))
		perSection := func(r *row, cpu time.Duration) string {
			return fmt.Sprintf("%s %d ns (%d ns of processor time)", size, r.s.median().Nanoseconds()/fits, cpu.Nanoseconds()/int64(r.s.count())/fits)
		}
		cold = append(cold, perSection(c, coldCPU))
		warm = append(warm, perSection(w, warmCPU))
		fill = append(fill, fmt.Sprintf("%s %.1f%%", size, least*100))
		t.rows = append(t.rows, c, w)
	}
	t.notes = []string{
		"per section, new prompts bound and fitted: " + strings.Join(cold, ", "),
		"per section, a bound prompt fitted again: " + strings.Join(warm, ", "),
		"budget filled, the least full of the fitted prompts: " + strings.Join(fill, ", "),
	}
	return t, nil
}

// joinBudgets lists scaleBudgets as "7.5, 7.75, ... and 8.75".
func joinBudgets() string {
	parts := make([]string, len(scaleBudgets))
	for i, per := range scaleBudgets {
		parts[i] = strconv.FormatFloat(per, 'f', -1, 64)
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// processTime is the processor time this process has used, all threads.
func processTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
