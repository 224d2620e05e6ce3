package prompt_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens/bpe"
	"github.com/unfold-dev/unfold/visibility"
)

type benchParams struct {
	Project string
	Owner   string
}

// benchBody is a few hundred bytes of prose with two template fields.
var benchBody = strings.Repeat("This paragraph explains one part of the task for {{.Project}} in plain words. ", 3) +
	"\n\nAsk {{.Owner}} before changing anything that ships.\n\n- keep changes small\n- test what you touch\n"

// benchNames holds the keys and titles of a benchmark tree, made once: in
// a program they are string literals, not formatted per build.
type benchNames struct {
	topKeys, topTitles, kidKeys, kidTitles []string
}

func newBenchNames(top, kids int) *benchNames {
	n := &benchNames{}
	for i := range top {
		n.topKeys = append(n.topKeys, fmt.Sprintf("section-%d", i))
		n.topTitles = append(n.topTitles, fmt.Sprintf("Section %d", i))
	}
	for j := range kids {
		n.kidKeys = append(n.kidKeys, fmt.Sprintf("child-%d", j))
		n.kidTitles = append(n.kidTitles, fmt.Sprintf("Child %d", j))
	}
	return n
}

// benchSections builds top sections with kids children each; every second
// child renders as SUMMARY.
func benchSections(top, kids int) []*section.Section {
	return newBenchNames(top, kids).sections()
}

func (n *benchNames) sections() []*section.Section {
	roots := make([]*section.Section, len(n.topKeys))
	for i := range roots {
		children := make([]*section.Section, len(n.kidKeys))
		for j := range children {
			spec := section.Spec[benchParams]{Key: n.kidKeys[j], Title: n.kidTitles[j], Body: benchBody}
			if j%2 == 1 {
				spec.Summary = "A summary of this child, available on request."
				spec.Visibility = visibility.Const(visibility.Summary)
			}
			children[j] = section.New(spec)
		}
		roots[i] = section.New(section.Spec[benchParams]{
			Key:      n.topKeys[i],
			Title:    n.topTitles[i],
			Body:     benchBody,
			Children: children,
		})
	}
	return roots
}

var benchBind = benchParams{Project: "unfold", Owner: "the release owner"}

func benchmarkRender(b *testing.B, top, kids int) {
	b.Run("first", func(b *testing.B) {
		sess := session.New()
		names := newBenchNames(top, kids)
		b.ReportAllocs()
		for b.Loop() {
			tmpl, err := prompt.New("bench", "render", names.sections()...)
			if err != nil {
				b.Fatal(err)
			}
			p, err := tmpl.Bind(benchBind)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.Render(sess, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(top*(kids+1)), "ns/section")
	})
	b.Run("repeat", func(b *testing.B) {
		sess := session.New()
		p := prompt.MustNew("bench", "render", benchSections(top, kids)...).MustBind(benchBind)
		if _, err := p.Render(sess, nil); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Render(sess, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(top*(kids+1)), "ns/section")
	})
}

// BenchmarkRender renders 50 top-level sections with 20 children each.
func BenchmarkRender(b *testing.B) { benchmarkRender(b, 50, 20) }

// BenchmarkRenderScale shows render cost against tree size: about 1k and
// 10k sections.
func BenchmarkRenderScale(b *testing.B) {
	b.Run("1k", func(b *testing.B) { benchmarkRender(b, 50, 19) })
	b.Run("10k", func(b *testing.B) { benchmarkRender(b, 500, 19) })
}

// budgetSections builds 50 top-level sections with 19 children each (1,000
// sections, about 200 KB), every one with a summary and a priority.
func budgetSections() []*section.Section { return scaleSections(1000) }

// BenchmarkRenderBudget fits a 1,000-section prompt into 8,000 exact o200k
// tokens: "cold" with no cached counts (every block counted once), "warm"
// rendering the same Prompt again.
func BenchmarkRenderBudget(b *testing.B) {
	counter := bpe.O200kBase()
	counter.Count("warm up the vocabulary")
	report := func(b *testing.B, p *prompt.Prompt) {
		full, err := p.Render(nil, nil, prompt.WithTokens(counter))
		if err != nil {
			b.Fatal(err)
		}
		r, err := p.Render(nil, nil, prompt.WithBudget(8000, counter))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(r.Tokens())/8000*100, "%budget")
		b.ReportMetric(float64(full.Tokens()), "full-tokens")
		b.ReportMetric(float64(len(full.Text()))/1024, "full-KB")
	}
	b.Run("cold", func(b *testing.B) {
		tmpl := prompt.MustNew("bench", "budget", budgetSections()...)
		for b.Loop() {
			p := tmpl.MustBind(benchBind)
			if _, err := p.Render(nil, nil, prompt.WithBudget(8000, counter)); err != nil {
				b.Fatal(err)
			}
		}
		report(b, tmpl.MustBind(benchBind))
	})
	b.Run("warm", func(b *testing.B) {
		p := prompt.MustNew("bench", "budget", budgetSections()...).MustBind(benchBind)
		if _, err := p.Render(nil, nil, prompt.WithBudget(8000, counter)); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := p.Render(nil, nil, prompt.WithBudget(8000, counter)); err != nil {
				b.Fatal(err)
			}
		}
		report(b, p)
	})
}

