package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/unfold-dev/unfold/envs/editor"
)

// runEditor measures screen regeneration (five views of 1,000 lines near
// the end of a 1 MB file, re-read on every screen) and a search over 2,000
// files side by side with grep -rn over the same tree (a process per
// search, as an agent runs it). There is no peer editor environment to
// install; grep is the baseline search must stay near. Both list every
// matching line, and the lists are checked equal before timing.
func runEditor(cfg *config) (*table, error) {
	dir, err := os.MkdirTemp(cfg.tmp, "editor-")
	if err != nil {
		return nil, err
	}
	if err := writeBigFile(filepath.Join(dir, "big.go"), 1<<20); err != nil {
		return nil, err
	}
	if err := writeTree(dir); err != nil {
		return nil, err
	}
	e, err := editor.New(dir, nil, editor.WithMaxMatches(10_000))
	if err != nil {
		return nil, err
	}
	defer e.Close()
	ctx := context.Background()
	for k := range 5 {
		cmd := fmt.Sprintf("view big.go /^\\/\\/ section %d$/ /^\\/\\/ end %d$/", k, k)
		if r, err := e.Execute(ctx, cmd); err != nil || !r.Success {
			return nil, fmt.Errorf("%s: %s %v", cmd, r.Output, err)
		}
	}
	s, err := e.Screen()
	if err != nil {
		return nil, err
	}
	// Each view resolves its 1,000 lines; the screen draws those that fit
	// the views' byte budget.
	if n := strings.Count(s.Content, "] big.go /"); n != 5 {
		return nil, fmt.Errorf("screen has %d views of big.go, want five", n)
	}
	screen := &row{label: "unfold editor: screen, 5 views x 1,000 lines, 1 MB file", per: "screen"}
	search := &row{label: "unfold editor: search \"TODO\" **/*.go (2,000 files)", per: "search"}
	grep := &row{label: "grep -rn TODO --include=*.go (a process)", per: "search"}
	query := `search "TODO" **/*.go`
	if err := sameMatches(e, query, dir); err != nil {
		return nil, err
	}
	sides := func(round, n int) error {
		return rotate(max(round, 0),
			func() error {
				ds, err := timeN(n*5, func() error { _, err := e.Screen(); return err })
				if round >= 0 {
					screen.s.add(round, ds)
				}
				return err
			},
			func() error {
				ds, err := timeN(n, func() error {
					_, err := searchLines(e, query)
					return err
				})
				if round >= 0 {
					search.s.add(round, ds)
				}
				return err
			},
			func() error {
				ds, err := timeN(n, func() error {
					lines, err := grepLines(dir)
					if err == nil && len(lines) != 2000 {
						err = fmt.Errorf("grep found %d lines, want 2000", len(lines))
					}
					return err
				})
				if round >= 0 {
					grep.s.add(round, ds)
				}
				return err
			})
	}
	if err := sides(-1, 2); err != nil {
		return nil, err
	}
	for round := range cfg.rounds {
		if err := sides(round, 10); err != nil {
			return nil, err
		}
	}
	return &table{
		name:   "editor",
		desc:   "screen regeneration and search",
		rows:   []*row{screen, search, grep},
		ratios: []ratio{{label: "unfold search / grep -rn", num: search, den: grep, target: "at most 1.5x"}},
		notes: []string{
			"no peer to install does what the editor environment does; grep -rn is the baseline for search",
			"both list all 2,000 matching lines, checked equal before timing; grep's time includes starting its process",
		},
	}, nil
}

// searchLines runs an editor search and returns its "path:line:text"
// lines, as grep -n writes them.
func searchLines(e *editor.Editor, query string) ([]string, error) {
	r, err := e.Execute(context.Background(), query)
	if err != nil || !r.Success {
		return nil, fmt.Errorf("%s: %s %v", query, r.Output, err)
	}
	lines := strings.Split(r.Output, "\n")
	if len(lines) < 2 || lines[0] != "Matches:" || !strings.HasPrefix(lines[len(lines)-1], "Searched ") {
		return nil, fmt.Errorf("%s: unexpected output %q", query, r.Output)
	}
	lines = lines[1 : len(lines)-1]
	for i, l := range lines {
		lines[i] = strings.Replace(strings.TrimPrefix(l, "  "), ": ", ":", 1)
	}
	return lines, nil
}

// grepLines runs grep -rn TODO --include=*.go in dir and returns its
// lines, sorted.
func grepLines(dir string) ([]string, error) {
	cmd := exec.Command("grep", "-rn", "TODO", "--include=*.go", ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("grep: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "./")
	}
	slices.Sort(lines)
	return lines, nil
}

// sameMatches checks that search and grep find the same lines in dir.
func sameMatches(e *editor.Editor, query, dir string) error {
	got, err := searchLines(e, query)
	if err != nil {
		return err
	}
	want, err := grepLines(dir)
	if err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("search and grep differ: %d lines and %d lines", len(got), len(want))
	}
	return nil
}

// writeBigFile writes about size bytes with five sections of 1,000 lines
// near the end: "// section k" to "// end k" (as envs/editor's benchmark).
func writeBigFile(name string, size int) error {
	var sb strings.Builder
	const filler = "    value = compute(value, %07d) // some filler text\n"
	lines := size / len(fmt.Sprintf(filler, 0))
	first := lines - 5*1000 - 10
	for i := range lines {
		if k := (i - first) / 1000; i >= first && k < 5 {
			switch (i - first) % 1000 {
			case 0:
				fmt.Fprintf(&sb, "// section %d\n", k)
				continue
			case 999:
				fmt.Fprintf(&sb, "// end %d\n", k)
				continue
			}
		}
		fmt.Fprintf(&sb, filler, i)
	}
	return os.WriteFile(name, []byte(sb.String()), 0o644)
}

// writeTree writes 40 directories of 50 files of 40 lines, one TODO line in
// each file.
func writeTree(dir string) error {
	var body strings.Builder
	for i := range 40 {
		if i == 20 {
			body.WriteString("\t// TODO: handle the error\n")
			continue
		}
		fmt.Fprintf(&body, "\tx%d := compute(%d) // filler line\n", i, i)
	}
	for d := range 40 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		for f := range 50 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%02d.go", f)), []byte(body.String()), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
