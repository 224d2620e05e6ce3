package skills_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/skills"
	"github.com/unfold-dev/unfold/tokens"
)

// writeSkills writes n skills to a new folder: each a SKILL.md with a
// description of about 200 characters and 4 KB of instructions, a script
// and a reference.
func writeSkills(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	body := strings.Repeat("Follow this step with care, then check the result before the next one.\n", 56)
	for i := range n {
		name := fmt.Sprintf("skill-%03d", i)
		files := map[string]string{
			"SKILL.md":                fmt.Sprintf("---\nname: %s\ndescription: Handles task %d from start to end. It reads the input files, checks them, runs the steps in order and writes a report. Use when the user asks for task %d.\nlicense: MIT\n---\n\n# Skill %d\n\n%s", name, i, i, i, body),
			"scripts/run.py":          "#!/usr/bin/env python3\n\"\"\"Runs the task.\"\"\"\nprint('ok')\n",
			"references/REFERENCE.md": "# Reference\n\nDetails of the task.\n",
		}
		for p, data := range files {
			path := filepath.Join(dir, name, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return dir
}

// BenchmarkLoad500 loads 500 skills from disk: front matter, validation,
// and the file listing with each file's first line; no instructions.
func BenchmarkLoad500(b *testing.B) {
	dir := writeSkills(b, 500)
	for b.Loop() {
		set, err := skills.Load(dir)
		if err != nil || set.Len() != 500 {
			b.Fatalf("got %d skills, %v", set.Len(), err)
		}
	}
}

// BenchmarkLoad500Catalog loads 500 skills and renders their catalog into
// a prompt under a budget: what a front end does at start.
func BenchmarkLoad500Catalog(b *testing.B) {
	dir := writeSkills(b, 500)
	for b.Loop() {
		set, err := skills.Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		tmpl, err := prompt.New("bench", "skills", set.Section())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tmpl.MustBind().Render(session.New(), nil, prompt.WithBudget(20000, tokens.Estimate)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTmpBare500(b *testing.B) {
	dir := writeSkills(b, 500)
	for i := range 500 {
		os.RemoveAll(filepath.Join(dir, fmt.Sprintf("skill-%03d", i), "scripts"))
		os.RemoveAll(filepath.Join(dir, fmt.Sprintf("skill-%03d", i), "references"))
	}
	for b.Loop() {
		set, err := skills.Load(dir)
		if err != nil || set.Len() != 500 {
			b.Fatalf("got %d skills, %v", set.Len(), err)
		}
	}
}

func BenchmarkTmpReadOnly500(b *testing.B) {
	dir := writeSkills(b, 500)
	for b.Loop() {
		for i := range 500 {
			f, _ := os.Open(filepath.Join(dir, fmt.Sprintf("skill-%03d", i), "SKILL.md"))
			var buf [1024]byte
			f.Read(buf[:])
			f.Close()
		}
	}
}
