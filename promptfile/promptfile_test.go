package promptfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/promptfile"
	"github.com/unfold-dev/unfold/prompttest"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
)

func golden(t *testing.T, name, got string) {
	t.Helper()
	prompttest.Golden(t, name, got)
}

func TestFiles(t *testing.T) {
	for _, name := range []string{"assistant", "setext"} {
		t.Run(name, func(t *testing.T) {
			f, err := promptfile.Load(filepath.Join("testdata", name+".md"))
			if err != nil {
				t.Fatal(err)
			}
			var params promptfile.Params
			if data, err := os.ReadFile(filepath.Join("testdata", name+".json")); err == nil {
				if params, err = promptfile.DecodeParams(data); err != nil {
					t.Fatal(err)
				}
			}
			p, err := f.Bind(params)
			if err != nil {
				t.Fatal(err)
			}
			r, err := p.Render(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, s := range r.Report() {
				b.WriteString(s.Path + " line=" + strconv.Itoa(f.Line(s.Path)) + " " + s.Mode.String() + " priority=" + strconv.Itoa(s.Priority) + "\n")
			}
			golden(t, name+".golden", b.String()+"\n"+r.Text()+"\n")
		})
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"text before heading", "intro\n# A\nx", "p.md:1: text before the first heading"},
		{"no headings", "", "p.md: no headings"},
		{"unknown attribute", "# A\n\n## B {color=red}\n", `p.md:3: heading "B": unknown attribute "color"`},
		{"bad visibility", "# A {visibility=hidden}\n", `p.md:1: heading "A": attribute visibility=hidden: want full or summary`},
		{"bad priority", "# A {priority=1.5}\n", `p.md:1: heading "A": attribute priority=1.5: want an integer`},
		{"unreadable attributes", "# A {visibility=}\n", `p.md:1: heading "A {visibility=}": the attributes in braces could not be read`},
		{"summary without summary", "# A\n\n# B {visibility=summary}\nbody\n", `p.md:3: heading "B": SUMMARY visibility requested for section 'b' but no summary template is defined. Add summary="..." to the heading's attributes: what the model sees until it opens the section.`},
		{"duplicate keys", "# A\n\n# A\n", `p.md:3: heading "A": duplicate key "a" among sibling headings`},
		{"bad key", "# A {#Bad.Key}\n", `p.md:1: heading "A": key "Bad.Key" must match`},
		{"unclosed fence", "# A\n\n# B\n\n```\ncode\n", `p.md:5: heading "B": body opens a code fence on this line and never closes it`},
		{"unclosed fence indented", "# A\n\n# B\n\n\n    text\n\n    ~~~\n    code\n", `p.md:8: heading "B": body opens a code fence on this line`},
		{"bad template", "# A\n\n## B\n{{.x\n", `p.md:4: heading "B": body template: unclosed action`},
		{"two errors", "# A {x=1}\n# B {y=2}\n", `p.md:2: heading "B": unknown attribute "y"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := promptfile.Parse("p.md", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// renderError renders the prompt file src without params and returns
// the error, located in the file.
func renderError(t *testing.T, src string) error {
	t.Helper()
	f, err := promptfile.Parse("p.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	// Bind checks every template, so it gives the error Render would.
	p, err := f.Bind(nil)
	if err != nil {
		return err
	}
	_, err = p.Render(nil, nil)
	return f.Locate(err)
}

// TestBodySyntaxErrorLine: a template that does not parse is located on
// the file's line, as one that fails to run is, with a line where an action
// started given in the file's lines too; a syntax error that text written
// {{ as is can cause says how to write a literal {{, and no other does.
func TestBodySyntaxErrorLine(t *testing.T) {
	const lines = "# Intro\n\nhello\n\n# Task\n\nok 1\nok 2\nok 3\n"
	const literal = `; text written {{ as is starts a template action: write {{"{{"}} for a literal {{`
	for _, tc := range []struct{ name, src, want string }{
		{"unknown function", lines + "Do {{.task | nosuchfunc}}\n", `p.md:10: heading "Task": body template: function "nosuchfunc" not defined`},
		{"unclosed action", lines + "Do {{.task\n", `p.md:10: heading "Task": body template: unclosed action started at line 10` + literal},
		{"bad character", "# Task\n\nDo {{.task}\n", `p.md:3: heading "Task": body template: bad character U+007D '}'` + literal},
		{"code span", "# Task\n\nWrite `{{` to start.\n\nmore\n", `p.md:3: heading "Task": body template: unterminated raw quoted string` + literal},
		{"empty action", "# Task\n\nWrite {{}} here.\n", `p.md:3: heading "Task": body template: missing value for command` + literal},
		{"sign in command", "# Task\n\nWrite {{ = }} here.\n", `p.md:3: heading "Task": body template: unexpected "=" in command` + literal},
		{"number in operand", "# Task\n\nSee {{ .v.1 }} here.\n", `p.md:3: heading "Task": body template: unexpected ".1" in operand` + literal},
		{"bad number", "# Task\n\nWrite {{ 1x }} here.\n", `p.md:3: heading "Task": body template: bad number syntax: "1x"` + literal},
		{"character constant", "# Task\n\nWrite {{ 'ab' }} here.\n", `p.md:3: heading "Task": body template: malformed character constant: 'ab'` + literal},
		// Actions meant as actions: escaping would not mend them.
		{"if without end", "# A\n\n{{if .x}}open\n", `p.md:4: heading "A": body template: unexpected EOF`},
		{"stray end", "# A\n\nx\n{{end}}\n", `p.md:4: heading "A": body template: unexpected {{end}}`},
		{"undefined variable", "# A\n\n{{$y}}\n", `p.md:3: heading "A": body template: undefined variable "$y"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := promptfile.Parse("p.md", []byte(tc.src))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	// The way the message gives works.
	f, err := promptfile.Parse("p.md", []byte("# Task\n\nWrite `{{\"{{\"}}` to start.\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Bind(nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Text(); !strings.Contains(got, "Write `{{` to start.") {
		t.Errorf("got %q, want the literal {{", got)
	}
}

func TestMissingParam(t *testing.T) {
	err := renderError(t, "# A\n\nHello {{.name}}\n")
	if want := `p.md:3: heading "A": body template: column 8: executing "a" at <.name>: map has no entry for key "name"; give it in the params`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// TestBodyErrorLine gives templates that fail on a line of their body:
// the error names the file's line, under an ATX heading, a setext one, or
// on the heading's next line, and unwraps to the template's error.
func TestBodyErrorLine(t *testing.T) {
	for src, line := range map[string]int{
		"# Intro\n\nhello\n\n# Ref\n\nline a\nline b\n{{.nope}}\n": 9,
		"# Ref\nfirst {{.nope}}\n":                                 2,
		"Ref\n===\n\nx\n{{.nope}}\n":                               5,
		"\xef\xbb\xbf# A\n{{.nope}}\n":                             2,
	} {
		err := renderError(t, src)
		var fe *promptfile.Error
		if !errors.As(err, &fe) || fe.Line != line || !strings.Contains(err.Error(), `map has no entry for key "nope"`) {
			t.Errorf("%q: got %v, want line %d", src, err, line)
		}
	}
}

// TestHeadingErrors gives headings whose attributes or title cannot make
// a section: the message says what to write instead.
func TestHeadingErrors(t *testing.T) {
	for src, want := range map[string]string{
		"# 日本語\nx\n":                                                    `p.md:1: heading "日本語": the title "日本語" gives no key (keys are made of its ASCII letters and digits); give one: {#key}`,
		"# A {priority=\"2\"}\nx\n":                                     `p.md:1: heading "A": attribute priority="2": a quoted value is text; write the integer without quotes: priority=2`,
		"# A {#one #two}\nx\n":                                          `p.md:1: heading "A": the key is given twice (by #id or key=); give it once`,
		"# A {#one key=two}\nx\n":                                       `p.md:1: heading "A": the key is given twice (by #id or key=); give it once`,
		"# A {priority=1 priority=9}\nx\n":                              `p.md:1: heading "A": attribute priority given twice; give it once`,
		"# A {visibility=summary visibility=full summary=\"s\"}\nx\n":   `p.md:1: heading "A": attribute visibility given twice; give it once`,
		"# A {summary=\"one\" summary=\"two\" visibility=summary}\nx\n": `p.md:1: heading "A": attribute summary given twice; give it once`,
	} {
		_, err := promptfile.Parse("p.md", []byte(src))
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
}

func TestDecodeParams(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}`, ""},
		{`[1]`, "want a JSON object, got an array"},
		{`{`, "not JSON: the text ends before the JSON object does"},
		{"{\n  \"a\": 1,\n}", "not JSON: invalid character '}' looking for beginning of object key string (line 3, column 1)"},
		{"{\"a\": tru}", "not JSON: invalid character '}' in literal true (expecting 'e') (line 1, column 10)"},
		{`{} {}`, "more than one JSON value"},
		{`{"a":1}}`, `line 1: "}" after the object; want one JSON object and nothing after it`},
		{"{\"a\":1}\n]]]]garbage", `line 2: "]]]]garbage" after the object`},
		{"{\"a\":1}\n\t \n", ""},
		{`"s"`, "got a string"},
		{`{"task":"a","task":"b"}`, `line 1: key "task" given twice`},
		{"{\n  \"a\": {\"b\": 1,\n   \"b\": 2}\n}", `line 3: key "a.b" given twice`},
		{`{"a":[{"b":1},{"b":2,"c":{},"b":3}]}`, `key "a[1].b" given twice`},
		{`{"a":{"b":1},"c":{"b":2}}`, ""},
		{`{"a":[1,[2]],"b":{"c":[{}]},"d":1,"d":2}`, `key "d" given twice`},
		{`{"a":[1,{"b":[2,1e999]}]}`, `a[1].b[1]: the number 1e999 is out of range`},
		{`{"a":[[1],{"b":{"c":2}}],"d":{"e":[1e999]}}`, `d.e[0]: the number 1e999 is out of range`},
	} {
		_, err := promptfile.DecodeParams([]byte(tc.in))
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("DecodeParams(%s): got %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"# A\nx", "# A {#a visibility=summary summary=\"s\"}\n## B\n", "A\n=\n", "# A\n```\n# x\n```", "{{.x}}", "# {x=}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file, err := promptfile.Parse("f.md", []byte(src))
		if err != nil {
			return
		}
		p, err := file.Bind(promptfile.Params{"x": 1})
		if err != nil {
			// A template the params do not fit is named in the file.
			var fe *promptfile.Error
			if !errors.As(err, &fe) {
				t.Fatalf("Bind: %v is not located in the file", err)
			}
			return
		}
		_, _ = p.Render(nil, nil)
	})
}

// TestSummaryTemplate: a summary attribute is a template over the params,
// as the body is.
func TestSummaryTemplate(t *testing.T) {
	f, err := promptfile.Parse("p.md", []byte("# A\nx\n\n## B {visibility=summary summary=\"{{.n}} open issues\"}\nbody\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Bind(promptfile.Params{"n": 3})
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "### 1.1. B (a.b)\n\n3 open issues\n\n---\n"; !strings.Contains(r.Text(), want) {
		t.Errorf("got %q, want it to contain %q", r.Text(), want)
	}
}

// TestParamNumbers renders templates that compare and format numbers
// from a params file: integers and fractions are numbers to them, in
// objects and arrays too; a number past float64's range is refused with
// its path.
func TestParamNumbers(t *testing.T) {
	f, err := promptfile.Parse("p.md", []byte("# A\n"+
		`price={{printf "%.2f" .price}} count={{printf "%d" .n}} {{if eq .n 7}}seven{{end}} {{if gt .price 3.0}}dear{{end}} `+
		`{{range .list}}{{printf "%03d" .}} {{end}}{{.big}} {{index .deep.a 0}} {{.million}} {{printf "%.1f" .two}} {{.three}}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	params, err := promptfile.DecodeParams([]byte(`{"price":3.5,"n":7,"list":[1,2],"big":12345678901234567890,"deep":{"a":[0.25]},"million":1e6,"two":2.0,"three":3}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Bind(params)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(nil, nil)
	if want := "price=3.50 count=7 seven dear 001 002 1.2345678901234567e+19 0.25 1e+06 2.0 3"; err != nil || !strings.HasSuffix(r.Text(), want) {
		t.Errorf("got %v, want the body %q", err, want)
	}
	_, err = promptfile.DecodeParams([]byte(`{"a":{"b":[1,1e400]}}`))
	if want := "promptfile: params: a.b[1]: the number 1e400 is out of range; give it as a string if the text is what is wanted"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// TestParamWrongType renders a template reading a field of a param given
// as another type: the error names the param, the type wanted and the
// type given.
func TestParamWrongType(t *testing.T) {
	for _, tc := range []struct{ params, src, want string }{
		{`{"n":"str"}`, "# A\n{{.n.x}}\n", `p.md:1: heading "A": body template: .n.x: param "n" is a string, not an object: it has no key "x"; give "n" as a JSON object with "x"`},
		{`{"n":{"m":3}}`, "# A\nx\n\n## B {visibility=summary summary=\"{{.n.m.k}}\"}\nbody\n", `p.md:4: heading "B": summary template: .n.m.k: param "n.m" is a number, not an object: it has no key "k"; give "n.m" as a JSON object with "k"`},
		{`{"n":[1]}`, "# A\n{{.n.x}}\n", `param "n" is an array, not an object`},
	} {
		f, err := promptfile.Parse("p.md", []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		params, err := promptfile.DecodeParams([]byte(tc.params))
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.Bind(params)
		if err == nil {
			_, err = p.Render(session.New(), nil)
		}
		if err = f.Locate(err); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("params %s, %q: got %v, want %q", tc.params, tc.src, err, tc.want)
		}
	}
}

// manyHeadings is a prompt file of n headings, a line of body under
// every other one.
func manyHeadings(n int) []byte {
	var b strings.Builder
	for i := range n {
		b.WriteString("# S" + strconv.Itoa(i) + "\n")
		if i%2 == 0 {
			b.WriteString("body\n")
		}
	}
	return []byte(b.String())
}

// TestLinesOfManyHeadings checks the lines of the headings of a long
// file, counted on from one heading to the next.
func TestLinesOfManyHeadings(t *testing.T) {
	f, err := promptfile.Parse("many.md", manyHeadings(5000))
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1, 2, 4999} {
		if got, want := f.Line("s"+strconv.Itoa(i)), i+i/2+i%2+1; got != want {
			t.Errorf("heading %d: line %d, want %d", i, got, want)
		}
	}
}

// BenchmarkParseManyHeadings parses a file of 100,000 headings: the time
// grows with the file, not with its square.
func BenchmarkParseManyHeadings(b *testing.B) {
	src := manyHeadings(100_000)
	for b.Loop() {
		if _, err := promptfile.Parse("many.md", src); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRenderedFenceLine renders a body whose template writes a code fence
// it never closes: the error gives the file's line of the fence.
func TestRenderedFenceLine(t *testing.T) {
	err := renderError(t, "# Intro\n\nhello\n\n# Ref\n\n\ntext\n\n{{\"```\"}}\ncode\n")
	var fe *promptfile.Error
	if !errors.As(err, &fe) || fe.Line != 10 || !strings.Contains(err.Error(), "rendered body opens a code fence on this line") {
		t.Errorf("got %v, want line 10", err)
	} // A line of actions before the fence writes no line, so the rendered
	// body's lines are no longer the file's: the error gives the heading's
	// line and the rendered body's.
	err = renderError(t, "# Intro\n\nhello\n\n# Ref\n\ntext\n{{/* a\nb */}}\n{{\"```\"}}\ncode\n")
	if !errors.As(err, &fe) || fe.Line != 5 || !strings.Contains(err.Error(), "code fence on line 3") {
		t.Errorf("a fence after an action: got %v, want line 5 and the rendered body's line 3", err)
	}
}

// TestCheckHiddenTemplates gives params that templates the first render
// does not run miss: the body of a summarized section, of a section under
// it, and the summary of a section under a summarized one. Check and Bind
// name each at the file's line, before the model could open the section.
func TestCheckHiddenTemplates(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"summarized body", "# A\n\nx {{.task}}\n\n# B {visibility=summary summary=\"s\"}\n\n{{.nope}}\n",
			`p.md:7: heading "B": body template: column 2: executing "b" at <.nope>: map has no entry for key "nope"; give it in the params`},
		{"body under a summarized section", "# A {visibility=summary summary=\"s\"}\n\nx\n\n## B\n\ny\n{{.nope}}\n",
			`p.md:8: heading "B": body template: column 2: executing "b" at <.nope>: map has no entry for key "nope"; give it in the params`},
		{"summary under a summarized section", "# A {visibility=summary summary=\"s\"}\n\nx\n\n## B {visibility=summary summary=\"{{.nope}}\"}\n\ny\n",
			`p.md:5: heading "B": summary template: template: b:1:2: executing "b" at <.nope>: map has no entry for key "nope"; give it in the params`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := promptfile.Parse("p.md", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			params := promptfile.Params{"task": "t"}
			if err := f.Check(params); err == nil || err.Error() != tc.want {
				t.Errorf("Check: got %v, want %q", err, tc.want)
			}
			if _, err := f.Bind(params); err == nil || err.Error() != tc.want {
				t.Errorf("Bind: got %v, want %q", err, tc.want)
			}
			if err := f.Check(promptfile.Params{"task": "t", "nope": "n"}); err != nil {
				t.Errorf("Check with the param given: %v", err)
			}
		})
	}
}

// TestCheckEachSectionOnItsOwn gives two summarized sections that each
// loop 500,001 times: opened one at a time they render, so Check passes,
// though together they take more than the template work of one render
// (section.MaxTemplateSteps), which Check spent on all the bodies at once.
func TestCheckEachSectionOnItsOwn(t *testing.T) {
	params := promptfile.Params{"items": make([]any, section.MaxTemplateSteps/2+1)}
	const loop = "{{range .items}}{{end}}"
	f, err := promptfile.Parse("p.md", []byte("# Intro\n\nhello\n\n# A {visibility=summary summary=\"a\"}\n\n"+loop+"\n\n# B {visibility=summary summary=\"b\"}\n\n"+loop+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Check(params); err != nil {
		t.Errorf("Check: %v; want each section checked with the work of a render of its own", err)
	}
}

// TestCheckHiddenFence: a summarized section whose body writes a code
// fence it never closes is named by Check at the fence's line, as the
// render opening it would fail.
func TestCheckHiddenFence(t *testing.T) {
	f, err := promptfile.Parse("p.md", []byte("# A\n\nx\n\n# B {visibility=summary summary=\"s\"}\n\ntext\n{{.fence}}\ncode\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := `p.md:8: heading "B": rendered body opens a code fence on this line and never closes it`
	if err := f.Check(promptfile.Params{"fence": "```"}); err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if err := f.Check(promptfile.Params{"fence": "no fence"}); err != nil {
		t.Errorf("without a fence: %v", err)
	}
}

// TestCheckStopsAfterTwentyErrors: a param missing from each of 30
// sections gives the first 20 errors and says the check stopped, rather
// than one error per heading of however long a file.
func TestCheckStopsAfterTwentyErrors(t *testing.T) {
	var src strings.Builder
	for i := range 30 {
		fmt.Fprintf(&src, "# S%d {visibility=summary summary=\"s\"}\n\n{{.nope}}\n\n", i)
	}
	f, err := promptfile.Parse("p.md", []byte(src.String()))
	if err != nil {
		t.Fatal(err)
	}
	err = f.Check(nil)
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 21 || !strings.HasPrefix(lines[0], `p.md:3: heading "S0": body template`) ||
		!strings.HasPrefix(lines[19], `p.md:79: heading "S19": body template`) ||
		lines[20] != "p.md: check stopped after 20 errors; mend these and run again to see the rest" {
		t.Errorf("got %d lines:\n%v\nwant the first 20 sections' errors, then that the check stopped", len(lines), err)
	}
}

// TestTitleBraces gives titles that end in braces which are not
// attributes: empty braces and escaped ones stay the title's text; others
// are refused saying how to write them, and a template saying titles are
// not templates.
func TestTitleBraces(t *testing.T) {
	for _, tc := range []struct{ src, title, key, err string }{
		{"# Go func main() {}\n", "Go func main() {}", "go-func-main", ""},
		{"# Go func main(){}\n", "Go func main(){}", "go-func-main", ""},
		{"# T {} {#k}\n", "T {}", "k", ""},
		{"# Set \\{a, b\\}\n", "Set {a, b}", "set-a-b", ""},
		{"# Set \\{a, b}\n", "Set {a, b}", "set-a-b", ""},
		{"# Use {{ in templates\n", "Use {{ in templates", "use-in-templates", ""},
		{"# Use `\\{` in code\n", "Use `\\{` in code", "use-in-code", ""},
		{"# Use ``a`\\}`` \\{x\\}\n", "Use ``a`\\}`` {x}", "use-a-x", ""},
		{"# Tick \\` \\{x\\} `\\{`\n", "Tick \\` {x} `\\{`", "tick-x", ""},
		{"# Open `` \\{x\\}\n", "Open `` {x}", "open-x", ""},
		{"# Set {a, b}\n", "", "", `p.md:1: heading "Set {a, b}": the attributes in braces could not be read; write them as {#key name=value name="quoted value"}, or write braces that end the title as text with a backslash: \{`},
		{"# Hello {{.name}}\n", "", "", `p.md:1: heading "Hello {{.name}}": a title is text, not a template: put {{...}} in the body, or write the braces as text with a backslash: \{\{`},
	} {
		f, err := promptfile.Parse("p.md", []byte(tc.src+"\nbody\n"))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: got %v, want %q", tc.src, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		p, err := f.Bind(nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.Render(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep := r.Report(); len(rep) != 1 || rep[0].Path != tc.key || rep[0].Title != tc.title {
			t.Errorf("%q: got %+v, want title %q, key %q", tc.src, rep, tc.title, tc.key)
		}
	}
}