// scaleSections builds n/20 parts of 19 steps each (n sections), every one
// with a summary and a priority.
func scaleSections(n int) []*section.Section {
	body := strings.Repeat("Section {{.Project}} explains one step of the release in plain words for {{.Owner}}. ", 2) + "\n\n- check logs"
	roots := make([]*section.Section, n/20)
	for i := range roots {
		children := make([]*section.Section, 19)
		for j := range children {
			children[j] = section.New(section.Spec[benchParams]{
				Key: fmt.Sprintf("step-%d", j), Title: fmt.Sprintf("Step %d", j), Body: body,
				Summary: "Step details on request.", Priority: (i + j) % 7,
			})
		}
		roots[i] = section.New(section.Spec[benchParams]{
			Key: fmt.Sprintf("part-%d", i), Title: fmt.Sprintf("Part %d", i), Body: body,
			Summary: "Part details on request.", Priority: 3 + i%4, Children: children,
		})
	}
	return roots
}

// reportFit reports how r fills budget: the share of the budget its text
// takes and how many sections show in full.
func reportFit(b *testing.B, r *prompt.Rendered, budget int) {
	full := 0
	for _, s := range r.Report() {
		if s.Visible && s.Mode == visibility.Full {
			full++
		}
	}
	b.ReportMetric(float64(r.Tokens())/float64(budget)*100, "%budget")
	b.ReportMetric(float64(full), "full-sections")
}

// scaleBudgets are the budgets BenchmarkBudgetScale fits each tree into, in
// tokens a section. What fitting costs depends on where the budget leaves
// off: when the room left is about what one more part would take, every
// part after it is counted almost in full before it is found not to fit.
// One budget alone would measure that remainder, at any size; a spread of
// them measures the size.
var scaleBudgets = []float64{7.5, 7.75, 8, 8.25, 8.5, 8.75}

// workCounter counts o200k tokens and how often it is asked to count and
// to bound, so the benchmark can report the counting work a fit does.
type workCounter struct {
	*bpe.Counter
	counts, bounds atomic.Int64
}

func (c *workCounter) Count(text string) int { c.counts.Add(1); return c.Counter.Count(text) }

func (c *workCounter) LowerBound(text string) int { c.bounds.Add(1); return c.Counter.LowerBound(text) }

