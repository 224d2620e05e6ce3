package section_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/section"
)

// TestWorkSharedByRender: the sections of one render take their steps
// from one Work, so many sections each under the bound fail together,
// naming where; each with a Work of its own, they pass.
func TestWorkSharedByRender(t *testing.T) {
	defer section.SetMaxSteps(10_000)()
	var secs []*section.Section
	for i := range 20 {
		secs = append(secs, section.New(section.Spec[section.None]{
			Key: fmt.Sprintf("s%d", i), Title: "S", Body: "{{range 999}}{{end}}x",
			Summary: `{{define "t"}}{{end}}{{range 99}}{{template "t"}}{{end}}y`,
		}))
	}
	for _, s := range secs {
		if text, err := s.Body(nil); err != nil || text != "x" {
			t.Fatalf("alone: got %q, %v", text, err)
		}
	}
	w := section.NewWork()
	var err error
	done := 0
	for _, s := range secs {
		if _, err = s.BodyWith(w, nil); err != nil {
			break
		}
		if _, err = s.SummaryWith(w, nil); err != nil {
			break
		}
		done++
	}
	// 999 + 1 + 2*99 steps a section: the tenth takes the total past 10,000.
	if !errors.Is(err, section.ErrTooManySteps) || done != 8 {
		t.Fatalf("got %v after %d sections, want %v after 8", err, done, section.ErrTooManySteps)
	}
	if want := "more than 10000 in one render, all templates together; loop over fewer items"; !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "unfold_") {
		t.Errorf("got %q, want it to say %q and not name the function that counts", err, want)
	}
	if _, err := secs[19].BriefWith(w, nil); err != nil {
		t.Errorf("a section without a brief template takes no work: %v", err)
	}
}

// TestWorkBytes: each step may move up to 16 MiB, so steps alone do not
// bound the time; the bytes the string builtins read and write, and those
// the templates write, are bounded for the render too.
func TestWorkBytes(t *testing.T) {
	defer section.SetMaxBytes(64 << 20)()
	tests := []struct{ name, body string }{
		// 127 bytes that quoted 8 MiB a million times (a day's work).
		{"quoting in a loop", `{{$x := printf "%65536s" ""}}{{range 7}}{{$x = print $x $x}}{{end}}{{range 999999}}{{$y := printf "%q" $x}}{{end}}done`},
		{"escaping in a loop", `{{$x := printf "%65536s" ""}}{{range 6}}{{$x = print $x $x}}{{end}}{{range 999999}}{{$y := html $x}}{{$y = js $x}}{{$y = urlquery $x}}{{end}}`},
		{"comparing in a loop", `{{$x := printf "%65536s" ""}}{{range 6}}{{$x = print $x $x}}{{end}}{{$y := print $x "."}}{{$z := print $x ","}}{{range 999999}}{{if or (eq $y $z) (lt $z $y)}}{{end}}{{end}}`},
		{"writing in many sections", "{{range 4000}}" + strings.Repeat("x", 1024) + "{{end}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := section.NewWork()
			var err error
			for i := 0; i < 100 && err == nil; i++ {
				s := section.New(section.Spec[section.None]{Key: fmt.Sprintf("s%d", i), Title: "S", Body: tt.body})
				_, err = s.BodyWith(w, nil)
			}
			if want := "more than 67108864 bytes in one render, all templates together; build less text in loops, or give it in the params"; !errors.Is(err, section.ErrTooMuchText) || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v, want %v saying %q", err, section.ErrTooMuchText, want)
			}
		})
	}
}

