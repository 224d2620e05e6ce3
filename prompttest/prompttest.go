// Package prompttest helps unit-test prompts: golden files that show a
// difference as a unified diff, rendering a prompt across combinations of
// open and summarized sections and across token budgets, and assertions on
// token counts.
//
//	func TestPrompt(t *testing.T) {
//		p := tmpl.MustBind(Task{Goal: "g"})
//		for _, c := range prompttest.Combinations(t, p, prompttest.Options{Budgets: []int{0, 4000}, Counter: bpe.O200kBase()}) {
//			prompttest.Golden(t, "prompt/"+c.Name+".md", c.Text())
//		}
//	}
//
// # Updating golden files
//
// [Golden] rewrites the files instead of comparing when the environment has
// UNFOLD_UPDATE_GOLDEN=1:
//
//	UNFOLD_UPDATE_GOLDEN=1 go test ./...
//
// or when the test says so with [Update], for instance from a flag of its
// own; the package registers no flag:
//
//	var update = flag.Bool("update", false, "rewrite golden files")
//
//	prompttest.Golden(t, "prompt/default.md", r.Text(), prompttest.Update(*update))
//
// A golden file that is a symbolic link is written through to the file it
// leads to, with that file's permissions. Golden files are compared byte
// for byte: on Windows, a checkout with core.autocrlf turns their line
// endings into CRLF and every one differs, which the failure says. The
// line
//
//	**/testdata/** -text
//
// in the module's .gitattributes keeps them as committed.
//
// # Token assertions
//
// [TokensAtMost], [TokensBetween] and [SectionTokensAtMost] take a rendered
// prompt; a case's render may have failed (over its budget), and
// [Case.Require] returns it or fails the test with the case's name and error:
//
//	prompttest.SectionTokensAtMost(t, c.Require(t), "ref", 2000)
package prompttest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/internal/golden"
	"github.com/unfold-dev/unfold/internal/utf8cut"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/visibility"
)

// Updating reports whether the environment asks for golden files to be
// rewritten: UNFOLD_UPDATE_GOLDEN=1 (or true). A value that is not a
// boolean counts as no, and makes Golden fail, with an [Update] option
// too.
func Updating() bool {
	on, _ := golden.Update()
	return on
}

// GoldenOption configures one [Golden] check.
type GoldenOption func(*goldenOptions)

type goldenOptions struct {
	update bool
}

// Update makes Golden rewrite the file when on is true, whatever the
// environment says.
func Update(on bool) GoldenOption {
	return func(o *goldenOptions) { o.update = o.update || on }
}

// Golden compares got with the file testdata/<name> (a slash-separated
// path inside testdata: a name with .. that leaves it, or an absolute one,
// fails the test). A difference fails the test and shows a unified diff from the file
// to got. The file is written instead, with any directories it needs, when
// an [Update] option says so or the environment has UNFOLD_UPDATE_GOLDEN=1.
func Golden(t testing.TB, name, got string, opts ...GoldenOption) {
	t.Helper()
	var o goldenOptions
	for _, opt := range opts {
		opt(&o)
	}
	golden.CheckForce(t, name, got, o.update)
}

// Options configures [Combinations].
type Options struct {
	// Budgets to render each combination with; 0 means no budget. Empty
	// means one render without a budget.
	Budgets []int
	// Counter counts tokens for budgets and reports; required with a
	// non-zero budget.
	Counter tokens.Counter
	// MaxCombinations bounds how many open/summarized combinations are
	// rendered (each with every budget); above it a fixed-seed sample is
	// taken, always including all open and, from 2 on, all summarized. 0
	// means 64.
	MaxCombinations int
}

// MaxCaseName bounds the length of a [Case] name, so that it serves as a
// file name ("prompt/"+c.Name+".md" for [Golden]) and a subtest name
// however many sections a prompt has: a longer list of choices is cut
// and ends in "~" and 16 hexadecimal digits of its SHA-256, which keep
// names apart, then the budget.
const MaxCaseName = 200

// Case is one render of a prompt.
type Case struct {
	// Name lists the choices asked for and the budget:
	// "ref=full,ref.api=summary,guide=summary@4000"; see [MaxCaseName]. A
	// section under a summarized one is not listed: it does not render.
	// With a budget, a choice that is the section's declared mode is left
	// to the budget, which may summarize it: the name says what was asked
	// (its choices are the same under every budget), and Rendered.Report
	// how each section rendered.
	Name      string
	Overrides map[string]visibility.Mode // the session overrides it was rendered with (choices that differ from the declared mode); the case's own map
	Budget    int                        // 0 for none
	Rendered  *prompt.Rendered           // nil when Err is set
	Err       error                      // the render's error, such as a *prompt.BudgetError
}

