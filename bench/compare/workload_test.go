package main

import (
	"strconv"
	"strings"
	"testing"
)

// TestFreshBodies: every section of every generation gets a body of its
// own, and the original specs are left as they were.
func TestFreshBodies(t *testing.T) {
	w := newWorkload()
	seen := map[string]string{}
	var walk func(specs []*spec, gen int, prefix string)
	walk = func(specs []*spec, gen int, prefix string) {
		for _, s := range specs {
			path := s.Key
			if prefix != "" {
				path = prefix + "." + s.Key
			}
			if prev, dup := seen[s.Body]; dup {
				t.Fatalf("%s and %s share a body", prev, path)
			}
			seen[s.Body] = path
			if want := "Revision " + strconv.Itoa(gen) + " of " + path + "."; !strings.HasSuffix(s.Body, want) {
				t.Fatalf("%s: body ends %q, want %q", path, s.Body[max(0, len(s.Body)-40):], want)
			}
			walk(s.Children, gen, path)
		}
	}
	for _, gen := range []int{goGen + 1, goGen + 2} {
		walk(fresh(w.Render, gen, ""), gen, "")
	}
	if strings.Contains(w.Render[0].Body, "Revision") {
		t.Error("fresh changed the workload's own specs")
	}
}

func TestSameText(t *testing.T) {
	if err := sameText("a", "x\ny", "b", "x\ny"); err != nil {
		t.Errorf("equal texts: got %v", err)
	}
	err := sameText("a", "x\ny\nz", "b", "x\nY\nz")
	if err == nil || !strings.Contains(err.Error(), `line 2: "y" and "Y"`) {
		t.Errorf("got %v, want the first differing line", err)
	}
	err = sameText("a", "x", "b", "x\n")
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("got %v, want a difference at line 2", err)
	}
}