// allocated returns the bytes allocated while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestBuiltinsRefuseBeforeBuilding: a text the string builtins would
// make past MaxBodyBytes is refused before it is built: many arguments,
// a width applied to each element of an array or a map, a precision on
// floats. What is allocated stays a small part of what fmt would build.
func TestBuiltinsRefuseBeforeBuilding(t *testing.T) {
	type P struct {
		A []any
		F []float64
		M map[string]int
		S string
		Q string
	}
	p := P{A: make([]any, 2000), F: make([]float64, 2000), M: map[string]int{}, S: strings.Repeat("<", 6<<20), Q: strings.Repeat("\x01", 5<<20)}
	for i := range p.A {
		p.A[i] = int64(i)
		p.F[i] = 1e300
		p.M[fmt.Sprint(i)] = i
	}
	mib := `{{$x := printf "%65536s" ""}}{{range 4}}{{$x = print $x $x}}{{end}}`
	tests := []struct {
		name, body string
		built      int // bytes fmt would build
		says       string
	}{
		{"print of many arguments", mib + `{{len (print` + strings.Repeat(" $x", 64) + `)}}`, 64 << 20, "print: its result would be more than"},
		{"println of many arguments", mib + `{{len (println` + strings.Repeat(" $x", 64) + `)}}`, 64 << 20, "println: its result would be more than"},
		{"printf of many arguments", mib + `{{len (printf "%s%s%s%s%[1]s%[2]s%[3]s%[4]s%[1]s%[2]s%[3]s%[4]s%[1]s%[2]s%[3]s%[4]s%[1]s%[2]s%[3]s%[4]s%[1]s%[2]s" $x $x $x $x)}}`, 18 << 20, "printf: its result would be more than"},
		{"a width for each element", `{{len (printf "%65536v" .A)}}`, 2000 * 65536, "printf: its result would be more than"},
		{"a width for each entry of a map", `{{len (printf "%65536v" .M)}}`, 4000 * 65536, "printf: its result would be more than"},
		{"a precision for each float", `{{len (printf "%.65536f" .F)}}`, 2000 * 65536, "printf: its result would be more than"},
		{"a width from an argument", `{{len (printf "%*v" 65536 .A)}}`, 2000 * 65536, "printf: its result would be more than"},
		{"html of many arguments", mib + `{{len (html` + strings.Repeat(" $x", 64) + `)}}`, 64 << 20, "html: its result would be more than"},
		{"html that grows", `{{len (html .S)}}`, 24 << 20, "html: its result would be up to 25165824 bytes"},
		{"js that grows", `{{len (js .S)}}`, 36 << 20, "js: its result would be up to 37748736 bytes"},
		{"urlquery that grows", `{{len (urlquery .S)}}`, 18 << 20, "urlquery: its result would be up to"},
		{"quoting that grows", `{{len (printf "%q" .Q)}}`, 20 << 20, "printf: its result would be more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := section.New(section.Spec[P]{Key: "k", Title: "K", Body: tt.body})
			var err error
			got := allocated(func() { _, err = s.Body(p) })
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("got %v, want %q", err, tt.says)
			}
			// The 1 MiB variable costs about 2 MiB; fmt's text would be
			// tt.built bytes.
			if limit := uint64(8 << 20); got > limit {
				t.Errorf("allocated %d bytes, want under %d (fmt would build %d)", got, limit, tt.built)
			}
		})
	}
	// Inside the bound, the same builtins build the text.
	for body, want := range map[string]int{
		mib + `{{len (print` + strings.Repeat(" $x", 15) + `)}}`:    15 << 20,
		`{{printf "%100v" .A}}`:                                     2000*101 + 1,
		`{{printf "%.200s" (print .A)}}`:                            200,
		mib + `{{len (printf "%q" $x)}}`:                            1<<20 + 2,
		mib + `{{len (html $x)}}`:                                   1 << 20,
		`{{printf "%5.1f|%x|%X|% x|%#v" 3.14159 "ab" 255 "hi" .M}}`: 0,
	} {
		s := section.New(section.Spec[P]{Key: "k", Title: "K", Body: body})
		text, err := s.Body(p)
		if err != nil || want > 0 && strings.TrimSpace(text) != fmt.Sprint(want) && len(text) != want {
			t.Errorf("%.60s: got %.60q (%d bytes), %v; want %d", body, text, len(text), err, want)
		}
	}
}

// TestWorkAtOnce: executions of one section at once, each with a Work of
// its own, each charge their own: every one runs as many times as one
// alone does before its Work runs out.
func TestWorkAtOnce(t *testing.T) {
	defer section.SetMaxSteps(10_000)()
	s := section.New(section.Spec[section.None]{Key: "s", Title: "S", Body: "{{range 999}}{{end}}x"})
	runs := func() int {
		w := section.NewWork()
		n := 0
		for {
			if _, err := s.BodyWith(w, nil); err != nil {
				return n
			}
			n++
		}
	}
	alone := runs()
	if alone == 0 {
		t.Fatal("no run alone")
	}
	got := make([]int, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = runs() })
	}
	wg.Wait()
	for i, n := range got {
		if n != alone {
			t.Errorf("execution %d: %d runs, want %d as alone", i, n, alone)
		}
	}
}
