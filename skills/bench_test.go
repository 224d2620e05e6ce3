package skills_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/unfold-dev/unfold/internal/textgen"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/skills"
	"github.com/unfold-dev/unfold/tokens"
)

// writeSkills writes n skills to a new folder (textgen.WriteSkills).
func writeSkills(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	if err := textgen.WriteSkills(dir, n); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkLoad500 loads 500 skills from disk: front matter and rules; no
// file lists, no instructions, no file content. Besides the time per load it
// reports the processor time (user and system, of both workers), which
// other programs on a shared machine sway less.
func BenchmarkLoad500(b *testing.B) {
	dir := writeSkills(b, 500)
	cpu := cpuTime()
	for b.Loop() {
		set, err := skills.Load(dir)
		if err != nil || set.Len() != 500 {
			b.Fatalf("got %d skills, %v", set.Len(), err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkLoad500Eager loads 500 skills and reads every one's
// instructions, as a loader that holds them would: what reading them on
// opening saves.
func BenchmarkLoad500Eager(b *testing.B) {
	dir := writeSkills(b, 500)
	for b.Loop() {
		set, err := skills.Load(dir)
		if err != nil || set.Len() != 500 {
			b.Fatalf("got %d skills, %v", set.Len(), err)
		}
		for _, k := range set.Skills() {
			if _, err := k.Instructions(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkOpen500Floor opens each of the 500 SKILL.md files, reads its
// first KiB and closes it, one after the other: the file system's share,
// which no loader goes below.
func BenchmarkOpen500Floor(b *testing.B) {
	dir := writeSkills(b, 500)
	buf := make([]byte, 1024)
	for b.Loop() {
		for i := range 500 {
			f, err := os.Open(filepath.Join(dir, fmt.Sprintf("skill-%03d", i), skills.FileName))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Read(buf); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	}
}

// BenchmarkCatalog500 loads 500 skills and renders their catalog into a
// prompt under a budget: what a front end does when it starts.
func BenchmarkCatalog500(b *testing.B) {
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

// BenchmarkFiles500 loads 500 skills and lists every one's files, as
// `unfold mcp` does when a client connects, to offer each file as a
// resource.
func BenchmarkFiles500(b *testing.B) {
	dir := writeSkills(b, 500)
	files := 0
	cpu := cpuTime()
	for b.Loop() {
		set, err := skills.Load(dir)
		if err != nil || set.Len() != 500 {
			b.Fatalf("got %v, %v", set, err)
		}
		files = 0
		for _, k := range set.Skills() {
			files += len(k.Files())
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	if files != 1000 {
		b.Fatalf("got %d files, want 1000", files)
	}
}
