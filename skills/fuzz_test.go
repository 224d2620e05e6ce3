package skills_test

import (
	"runtime"
	"testing"
	"testing/fstest"
	"time"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/skills"
)

// FuzzLoad loads any SKILL.md: it never panics, and a skill either loads
// with fields that keep the rules or is left out with problems.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		"---\nname: demo\ndescription: d\n---\nbody",
		"---\nname: demo\ndescription: >\n  folded\nmetadata:\n  v: 1.0\nallowed-tools: [a, b]\n---\n",
		"---\nname: &a demo\ndescription: *a\n---\n",
		"---\n!!str name: !!str demo\ndescription: d\n---\n",
		"---\nname: demo\ndescription: d\nmetadata: {a: [1]}\n---\n",
		"---\n? name\n: demo\ndescription: d\n---\n",
		"---\nname: \"de\\u006do\"\ndescription: |-\n  x\n---\n",
		"\uFEFF---\r\nname: demo\r\ndescription: d\r\n---\r\n",
		"---\n---\n",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		type loaded struct {
			set *skills.Set
			err error
		}
		done := make(chan loaded, 1)
		go func() {
			set, err := skills.LoadFolders(skills.Folder{FS: fstest.MapFS{"demo/SKILL.md": {Data: []byte(src)}}})
			done <- loaded{set, err}
		}()
		var set *skills.Set
		var err error
		select {
		case l := <-done:
			set, err = l.set, l.err
		case <-time.After(5 * time.Second):
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("load of %q did not end in 5s:\n%s", src, buf[:n])
		}
		if err != nil {
			t.Fatal(err)
		}
		ps := set.Problems()
		switch {
		case set.Len() == 1 && len(ps) == 0:
			k := set.Skills()[0]
			if k.Name != "demo" || k.Description == "" || utf8.RuneCountInString(k.Description) > skills.MaxDescriptionLength {
				t.Errorf("loaded %q with description %q: want demo and 1 to 1,024 characters", k.Name, k.Description)
			}
			if _, err := k.Instructions(); err != nil {
				t.Errorf("instructions: %v", err)
			}
			if s := k.Section(); s == nil || s.Summary() != section.Literal(k.Description) {
				t.Errorf("section: got %v", s)
			}
		case set.Len() == 0 && len(ps) > 0:
			for _, p := range ps {
				if p.Line < 0 || p.Message == "" || p.Rule == "" {
					t.Errorf("problem %+v: want a line, a message and a rule", p)
				}
			}
		default:
			t.Errorf("got %d skills and %d problems: want a skill or problems", set.Len(), len(ps))
		}
	})
}
