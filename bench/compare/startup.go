package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// startupPrompt is a small prompt file, as a user would render first.
const startupPrompt = `# Task

Complete the following task: {{.task}}

# Rules {#rules}

Keep answers short. Cite the files you read.

## Style {#style visibility=summary summary="How to write."}

Plain words, short sentences, no jargon the reader has not seen.

# Reference {#reference visibility=summary summary="API docs on request." priority=2}

The API takes JSON and answers JSON; every call is idempotent.
`

// runStartup times whole unfold processes, each started afresh: rendering
// a small prompt file with the exact o200k_base counter, the same with the
// estimate, and printing the help, the floor every unfold process pays;
// and beside them a Go program that does nothing, the floor of any Go
// process on the machine at that time. It also reports the size of the
// binary.
func runStartup(cfg *config) (*table, error) {
	if cfg.unfold == "" {
		return nil, errors.New("no -unfold binary: run bench/compare/run.sh, which builds it")
	}
	fi, err := os.Stat(cfg.unfold)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cfg.tmp, "startup-")
	if err != nil {
		return nil, err
	}
	promptFile := filepath.Join(dir, "prompt.md")
	if err := os.WriteFile(promptFile, []byte(startupPrompt), 0o644); err != nil {
		return nil, err
	}
	paramsFile := filepath.Join(dir, "params.json")
	if err := os.WriteFile(paramsFile, []byte(`{"task": "add a --verbose flag"}`), 0o644); err != nil {
		return nil, err
	}
	empty, err := buildEmpty(dir)
	if err != nil {
		return nil, err
	}
	kinds := []struct {
		row  *row
		bin  string // cfg.unfold when empty
		args []string
		want string // in the output
	}{
		{&row{label: "unfold render --tree, exact o200k_base count", per: "process"}, "", []string{"render", promptFile, "--params", paramsFile, "--tree", "--tokenizer", "o200k"}, "total "},
		{&row{label: "unfold render --tree, estimated count", per: "process"}, "", []string{"render", promptFile, "--params", paramsFile, "--tree", "--tokenizer", "estimate"}, "total "},
		{&row{label: "unfold --help", per: "process"}, "", []string{"--help"}, "Commands:"},
		{&row{label: "floor: a Go program that does nothing", per: "process"}, empty, nil, ""},
	}
	outputs := make([][]byte, len(kinds))
	sides := make([]func() error, len(kinds))
	var round, n int // the round being timed (-1 for the warm-up), and the processes each side starts
	for i, k := range kinds {
		sides[i] = func() error {
			ds, err := timeN(n, func() error {
				var out bytes.Buffer
				bin, what := k.bin, k.bin
				if bin == "" {
					bin, what = cfg.unfold, strings.TrimSpace("unfold "+strings.Join(k.args, " "))
				}
				cmd := exec.Command(bin, k.args...)
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Run(); err != nil {
					return fmt.Errorf("%s: %v: %.300s", what, err, out.Bytes())
				}
				switch {
				case !bytes.Contains(out.Bytes(), []byte(k.want)):
					return fmt.Errorf("%s: got %.300s, want %q in it", what, out.Bytes(), k.want)
				case outputs[i] == nil:
					outputs[i] = out.Bytes()
				case !bytes.Equal(out.Bytes(), outputs[i]):
					return fmt.Errorf("%s printed something else from one run to the next", what)
				}
				return nil
			})
			if round >= 0 {
				k.row.s.add(round, ds)
			}
			return err
		}
	}
	// One process of each side in turn, so that a change of the machine's
	// load falls on all of them alike.
	round, n = -1, 1
	for i := range 3 {
		if err := rotate(i, sides...); err != nil {
			return nil, err
		}
	}
	for round = range cfg.rounds {
		for i := range 20 {
			if err := rotate(round+i, sides...); err != nil {
				return nil, err
			}
		}
	}
	exact, estimate, help, floor := kinds[0].row, kinds[1].row, kinds[2].row, kinds[3].row
	t := &table{
		name: "startup",
		desc: "whole unfold processes, each started afresh: a small prompt file rendered with its token tree, and the help; beside them a Go program that does nothing, the floor of a process on this machine at the time",
		rows: []*row{exact, estimate, help, floor},
		ratios: []ratio{
			{label: "exact count / estimate (what the vocabulary costs a process)", num: exact, den: estimate},
			{label: "exact count / help (over the floor of an unfold process)", num: exact, den: help},
			{label: "help / empty Go program (what unfold's size and its packages' initialization cost)", num: help, den: floor},
		},
		notes: []string{
			fmt.Sprintf("binary: %.1f MB (%d bytes), as run.sh builds it with go build's defaults, which go install uses too", float64(fi.Size())/1e6, fi.Size()),
			fmt.Sprintf("exact and estimated totals: %s and %s", total(outputs[0]), total(outputs[1])),
			"goals: a small prompt rendered with the exact counter in under 15 ms; a binary under 40 MB",
		},
	}
	return t, nil
}

// buildEmpty builds a Go program that does nothing into dir and returns
// its path.
func buildEmpty(dir string) (string, error) {
	src := filepath.Join(dir, "empty")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{"go.mod": "module empty\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {}\n"}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(dir, "empty-program")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building an empty Go program: %v: %s", err, out)
	}
	return bin, nil
}

// total returns the "total N tokens" line of a --tree output.
func total(out []byte) string {
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, "total ") {
			return strings.TrimSpace(line)
		}
	}
	return "none"
}