// Text returns the rendered text, or "error: ..." when the render failed, so
// goldens pin failures too.
func (c Case) Text() string {
	if c.Err != nil {
		return "error: " + c.Err.Error() + "\n"
	}
	return c.Rendered.Text() + "\n"
}

// Combinations renders p with every combination of FULL and SUMMARY for
// the sections that have a summary (or a sample, see Options), each with
// every budget. The sections under a summarized one do not render, so
// their choices are not varied there: every combination renders
// differently. A choice that differs from the section's declared mode is a
// session override (so a section chosen FULL against its declaration is one
// the model opened, which budgets never demote); a choice that matches it
// is left to the budget, which may summarize it all the same (see
// [Case].Name). Rendering errors are kept in the cases; misuse fails t.
func Combinations(t testing.TB, p *prompt.Prompt, opts Options) []Case {
	t.Helper()
	r, err := p.Render(nil, nil)
	if err != nil {
		t.Fatalf("prompttest: render: %v", err)
	}
	var paths []string
	declared := map[string]visibility.Mode{}
	for _, s := range r.Report() {
		if s.Enabled && hasSummary(p, s.Path) {
			paths = append(paths, s.Path)
			declared[s.Path] = s.Mode
		}
	}
	if len(paths) > 63 {
		t.Fatalf("prompttest: %d sections have summaries; combinations cover at most 63", len(paths))
	}
	budgets := opts.Budgets
	if len(budgets) == 0 {
		budgets = []int{0}
	}
	for _, b := range budgets {
		if b != 0 && opts.Counter == nil {
			t.Fatalf("prompttest: budget %d needs Options.Counter", b)
		}
	}
	// parent[i] is the nearest section of paths that holds paths[i], or -1:
	// a section under a summarized one does not render, so its choice is
	// left out of the cases where that one is summarized.
	parent := make([]int, len(paths))
	for i, path := range paths {
		parent[i] = -1
		for j := i - 1; j >= 0; j-- {
			if strings.HasPrefix(path, paths[j]+".") {
				parent[i] = j
				break
			}
		}
	}
	var cases []Case
	for _, combo := range combinations(parent, cmpOr(opts.MaxCombinations, 64)) {
		// A section is pinned by a session override only where the choice
		// differs from how it renders anyway: pinned open, as the model
		// opening it, or pinned summarized. Sections left as declared stay
		// free for a budget to demote.
		ov := make(map[string]visibility.Mode, len(paths))
		var name []string
		for i, path := range paths {
			if p := parent[i]; p >= 0 && combo&(1<<p) == 0 {
				continue
			}
			m := visibility.Summary
			if combo&(1<<i) != 0 {
				m = visibility.Full
			}
			if m != declared[path] {
				ov[path] = m
			}
			name = append(name, path+"="+strings.ToLower(m.String()))
		}
		for _, b := range budgets {
			// Each case owns its map: a caller changing one case's
			// overrides leaves the other budgets' cases as rendered.
			c := Case{Name: caseName(name, b), Overrides: maps.Clone(ov), Budget: b}
			sess := session.New()
			if err := visibility.Register(sess); err != nil {
				t.Fatalf("prompttest: %v", err)
			}
			for _, path := range slices.Sorted(maps.Keys(ov)) {
				if err := sess.Dispatch(visibility.SetOverride{Path: path, Mode: ov[path]}); err != nil {
					t.Fatalf("prompttest: %v", err)
				}
			}
			var ro []prompt.RenderOption
			if b != 0 {
				ro = append(ro, prompt.WithBudget(b, opts.Counter))
			} else if opts.Counter != nil {
				ro = append(ro, prompt.WithTokens(opts.Counter))
			}
			c.Rendered, c.Err = p.Render(sess, nil, ro...)
			cases = append(cases, c)
		}
	}
	return cases
}

// caseName joins a combination's choices and its budget (0 for none)
// into a name of at most MaxCaseName bytes.
func caseName(choices []string, budget int) string {
	name := strings.Join(choices, ",")
	if name == "" {
		name = "default"
	}
	suffix := ""
	if budget != 0 {
		suffix = fmt.Sprintf("@%d", budget)
	}
	if len(name)+len(suffix) > MaxCaseName {
		sum := sha256.Sum256([]byte(name))
		tag := "~" + hex.EncodeToString(sum[:8])
		name = utf8cut.Prefix(name, MaxCaseName-len(tag)-len(suffix)) + tag
	}
	return name + suffix
}

func hasSummary(p *prompt.Prompt, path string) bool {
	s, ok := p.Template().Section(path)
	return ok && s.Summary() != ""
}

