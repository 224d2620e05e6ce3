// Package section declares the sections a prompt is made of.
//
// A section has a key, a title, a body and, optionally, a summary, a
// visibility selector, an enabled predicate, children, tools and a priority.
// Its body is a text/template over a params struct of the section's own type:
//
//	type Task struct{ Goal string }
//
//	intro := section.New(section.Spec[Task]{
//		Key:   "task",
//		Title: "Task",
//		Body:  "Complete the following task: {{.Goal}}",
//	})
//
// Sections that take no params use [None]. A section that should start as
// its summary declares one and a selector:
//
//	docs := section.New(section.Spec[section.None]{
//		Key:        "reference",
//		Title:      "Reference",
//		Body:       "...long API documentation...",
//		Summary:    "API documentation is available on request.",
//		Visibility: visibility.Const(visibility.Summary),
//	})
//
// A summary is a template over the params as the body is ("{{.Issues}}
// open issues."; text without actions is shown as it is). Text from
// elsewhere (a skill's description, a server's) goes through [Literal],
// so that braces in it show as written. A summary may be
// computed when first needed instead (LazySummary, for one that reads a
// file), shortened under a token budget to a brief (Brief), and kept when
// an ancestor is written out in full (Separate: the section then opens
// only by its own key); package skills uses all three. A summarized
// section may also find its children only when it is first opened
// (LazyChildren, [Section.Unfold]), and one whose tools join later (an
// MCP server still starting) opens in place all the same
// ([Section.OpensInPlace]); [Stable] keeps every section's
// children as they are while a prompt walks a tree to build it.
//
// # Params and predicates
//
// A section may declare default params (Defaults): a prompt binding no
// value of its type renders it with them. An Enabled predicate removes a
// section and its subtree from a prompt for some params; EnabledIn does
// the same from the params and the session, asked at every render (a step
// shown once the one before is done). A section that no value, no
// defaults and no session could enable needs no params at all: one
// disabled by its Enabled given the zero value of its params type, or
// below a disabled section (see prompt.Template.Bind). A prompt asks a
// section for its defaults ([Section.Defaults]), whether its predicate
// reads the session ([Section.ReadsSession]) and so is asked at every
// render, and, when it has no params, whether the zero value enables it
// ([Section.EnabledUnbound]).
//
// # Bounds
//
// A template's work is bounded, so that a mistake fails with a message
// instead of hanging or filling memory: a body writes at most
// [MaxBodyBytes]; the string builtins (print, printf, println, html, js,
// urlquery) work out how long their text would be and refuse one past it
// before building it; and the templates of one render, sharing one
// [Work] ([Section.BodyWith], [Section.SummaryWith], [Section.BriefWith]),
// make at most [MaxTemplateSteps] loop iterations and template calls and
// move at most [MaxTemplateBytes] all together. The comparisons (eq, lt,
// ...) compare numbers as numbers whatever their Go types.
//
// # Validation
//
// Sections are checked when the prompt containing them is built
// ([Validate]): bad or duplicate keys, titles of more than one line,
// templates that name fields their params type lacks, code fences left
// open, a SUMMARY section without a summary (or a brief or a separate
// section without one), duplicate or reserved tool names. Every problem is an [*Error] naming the section's
// dotted path.
package section
