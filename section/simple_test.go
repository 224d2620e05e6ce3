package section

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"text/template"
	"time"
)

type simpleInner struct{ City string }

type simpleParams struct {
	Name    string
	Count   int
	Ratio   float64
	Small   float32
	OK      bool
	Age     uint8
	Inner   simpleInner
	Wait    time.Duration // has a String method: text/template path
	Ptr     *simpleInner  // a pointer: text/template path
	private string
}

func (simpleParams) Greeting() string { return "hi" }

// TestSimpleMatchesTextTemplate checks that the fast path prints exactly
// what text/template prints, and that it declines what it cannot do.
func TestSimpleMatchesTextTemplate(t *testing.T) {
	p := simpleParams{Name: "Ann", Count: -3, Ratio: 2.5e-7, Small: 0.1, OK: true, Age: 200,
		Inner: simpleInner{City: "Oslo"}, Wait: time.Second, Ptr: &simpleInner{City: "Rome"}}
	pt := reflect.TypeOf(p)
	for _, tc := range []struct {
		src  string
		fast bool
	}{
		{"Hello {{.Name}}!", true},
		{"{{ .Count }} {{.Ratio}} {{.Small}} {{.OK}} {{.Age}}", true},
		{"{{.Inner.City}} and {{.Name}}{{.Name}}", true},
		{"no actions", true},
		{"{{.Wait}}", false},
		{"{{.Ptr.City}}", false},
		{"{{.Greeting}}", false},
		{"{{- .Name -}}", false},
		{"{{.Name | printf \"%q\"}}", false},
		{"{{if .OK}}y{{end}}", false},
		{"{{/* c */}}", false},
		{"{{.}}", false},
		{"{{.Inner}}", false},
		{"{{.Nope}}", false},
		{"{{.Name}", false},
		{"a.b.c {{.Name}} d.e", true},
		{"{{\u00a0.Name}}", false},
		{"{{\v.Name}}", false},
	} {
		t.Run(tc.src, func(t *testing.T) {
			b, ok := compileSimple(tc.src, pt)
			if ok != tc.fast {
				t.Fatalf("compileSimple ok = %v, want %v", ok, tc.fast)
			}
			if !ok {
				return
			}
			tmpl := template.Must(template.New("t").Option("missingkey=error").Parse(tc.src))
			var want strings.Builder
			if err := tmpl.Execute(&want, p); err != nil {
				t.Fatal(err)
			}
			if got, err := b.execute(p); err != nil || got != want.String() {
				t.Errorf("got %q, want %q (text/template)", got, want.String())
			}
		})
	}
}

func TestSimpleWrongParams(t *testing.T) {
	s := New(Spec[simpleParams]{Key: "a", Title: "A", Body: "{{.Name}}"})
	if s.simple == nil {
		t.Fatal("want the fast path")
	}
	for _, p := range []any{nil, "x", simpleInner{}} {
		if _, err := s.Body(p); err == nil {
			t.Errorf("Body(%T): got nil error, want one", p)
		}
	}
}

func TestSimpleCache(t *testing.T) {
	a := New(Spec[simpleParams]{Key: "a", Title: "A", Body: "Hi {{.Name}} cache test"})
	b := New(Spec[simpleParams]{Key: "b", Title: "B", Body: "Hi {{.Name}} cache test"})
	if a.simple == nil || a.simple != b.simple {
		t.Errorf("same source and type: got %p and %p, want one shared compiled body", a.simple, b.simple)
	}
	c := New(Spec[simpleInner]{Key: "c", Title: "C", Body: "Hi {{.City}} cache test"})
	if c.simple == a.simple {
		t.Error("another params type shares the body")
	}
	notSimple := New(Spec[simpleParams]{Key: "d", Title: "D", Body: "{{if .OK}}y{{end}}"})
	if notSimple.simple != nil || notSimple.body == nil {
		t.Error("a body with control flow must go to text/template")
	}
	for i := range maxSimpleCache + 10 {
		cachedSimple(fmt.Sprintf("{{.Name}} %d", i), reflect.TypeFor[simpleParams]())
	}
	simpleCache.mu.Lock()
	n := len(simpleCache.m)
	simpleCache.mu.Unlock()
	if n > maxSimpleCache {
		t.Errorf("cache holds %d entries, want at most %d", n, maxSimpleCache)
	}
}

// TestAppendBody checks that AppendBody appends what Body returns, for every
// kind of body, and leaves what dst held.
func TestAppendBody(t *testing.T) {
	p := simpleParams{Name: "Ann", Count: 7, Wait: time.Second}
	for name, s := range map[string]*Section{
		"fixed":    New(Spec[simpleParams]{Key: "k", Title: "T", Body: "fixed text"}),
		"simple":   New(Spec[simpleParams]{Key: "k", Title: "T", Body: "Hello {{.Name}}, {{.Count}}"}),
		"template": New(Spec[simpleParams]{Key: "k", Title: "T", Body: "{{if .OK}}yes{{else}}no {{.Wait}}{{end}}"}),
		"content": New(Spec[simpleParams]{Key: "k", Title: "T", Content: func(p simpleParams) (string, error) {
			return "computed for " + p.Name, nil
		}}),
	} {
		t.Run(name, func(t *testing.T) {
			want, err := s.Body(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.AppendBody([]byte("before|"), p)
			if err != nil || string(got) != "before|"+want {
				t.Errorf("got %q, %v; want %q", got, err, "before|"+want)
			}
		})
	}
	t.Run("wrong params", func(t *testing.T) {
		s := New(Spec[simpleParams]{Key: "k", Title: "T", Body: "Hello {{.Name}}"})
		if _, err := s.AppendBody(nil, struct{}{}); err == nil {
			t.Error("got no error for params of the wrong type")
		}
	})
}