// combinations returns bit sets over the sections of parent (1 open, 0
// summarized; parent[i] the index of the nearest section holding section
// i, before it, or -1), in which a section under a summarized one is 0, as
// it does not render: all of them, in increasing order, when they are at
// most max; otherwise all-summarized, all-open and a fixed-seed sample
// drawn evenly from them; only all-open when max is 1.
func combinations(parent []int, max int) []uint64 {
	n := len(parent)
	// count[i] is how many combinations section i and those under it have:
	// summarized, or open with every combination of its children. Each is
	// at most 2^n, so with n <= 63 none overflows.
	count := make([]uint64, n)
	for i := range count {
		count[i] = 1
	}
	total := uint64(1)
	for i := n - 1; i >= 0; i-- {
		count[i]++ // summarized
		if p := parent[i]; p >= 0 {
			count[p] *= count[i]
		} else {
			total *= count[i]
		}
	}
	open := func(c uint64, i int) bool { p := parent[i]; return p < 0 || c&(1<<p) != 0 }
	if total <= uint64(max) {
		out := []uint64{0}
		for i := range n {
			for _, c := range out {
				if open(c, i) {
					out = append(out, c|1<<i)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	all := uint64(1)<<n - 1
	if max == 1 {
		return []uint64{all}
	}
	seen := map[uint64]bool{0: true, all: true}
	out := []uint64{0, all}
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	for len(out) < max {
		// Section i is open with probability 1-1/count[i], so that every
		// combination is as likely; a section with nothing under it takes
		// its bit of u, which for a prompt without nested summaries makes
		// the sample u itself.
		u, c := rng.Uint64(), uint64(0)
		for i := range n {
			if !open(c, i) {
				continue
			}
			if count[i] == 2 && u&(1<<i) != 0 || count[i] > 2 && rng.Uint64N(count[i]) != 0 {
				c |= 1 << i
			}
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

func cmpOr(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// Require returns the case's render, failing t with the case's name and
// its error when the render failed (Rendered is nil then), so that an
// assertion on a case reads
//
//	prompttest.TokensAtMost(t, c.Require(t), counter, 4000)
func (c Case) Require(t testing.TB) *prompt.Rendered {
	t.Helper()
	if c.Rendered == nil {
		t.Fatalf("prompttest: case %s did not render: %v", c.Name, c.Err)
	}
	return c.Rendered
}

// rendered fails t when r is nil: the render it came from failed, and
// Case.Err says why.
func rendered(t testing.TB, fn string, r *prompt.Rendered) bool {
	t.Helper()
	if r == nil {
		t.Fatalf("prompttest: %s: no rendered prompt (nil): its render failed; pass c.Require(t) to fail with the case's name and error", fn)
		return false
	}
	return true
}

// TokensAtMost fails t when the rendered prompt has more than max tokens as
// counted by c; r nil (a [Case] whose render failed) fails t too.
func TokensAtMost(t testing.TB, r *prompt.Rendered, c tokens.Counter, max int) {
	t.Helper()
	if !rendered(t, "TokensAtMost", r) {
		return
	}
	if n := c.Count(r.Text()); n > max {
		t.Errorf("prompttest: prompt has %d tokens, want at most %d", n, max)
	}
}

// TokensBetween fails t unless the rendered prompt has between min and max
// tokens (inclusive) as counted by c; r nil fails t.
func TokensBetween(t testing.TB, r *prompt.Rendered, c tokens.Counter, min, max int) {
	t.Helper()
	if !rendered(t, "TokensBetween", r) {
		return
	}
	if n := c.Count(r.Text()); n < min || n > max {
		t.Errorf("prompttest: prompt has %d tokens, want %d to %d", n, min, max)
	}
}

// SectionTokensAtMost fails t when the section at path, as rendered, has
// more than max tokens: its own block and those of its visible
// subsections, the whole of what renders under its heading. A section that
// did not render (disabled, or under a summarized one) has 0. The render
// must have counted tokens (WithTokens or WithBudget); r nil fails t.
func SectionTokensAtMost(t testing.TB, r *prompt.Rendered, path string, max int) {
	t.Helper()
	if !rendered(t, "SectionTokensAtMost", r) {
		return
	}
	found, n := false, 0
	for _, s := range r.Report() {
		if s.Path == path || strings.HasPrefix(s.Path, path+".") {
			found = found || s.Path == path
			if s.Visible {
				n += s.Tokens
			}
		}
	}
	if !found {
		t.Errorf("prompttest: no section %s", path)
		return
	}
	if r.Tokens() == 0 {
		t.Fatalf("prompttest: the render counted no tokens; render WithTokens or WithBudget")
		return
	}
	if n > max {
		t.Errorf("prompttest: section %s has %d tokens with its subsections, want at most %d", path, n, max)
	}
}
