package prompt_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/visibility"
)

// TestTemplateWorkPerRender: the templates of one render share one
// section.Work, so many sections that each move about 48 MiB of text (an
// 8 MiB string doubled into being and quoted) fail together, in the
// body or the summary, counted or not, naming the section that went
// past; one of them alone renders.
func TestTemplateWorkPerRender(t *testing.T) {
	const heavy = `{{$x := printf "%65536s" ""}}{{range 7}}{{$x = print $x $x}}{{end}}{{$y := printf "%q" $x}}{{len $y}}`
	build := func(n int, summarized bool) *prompt.Prompt {
		var secs []*section.Section
		for i := range n {
			spec := section.Spec[section.None]{Key: fmt.Sprintf("s%d", i), Title: "S", Body: heavy}
			if summarized {
				spec.Body, spec.Summary, spec.Visibility = "b", heavy, visibility.Const(visibility.Summary)
			}
			secs = append(secs, section.New(spec))
		}
		return prompt.MustNew("t", "work", secs...).MustBind()
	}
	for _, summarized := range []bool{false, true} {
		for _, opts := range [][]prompt.RenderOption{nil, {prompt.WithTokens(tokens.Estimate)}} {
			name := fmt.Sprintf("summarized %v, counted %v", summarized, opts != nil)
			if _, err := build(1, summarized).Render(nil, nil, opts...); err != nil {
				t.Fatalf("%s: one section: %v", name, err)
			}
			_, err := build(8, summarized).Render(nil, nil, opts...)
			var se *section.Error
			if !errors.Is(err, section.ErrTooMuchText) || !errors.As(err, &se) || !strings.HasPrefix(se.Path, "s") {
				t.Errorf("%s: eight sections: got %v, want %v naming a section", name, err, section.ErrTooMuchText)
			}
		}
	}
}
