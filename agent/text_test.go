package agent

import (
	"reflect"
	"testing"
)

// TestFencedBlocks reads fenced blocks as CommonMark does (a bare fence of
// the same character, at least as long, closes a block), except that a
// block opened by three backticks holding a fence with an info string
// ends at the first closer after which the rest pairs its fences up, so a
// Markdown example in an edit does not cut the edit short, and one left
// open does not swallow the rest of the reply.
func TestFencedBlocks(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []fenced
	}{
		{"plain", "text\n```editor\nview a.go\n```\nmore", []fenced{{"editor", "view a.go"}}},
		{"nested example", "```editor\nedit README.md 5-7\n## Usage\n\n```sh\nunfold serve\n```\n\nThen open the browser.\n```\n",
			[]fenced{{"editor", "edit README.md 5-7\n## Usage\n\n```sh\nunfold serve\n```\n\nThen open the browser."}}},
		{"two nested examples", "```editor\ncreate a.md\n```go\nx\n```\n~~~\ny\n~~~\n```py\nz\n```\n```\nafter",
			[]fenced{{"editor", "create a.md\n```go\nx\n```\n~~~\ny\n~~~\n```py\nz\n```"}}},
		{"longer outer fence", "````editor\ncreate a.md\n```\ncode\n```\n````\n```bash\nls\n```",
			[]fenced{{"editor", "create a.md\n```\ncode\n```"}, {"bash", "ls"}}},
		{"shorter fence does not close", "````editor\ncreate a.md\n```\n````", []fenced{{"editor", "create a.md\n```"}}},
		{"tildes do not close backticks", "```editor\ncreate a.md\n~~~\n```", []fenced{{"editor", "create a.md\n~~~"}}},
		{"nested fence left open", "```editor\nedit a.md 3-4\n```sh\nunfold serve\n```\nDone.", []fenced{{"editor", "edit a.md 3-4\n```sh\nunfold serve"}}},
		{"left open", "```editor\nview a.go", []fenced{{"editor", "view a.go"}}},
		{"nested fence left open, then prose and a block", "```editor\nedit R.md 9-9\n```go\n```\nSo, the example now has a language. Let me check it:\n```editor\nview R.md\n```\n",
			[]fenced{{"editor", "edit R.md 9-9\n```go"}, {"editor", "view R.md"}}},
		{"nested example, then prose and a block", "```editor\nedit R.md 3-5\n```sh\nls\n```\n```\nNow view it:\n```editor\nview R.md\n```\n",
			[]fenced{{"editor", "edit R.md 3-5\n```sh\nls\n```"}, {"editor", "view R.md"}}},
		{"nested example in a reply cut short", "```editor\nedit R.md 3-5\n```sh\nls\n```\n```\nthen\n```bash\nls",
			[]fenced{{"editor", "edit R.md 3-5\n```sh\nls\n```"}, {"bash", "ls"}}},
		{"longer outer fence closes at its first closer", "````editor\nedit R.md 9-9\n```go\n````\n\nand then\n\n````editor\nview R.md\n````\n",
			[]fenced{{"editor", "edit R.md 9-9\n```go"}, {"editor", "view R.md"}}},
		{"backticks in the info string: no fence", "```editor\ncreate a.md\n```inline``` is not a fence\n```\nNow run:\n```bash\nls\n```\n",
			[]fenced{{"editor", "create a.md\n```inline``` is not a fence"}, {"bash", "ls"}}},
		{"inline backticks left open", "```editor\ncreate a.md\n```inline``` text\n```\n",
			[]fenced{{"editor", "create a.md\n```inline``` text"}}},
		{"indented four is no fence", "    ```editor\nview a.go\n    ```", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := fencedBlocks(tt.text); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
