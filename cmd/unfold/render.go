package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/unfold-dev/unfold/internal/readfile"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/promptfile"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/skills"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tokens/bpe"
)

const renderHelp = `Usage: unfold render FILE.md [flags]

Render a prompt file: headings make sections, heading attributes such as
{#key visibility=summary summary="..." priority=2} set the rest, and bodies
are templates over the params. Prints the markdown, or with --json the text,
the tools and the per-section report, or with --tree where the tokens go.

With --skills DIR (or --project DIR, whose skills folders are found), the
skills follow the file's sections as a skills section: each skill's name
and description, its instructions and files opened with --open
skills.NAME and skills.NAME.FILE-KEY.
`

// maxParamsBytes bounds the params file.
const maxParamsBytes = 16 << 20

func runRender(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	paramsPath := fs.String("params", "", "a JSON `file` with the params the templates see")
	open := fs.String("open", "", "comma-separated section `keys` to render in full, as if the model had opened them")
	budget := fs.Int("budget", 0, "fit the prompt into this many `tokens`, giving sections their room in full highest priority first (0: no budget)")
	tokenizer := fs.String("tokenizer", "o200k", "how to count tokens: o200k, cl100k or estimate")
	asJSON := fs.Bool("json", false, "print the text, the tools and the report as JSON")
	tree := fs.Bool("tree", false, "print the section tree with each section's mode, tokens and a bar")
	skillDirs := skillsFlag(fs)
	project := fs.String("project", "", "add the skills of this project `DIR` (DIR/.claude/skills, DIR/.agents/skills, DIR/skills) after the file's sections")

	// The file may come before or after the flags.
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:]
	}
	if code := parseFlagsArgs(fs, renderHelp, args, stdout, stderr); code >= 0 {
		return code
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 || file == "" {
		fmt.Fprintf(stderr, "unfold render: want exactly one prompt file\n\n%s", renderHelp)
		return 2
	}
	if *asJSON && *tree {
		fmt.Fprintln(stderr, "unfold render: --json and --tree are exclusive; pick one")
		return 2
	}
	if *budget < 0 {
		fmt.Fprintf(stderr, "unfold render: --budget %d: want a positive number of tokens, or 0 for none\n", *budget)
		return 2
	}
	counter, err := counterFor(*tokenizer)
	if err != nil {
		fmt.Fprintf(stderr, "unfold render: %v\n", err)
		return 2
	}
	if *project != "" {
		if _, err := projectDir(*project); err != nil {
			fmt.Fprintf(stderr, "unfold render: %v\n", err)
			return 2
		}
	}
	set, err := loadSkills(*project, *skillDirs, stderr, "render")
	if err != nil {
		fmt.Fprintf(stderr, "unfold render: %v\n", err)
		return 1
	}
	r, err := renderFile(file, *paramsPath, *open, *budget, counter, set)
	if err != nil {
		fmt.Fprintf(stderr, "unfold render: %v\n", err)
		return 1
	}
	switch {
	case *asJSON:
		err = writeRenderJSON(stdout, r)
	case *tree:
		err = writeTree(stdout, r)
	default:
		_, err = fmt.Fprintln(stdout, r.Text())
	}
	if err != nil {
		fmt.Fprintf(stderr, "unfold render: %v\n", err)
		return 1
	}
	return 0
}

// parseFlagsArgs is parseFlags that leaves positional arguments to the caller.
func parseFlagsArgs(fs *flag.FlagSet, help string, args []string, stdout, stderr io.Writer) int {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, help, "\nFlags:\n")
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "unfold %s: %v\n\n%s", fs.Name(), err, help)
		return 2
	}
	return -1
}

func counterFor(name string) (tokens.Counter, error) {
	if name == "estimate" {
		return tokens.Estimate, nil
	}
	c, err := bpe.For(name)
	if err != nil {
		return nil, fmt.Errorf("--tokenizer %q: want o200k, cl100k or estimate", name)
	}
	return c, nil
}

