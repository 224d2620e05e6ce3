package prompt_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
)

func TestWith(t *testing.T) {
	leaf := func(key string, kids ...*section.Section) *section.Section {
		return section.New(section.Spec[section.None]{Key: key, Title: strings.ToUpper(key), Children: kids})
	}
	tmpl := prompt.MustNew("test", "base", leaf("a", leaf("b")), leaf("c"))
	var roots []string
	for _, s := range tmpl.Roots() {
		roots = append(roots, s.Key())
	}
	if !slices.Equal(roots, []string{"a", "c"}) {
		t.Errorf("roots: got %v, want [a c]", roots)
	}
	more, err := tmpl.With(leaf("d"))
	if err != nil {
		t.Fatal(err)
	}
	if more.Namespace() != "test" || more.Key() != "base" || !slices.Equal(more.Paths(), []string{"a", "a.b", "c", "d"}) {
		t.Errorf("with d: got %s/%s %v", more.Namespace(), more.Key(), more.Paths())
	}
	if !slices.Equal(tmpl.Paths(), []string{"a", "a.b", "c"}) {
		t.Errorf("the original changed: %v", tmpl.Paths())
	}
	if _, err := tmpl.With(leaf("c")); err == nil || !strings.Contains(err.Error(), `duplicate key "c"`) {
		t.Errorf("a duplicate key: got %v", err)
	}
}
