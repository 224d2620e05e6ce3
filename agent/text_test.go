package agent

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tools"
)

// TestFencedBlocks reads fenced blocks as CommonMark does (a bare fence of
// the same character, at least as long, closes a block), except that a
// block opened by three backticks holding a fence with an info string
// ends at the first closer after which the rest pairs its fences up, so a
// Markdown example in an edit does not cut the edit short, and one left
// open does not swallow the rest of the reply.
func TestFencedBlocks(t *testing.T) {
	type block struct{ info, body string }
	for _, tt := range []struct {
		name, text string
		want       []block
	}{
		{"plain", "text\n```editor\nview a.go\n```\nmore", []block{{"editor", "view a.go"}}},
		{"nested example", "```editor\nedit README.md 5-7\n## Usage\n\n```sh\nunfold serve\n```\n\nThen open the browser.\n```\n",
			[]block{{"editor", "edit README.md 5-7\n## Usage\n\n```sh\nunfold serve\n```\n\nThen open the browser."}}},
		{"two nested examples", "```editor\ncreate a.md\n```go\nx\n```\n~~~\ny\n~~~\n```py\nz\n```\n```\nafter",
			[]block{{"editor", "create a.md\n```go\nx\n```\n~~~\ny\n~~~\n```py\nz\n```"}}},
		{"longer outer fence", "````editor\ncreate a.md\n```\ncode\n```\n````\n```bash\nls\n```",
			[]block{{"editor", "create a.md\n```\ncode\n```"}, {"bash", "ls"}}},
		{"shorter fence does not close", "````editor\ncreate a.md\n```\n````", []block{{"editor", "create a.md\n```"}}},
		{"tildes do not close backticks", "```editor\ncreate a.md\n~~~\n```", []block{{"editor", "create a.md\n~~~"}}},
		{"nested fence left open", "```editor\nedit a.md 3-4\n```sh\nunfold serve\n```\nDone.", []block{{"editor", "edit a.md 3-4\n```sh\nunfold serve"}}},
		{"left open", "```editor\nview a.go", []block{{"editor", "view a.go"}}},
		{"nested fence left open, then prose and a block", "```editor\nedit R.md 9-9\n```go\n```\nSo, the example now has a language. Let me check it:\n```editor\nview R.md\n```\n",
			[]block{{"editor", "edit R.md 9-9\n```go"}, {"editor", "view R.md"}}},
		{"nested example, then prose and a block", "```editor\nedit R.md 3-5\n```sh\nls\n```\n```\nNow view it:\n```editor\nview R.md\n```\n",
			[]block{{"editor", "edit R.md 3-5\n```sh\nls\n```"}, {"editor", "view R.md"}}},
		{"nested example in a reply cut short", "```editor\nedit R.md 3-5\n```sh\nls\n```\n```\nthen\n```bash\nls",
			[]block{{"editor", "edit R.md 3-5\n```sh\nls\n```"}, {"bash", "ls"}}},
		{"longer outer fence closes at its first closer", "````editor\nedit R.md 9-9\n```go\n````\n\nand then\n\n````editor\nview R.md\n````\n",
			[]block{{"editor", "edit R.md 9-9\n```go"}, {"editor", "view R.md"}}},
		{"backticks in the info string: no fence", "```editor\ncreate a.md\n```inline``` is not a fence\n```\nNow run:\n```bash\nls\n```\n",
			[]block{{"editor", "create a.md\n```inline``` is not a fence"}, {"bash", "ls"}}},
		{"inline backticks left open", "```editor\ncreate a.md\n```inline``` text\n```\n",
			[]block{{"editor", "create a.md\n```inline``` text"}}},
		{"indented four is no fence", "    ```editor\nview a.go\n    ```", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []block
			for _, b := range fencedBlocks(tt.text) {
				if b.ambiguous {
					t.Errorf("block %q is marked ambiguous", b.body)
				}
				got = append(got, block{b.info, b.body})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFencedBlocksAmbiguous marks a block opened by three backticks that
// holds a fenced example and that more than one closer could end: as an
// action it is refused rather than run cut short.
func TestFencedBlocksAmbiguous(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		ambiguous  bool
		body       string // the first block's, when not ambiguous
	}{
		{"example, then an unlabeled block", "I'll write the README.\n```editor\ncreate README.md\n# Demo\n```sh\nmake run\n```\nOutput:\n```\nok\n```\n```\nDone.", true, ""},
		{"heredoc holding an example and an unlabeled block", "```bash\ncat > README.md <<'EOF'\n# Demo\n```sh\nmake\n```\nOutput:\n```\nok\n```\nEOF\n```\n", true, ""},
		{"example, then prose ending in a block left open", "```editor\ncreate a.md\n```python\nprint(1)\n```\nmore text\n```\nNow the expected output is:\n```\n1\n", true, ""},
		{"example, then the block's own close", "```editor\ncreate README.md\n# Demo\n```sh\nmake\n```\n```\nDone.", false, "create README.md\n# Demo\n```sh\nmake\n```"},
		{"example left open, then prose and a block", "```editor\nedit R.md 9-9\n```go\n```\nNow:\n```editor\nview R.md\n```\n", false, "edit R.md 9-9\n```go"},
		{"four backticks", "````editor\ncreate README.md\n# Demo\n```sh\nmake run\n```\nOutput:\n```\nok\n```\n````\nDone.", false, "create README.md\n# Demo\n```sh\nmake run\n```\nOutput:\n```\nok\n```"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := newBlockReader(tt.text).block()
			if !ok {
				t.Fatal("no block")
			}
			if b.ambiguous != tt.ambiguous {
				t.Fatalf("ambiguous: got %v, want %v (body %q)", b.ambiguous, tt.ambiguous, b.body)
			}
			if !tt.ambiguous && b.body != tt.body {
				t.Errorf("body: got %q, want %q", b.body, tt.body)
			}
		})
	}
}

// TestFencedBlocksLinear bounds the lines reading a long reply visits:
// weighing a block's closers reads the rest of the reply again, so
// without a bound a reply of many such blocks ending in a fence left open
// costs blocks times its length.
func TestFencedBlocksLinear(t *testing.T) {
	for _, blocks := range []int{300, 10000} {
		t.Run(fmt.Sprint(blocks), func(t *testing.T) {
			var b strings.Builder
			for range blocks {
				b.WriteString("```editor\ncreate a.md\n```python\nprint(1)\n```\n```\nSome prose.\n")
			}
			b.WriteString("```js\n")
			text := b.String()
			lines := strings.Count(text, "\n") + 1
			br := newBlockReader(text)
			n := 0
			for {
				if _, ok := br.block(); !ok {
					break
				}
				n++
			}
			if n < blocks {
				t.Errorf("blocks: got %d, want at least %d", n, blocks)
			}
			if limit := 20*lines + 1<<15; br.visits > limit {
				t.Errorf("visits: got %d for %d lines, want at most %d", br.visits, lines, limit)
			}
		})
	}
}

// TestParseActionStopsAtFirstAction: the blocks after the first action
// are not read, so a long tail of blocks costs nothing.
func TestParseActionStopsAtFirstAction(t *testing.T) {
	r := &run{a: &Agent{envTool: map[string]*tools.Tool{"editor": nil}}}
	text := "```editor\nview a.go\n```\n" + strings.Repeat("```editor\ncreate a.md\n```python\nprint(1)\n```\n```\nSome prose.\n", 1000)
	br := newBlockReader(text)
	act, err := r.parseActionFrom(br, text)
	if err != nil || act.env != "editor" || act.input != "view a.go" {
		t.Fatalf("got %+v, %v, want the first block's view", act, err)
	}
	if br.visits > 10 {
		t.Errorf("visits: got %d, want the first block's lines only", br.visits)
	}
}

// fencedBlocks returns the fenced code blocks of text, in order
// ([blockReader]).
func fencedBlocks(text string) []fenced {
	var out []fenced
	for br := newBlockReader(text); ; {
		b, ok := br.block()
		if !ok {
			return out
		}
		out = append(out, b)
	}
}