func renderFile(file, paramsPath, open string, budget int, counter tokens.Counter, set *skills.Set) (*prompt.Rendered, error) {
	f, err := promptfile.Load(file)
	if err != nil {
		return nil, err
	}
	var params promptfile.Params
	if paramsPath != "" {
		data, err := readfile.Read(paramsPath, maxParamsBytes)
		if err != nil {
			return nil, fmt.Errorf("--params: %w", err)
		}
		if params, err = promptfile.DecodeParams(data); err != nil {
			return nil, fmt.Errorf("--params: %s: %w", paramsPath, err)
		}
	}
	if params == nil {
		params = promptfile.Params{}
	}
	// Every template runs once, those of summarized sections too, so that
	// a param the file misses is named whatever --open says.
	if err := f.Check(params); err != nil {
		return nil, paramsHint(err, paramsPath)
	}
	if err := skillsClash(file, f, set); err != nil {
		return nil, err
	}
	t, err := withSkills(f.Template(), set)
	if err != nil {
		return nil, err
	}
	p, err := t.Bind(params)
	if err != nil {
		return nil, err
	}
	var keys []string
	if open != "" {
		for key := range strings.SplitSeq(open, ",") {
			keys = append(keys, strings.TrimSpace(key))
		}
		// A skill's files are found when it opens.
		if p, err = p.Unfold(keys...); err != nil {
			return nil, fmt.Errorf("--open: %w", err)
		}
	}
	sess := session.New()
	opt := prompt.WithTokens(counter)
	if budget > 0 {
		opt = prompt.WithBudget(budget, counter)
	}
	r, err := p.Render(sess, nil, opt)
	if err == nil && open != "" {
		// The sections open as the model would open them, ancestors
		// included, and the prompt renders again.
		var ov prompt.Overrides
		if ov, err = r.Open(keys...); err != nil {
			return nil, fmt.Errorf("--open: %w", err)
		}
		if err = ov.Apply(sess); err != nil {
			return nil, err
		}
		r, err = p.Render(sess, nil, opt)
	}
	return r, f.Locate(err)
}

type renderedTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func writeRenderJSON(w io.Writer, r *prompt.Rendered) error {
	out := struct {
		Text   string                 `json:"text"`
		Tokens int                    `json:"tokens"`
		Tools  []renderedTool         `json:"tools"`
		Report []prompt.SectionReport `json:"report"`
	}{Text: r.Text(), Tokens: r.Tokens(), Tools: []renderedTool{}, Report: r.Report()}
	for _, t := range r.Tools() {
		out.Tools = append(out.Tools, renderedTool{t.Name(), t.Description(), t.InputSchema()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// writeTree prints one line per section: number, key (indented by depth),
// mode, why, tokens and a bar scaled to the largest section.
func writeTree(w io.Writer, r *prompt.Rendered) error {
	const barWidth = 40
	report := r.Report()
	most, width := 1, 0
	for _, s := range report {
		most = max(most, s.Tokens)
		width = max(width, 2*s.Depth+len(s.Path[strings.LastIndexByte(s.Path, '.')+1:]))
	}
	var b strings.Builder
	for _, s := range report {
		key := strings.Repeat("  ", s.Depth) + s.Path[strings.LastIndexByte(s.Path, '.')+1:]
		state := strings.ToLower(s.Mode.String())
		switch {
		case !s.Enabled:
			state = "disabled"
		case !s.Visible:
			state = "hidden"
		}
		bar := ""
		if s.Tokens > 0 {
			bar = strings.Repeat("█", max(1, s.Tokens*barWidth/most))
		}
		fmt.Fprintf(&b, "%-8s %-*s  %-8s %-8s %7d  %s\n", s.Number, width, key, state, s.Why, s.Tokens, bar)
	}
	fmt.Fprintf(&b, "total %d tokens\n", r.Tokens())
	_, err := io.WriteString(w, b.String())
	return err
}

// promptFileError points err, from binding or rendering the --prompt file
// f, at the file's line and heading, as unfold render does, and names the
// flag that gives a param its templates miss. An error of no section of
// the file is returned as it is.
func promptFileError(f *promptfile.File, paramsPath string, err error) error {
	var se *section.Error
	if !errors.As(err, &se) {
		return err
	}
	return paramsHint(f.Locate(err), paramsPath)
}

// paramsHint adds to err, a prompt file's error located in it, the flag
// that gives a param its templates miss.
func paramsHint(err error, paramsPath string) error {
	if !strings.HasSuffix(err.Error(), "give it in the params") {
		return err
	}
	if paramsPath == "" {
		return fmt.Errorf("%w (a JSON object given with --params FILE)", err)
	}
	return fmt.Errorf("%w (%s, given with --params)", err, paramsPath)
}
