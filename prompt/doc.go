// Package prompt renders a tree of sections to markdown, FULL or SUMMARY
// section by section, and lets the model open what was summarized.
//
// # Building and rendering
//
// A [Template] is a validated tree of sections ([New]); binding params to it
// ([Template.Bind], one value per params type) gives a [Prompt]; rendering it
// with a session and a filesystem ([Prompt.Render]) gives an immutable
// [Rendered]: the markdown, the tools to offer and a report on every section.
// Sections with default params, and sections disabled whatever the session,
// need no value from Bind; see [Template.Bind] for the rule.
//
//	tmpl := prompt.MustNew("agents/assistant", "task", intro, reference)
//	p, err := tmpl.Bind(Task{Goal: "summarize the logs"})
//	r, err := p.Render(sess, fs)
//	fmt.Println(r.Text())
//
// # Rendering rules
//
// Each section's heading is "#" repeated depth+2 times, its number, its title
// and its dotted path: "## 1. Intro (intro)", "### 2.1. Child (parent.child)".
// Numbers follow declaration order and survive disabled sections. A FULL
// section renders its body (headings in it shifted below its own) and its
// children; a SUMMARY section renders its summary and a line saying how to
// open it, and neither its children nor its tools. Tools are offered depth
// first; the open_sections tool comes last, and only when something was
// summarized. The same tree, params and session render the same bytes.
//
// # Opening sections
//
// The model calls open_sections with section keys and a reason. Content-only
// sections are written to context/<path>.md ([ContextDir]) through the
// filesystem, and the model reads them. When a requested section carries tools (itself or below),
// the call returns an error matching [ErrVisibilityExpansion] that carries
// the overrides to apply; the caller applies them ([ApplyExpansion]) and
// renders again, and the new tools are offered:
//
//	res, err := r.Tool("open_sections").Call(context.Background(), tools.Context{FS: fs}, args)
//	if errors.Is(err, prompt.ErrVisibilityExpansion) {
//		err = prompt.ApplyExpansion(sess, err)
//		r, err = p.Render(sess, fs)
//	}
//
// Every other problem (an unknown key, a section already open, no
// filesystem) is a failed tool result the model reads, not a Go error.
//
// A [Disclosure] does all of that in one place, and every front end (the
// agent loop, the MCP server, the CLI) opens sections through it: it keeps
// one or more prompts rendered for a session, offers one open_sections tool
// for all of them, and when a call asks for sections with tools it applies
// the overrides, renders again and answers with what opened and the tools
// now offered ([Opened]):
//
//	d, err := prompt.NewDisclosure(sess, fs, []prompt.Part{{Prompt: p}})
//	err = d.Render()
//	res, err := d.Call(ctx, tool, args) // any offered tool, open_sections included
//	offered := d.Tools()                 // changed if res.Value is an expanded *prompt.Opened
//
// To open sections without a model, [Rendered.Open] returns the [Overrides]
// to apply before the next render.
//
// A section declared separate ([section.Spec] Separate) opens only by its
// own key: where an ancestor is written as a document of its own (a context
// file, the content of an opening) it shows its summary and how to open it.
//
// A folded section ([section.Spec] LazyChildren, as a skill is) has no
// children until it opens: a Disclosure unfolds it when a key at or below
// it is opened, or the session shows it in full, and renders the prompt
// with its children found. Without a Disclosure, [Prompt.Unfold] returns
// the prompt unfolded at some keys, to render before [Rendered.Open].
//
// # Token budgets
//
// Rendered with [WithBudget], a prompt fits a token count by showing FULL
// sections that have a summary as SUMMARY; sections the session opened, and
// the sections holding them, are never summarized. Summarized sections get
// the usual suffix, so the model can open what the budget closed. The fit
// starts from the smallest prompt, every such section summarized, and
// gives sections back in full one at a time, highest [section.Spec]
// Priority first (ties: shallower, then earlier sections first), each one
// that fits in the room the sections given back before it left. A section
// that does not fit stays summarized and the fit goes on to the next, so a
// section is summarized only when, at its turn, showing it would have gone
// over the budget: a large section of high priority can stay summarized
// while a smaller one of lower priority, which fits in what is left, is
// shown in full (see the example of [WithBudget]). The sections under a
// summarized one are counted only when it might come back.
//
// A summary with a brief ([section.Spec] Brief) is shortened to it the same
// way: the smallest prompt shows every brief, and once sections are given
// back in full and the default suffixes back, the fit gives summaries back
// in place of briefs, highest priority first, while they fit. The report
// marks the sections shown as their brief.
//
//	r, err := p.Render(sess, fs, prompt.WithBudget(8000, bpe.O200kBase()))
//
// Two rules make the most of the budget. A summary never costs more than
// the content it stands for: a SUMMARY section (demoted, declared or
// selected) whose content, with what it reveals, costs no more tokens is
// shown in full, reported with why "budget" when it was not FULL before;
// except when the session summarized it, opening it would offer tools, it
// is folded, or, for a section not FULL before, measuring it would run a
// Content function.
// And the default suffix, which lists a section's subsections, may give way
// to a compact one that gives their number ("including 19 subsections"):
// the smallest prompt uses it wherever it is smaller, and once sections are
// given back the default suffix comes back, highest priority first, while
// it fits. Without a budget the suffix is always the default one.
//
// # Counting
//
// A section's count, in the report and in a budget's arithmetic, is the
// count of its block with the blank line that follows it (the last block
// without), so the counts add up to the prompt's: exactly, with counters
// whose counts add up at headings ([tokens.Additive]: [tokens.Estimate] and
// tokens/bpe), and [Rendered.Tokens] is then that sum. With other counters
// Rendered.Tokens counts the text, and a budgeted render that comes out over
// summarizes further. The smallest reachable prompt a [*BudgetError] names
// is counted the same way, so a budget of exactly that size is met.
//
// Counts of fixed blocks are cached per Prompt, and counters that bound a
// count from below ([tokens.LowerBounder], as tokens/bpe does) let the fit
// pass over sections that cannot fit without counting them: fitting costs
// about one exact count of what the prompt shows the first time and table
// lookups after that, in time proportional to the number of sections: about
// the same per section for a thousand sections as for a hundred thousand.
// When even the smallest reachable prompt does not fit, Render fails with a
// [*BudgetError] naming the budget, the minimum and the largest sections.
// The report gives each section's tokens, mode and why (declared, selector,
// override or budget).
package prompt