// BenchmarkBudgetScale fits trees of 1k, 10k and 100k sections (parts of 19
// steps, as BenchmarkRenderBudget) into each of scaleBudgets: "cold" binds a
// new Prompt each time, so nothing is cached, "warm" renders one Prompt
// again. One op fits every budget once, or as many times as makes 10k
// sections a budget cold and 100k warm (a 1k tree ten times cold, a hundred
// times warm), so that an op takes about as long at every size and stands
// as far above the noise of the clock and of garbage collection at 1k as
// at 100k. ns/section (and cpu-ns/section, the processor time, which a busy
// machine disturbs less) should not grow with the tree; counts/section and
// bounds/section are the counter's work, which cached counts spare a warm
// fit. %budget is the least full of the fitted prompts, full-sections the
// mean number shown in full.
func BenchmarkBudgetScale(b *testing.B) {
	counter := &workCounter{Counter: bpe.O200kBase()}
	counter.Count("warm up the vocabulary")
	for _, n := range []int{1000, 10000, 100000} {
		// Built when a benchmark of its size runs, so that the trees of
		// other sizes are not in the heap.
		tmpl := sync.OnceValue(func() *prompt.Template { return prompt.MustNew("bench", "scale", scaleSections(n)...) })
		fitAll := func(b *testing.B, p func() *prompt.Prompt, rs []*prompt.Rendered) {
			for j, per := range scaleBudgets {
				r, err := p().Render(nil, nil, prompt.WithBudget(int(per*float64(n)), counter))
				if err != nil {
					b.Fatal(err)
				}
				rs[j] = r
			}
		}
		fit := func(b *testing.B, p func() *prompt.Prompt, sections int) {
			rs := make([]*prompt.Rendered, len(scaleBudgets))
			fitAll(b, p, rs)
			counter.counts.Store(0)
			counter.bounds.Store(0)
			reps := max(1, sections/n)
			var cpu time.Duration
			for b.Loop() {
				start := processTime()
				for range reps {
					fitAll(b, p, rs)
				}
				cpu += processTime() - start
			}
			fits := float64(b.N) * float64(reps) * float64(len(scaleBudgets)) * float64(n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/fits, "ns/section")
			if cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/fits, "cpu-ns/section")
			}
			b.ReportMetric(float64(counter.counts.Load())/fits, "counts/section")
			b.ReportMetric(float64(counter.bounds.Load())/fits, "bounds/section")
			least, full := 100.0, 0
			for j, r := range rs {
				least = min(least, float64(r.Tokens())/(scaleBudgets[j]*float64(n))*100)
				for _, s := range r.Report() {
					if s.Visible && s.Mode == visibility.Full {
						full++
					}
				}
			}
			b.ReportMetric(least, "%budget")
			b.ReportMetric(float64(full)/float64(len(rs)), "full-sections")
		}
		b.Run(fmt.Sprintf("%dk/cold", n/1000), func(b *testing.B) {
			t := tmpl()
			fit(b, func() *prompt.Prompt { return t.MustBind(benchBind) }, 10_000)
		})
		b.Run(fmt.Sprintf("%dk/warm", n/1000), func(b *testing.B) {
			p := tmpl().MustBind(benchBind)
			fit(b, func() *prompt.Prompt { return p }, 100_000)
		})
	}
}

// BenchmarkBudgetFill fits BenchmarkRenderBudget's 1,000 sections into
// budgets from 1k to 8k o200k tokens and reports how full each prompt is
// and how many sections it shows in full. A budget the smallest prompt
// cannot meet reports 0 and its minimum.
func BenchmarkBudgetFill(b *testing.B) {
	counter := bpe.O200kBase()
	p := prompt.MustNew("bench", "budget", budgetSections()...).MustBind(benchBind)
	for budget := 1000; budget <= 8000; budget += 1000 {
		b.Run(fmt.Sprintf("%dk", budget/1000), func(b *testing.B) {
			var r *prompt.Rendered
			var err error
			for b.Loop() {
				r, err = p.Render(nil, nil, prompt.WithBudget(budget, counter))
			}
			var be *prompt.BudgetError
			if errors.As(err, &be) {
				b.ReportMetric(0, "%budget")
				b.ReportMetric(float64(be.Minimum), "min-tokens")
				return
			}
			if err != nil {
				b.Fatal(err)
			}
			reportFit(b, r, budget)
		})
	}
}
