package agent

import (
	"reflect"
	"testing"
)

// TestFencedBlocks reads fenced blocks as CommonMark does (a bare fence of
// the same character, at least as long, closes a block), except that a
// fence with an info string inside a block opens a nested one, so a
// Markdown example in an edit does not cut the edit short.
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
		{"indented four is no fence", "    ```editor\nview a.go\n    ```", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := fencedBlocks(tt.text); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
