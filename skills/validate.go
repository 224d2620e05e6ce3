package skills

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/unfold-dev/unfold/internal/printable"
)

// Report is what [Validate] found: the skills that keep the rules and the
// problems of those that do not; [Report.Checked] counts both.
type Report struct {
	Valid    []string  // the names of the valid skills, by name
	Problems []Problem // each naming its file, line and rule
	// Warnings are what the format recommends and a skill does not do
	// ([RuleInstructionsSize]): the skill is valid all the same.
	Warnings []Problem

	invalid int // skills with problems
	// loaded are the skills that loading the folder would keep: those
	// valid, and those whose problems only Validate checks.
	loaded []loadedSkill
}

// loadedSkill is a skill that loading its folder would keep.
type loadedSkill struct {
	name, file string
	valid      bool
}

// Checked returns how many skills were checked: the valid ones and those
// with problems.
func (r *Report) Checked() int { return len(r.Valid) + r.invalid }

// Validate checks the skills at dir the way the format's reference
// validator does, and also that each SKILL.md can be read whole
// ([RuleSkillSize]) and that no file of a skill is a link leading out of
// its directory ([RuleLinks]): dir is one skill (it holds a SKILL.md) or a
// folder of skills. A dir with no skill, or one that cannot be read, is
// an error.
func Validate(dir string) (*Report, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("skills: validate %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("skills: validate: %w", err)
	}
	if !fi.IsDir() {
		if !strings.EqualFold(filepath.Base(abs), FileName) {
			return nil, fmt.Errorf("skills: validate %s: not a directory: give a skill's directory or a folder of skills", dir)
		}
		abs = filepath.Dir(abs) // SKILL.md itself: its skill
	}
	folder := Folder{FS: newDiskFS(abs), Dir: abs}
	var skills []*Skill
	var problems []Problem
	if isSkill(folder.FS) {
		parent := filepath.Dir(abs)
		var buf buffers
		k, ps := loadSkill(Folder{FS: newDiskFS(parent), Dir: parent}, filepath.Base(abs), &buf)
		if k != nil {
			skills = append(skills, k)
		}
		problems = ps
	} else if skills, problems, err = loadFolder(folder); err != nil {
		return nil, err
	}
	if len(skills) == 0 && len(problems) == 0 {
		return nil, fmt.Errorf("skills: validate %s: no skill found: want %s or NAME/%s in it", dir, FileName, FileName)
	}
	r := &Report{Problems: problems}
	dirs := map[string]bool{} // of the skills with problems
	for _, p := range problems {
		dirs[filepath.Dir(p.File)] = true
	}
	r.invalid = len(dirs)
	for _, k := range skills {
		if w, ok := k.instructionsSize(); ok {
			r.Warnings = append(r.Warnings, w)
		}
		ps := k.check()
		r.loaded = append(r.loaded, loadedSkill{k.Name, k.file, len(ps) == 0})
		if len(ps) > 0 {
			r.Problems = append(r.Problems, ps...)
			r.invalid++
			continue
		}
		r.Valid = append(r.Valid, k.Name)
	}
	return r, nil
}

// Unique checks the skills of r against those of the reports before it,
// as loading their folders together would ([LoadFolders]): loaded maps
// each name to the SKILL.md of the first skill of that name that loads
// (a valid one, or one whose problems only [Validate] checks, which
// loading keeps). A skill of r whose name is in loaded, from another
// file, would be left out: it is a [RuleUnique] problem naming the skill
// kept, and no longer valid. The others are added to loaded. `unfold
// skills validate A B` calls it on each DIR's report in turn.
func (r *Report) Unique(loaded map[string]string) {
	for _, k := range r.loaded {
		first, dup := loaded[k.name]
		if !dup || first == k.file {
			loaded[k.name] = k.file
			continue
		}
		r.Problems = append(r.Problems, Problem{File: k.file, Rule: RuleUnique,
			Message: fmt.Sprintf("a skill named %q is at %s already: loaded together, this one would be left out; rename one of them", k.name, first)})
		if k.valid {
			r.Valid = slices.DeleteFunc(r.Valid, func(n string) bool { return n == k.name })
			r.invalid++
		}
	}
}

// check returns the problems of a loaded skill that loading leaves to its
// use: a SKILL.md too large to read its instructions, links leading
// outside its directory, and links leading to nothing.
func (k *Skill) check() []Problem {
	var problems []Problem
	f, err := k.open(FileName)
	if err == nil {
		var fi fs.FileInfo
		fi, err = f.Stat()
		f.Close()
		if err == nil && fi.Size() > MaxSkillBytes {
			problems = append(problems, Problem{File: k.file, Rule: RuleSkillSize,
				Message: fmt.Sprintf("%s is %d bytes, over the limit of %d MiB: its instructions can never be read; move details into references/", FileName, fi.Size(), MaxSkillBytes>>20)})
		}
	}
	if err != nil {
		problems = append(problems, Problem{File: k.file, Rule: RuleSkillFile, Message: fmt.Sprintf("cannot read %s: %v", FileName, err)})
	}
	for _, p := range k.LinksOutside() {
		problems = append(problems, Problem{File: filepath.Join(k.Dir, filepath.FromSlash(p)), Rule: RuleLinks,
			Message: "a symbolic link leading outside the skill's directory: it is neither listed nor read; copy what it points to into the skill, or remove it"})
	}
	for _, d := range k.dangling {
		what := "which does not exist"
		if d.loop {
			what = "which leads back to the link itself (a loop of links)"
		}
		problems = append(problems, Problem{File: filepath.Join(k.Dir, filepath.FromSlash(d.path)), Rule: RuleLinks,
			Message: fmt.Sprintf("a symbolic link to %s, %s: it is not listed; point it to a file of the skill, or remove it", "`"+printable.String(d.target)+"`", what)})
	}
	return problems
}

// The size of the instructions the format recommends: under 500 lines
// and 5,000 tokens, about 20,000 bytes of English at 4 bytes a token.
const (
	MaxInstructionsLines = 500
	MaxInstructionsBytes = 20000
)

// instructionsSize returns a warning when the skill's instructions are
// longer than the format recommends.
func (k *Skill) instructionsSize() (Problem, bool) {
	text, err := k.Instructions()
	if err != nil {
		return Problem{}, false // check reports it
	}
	lines := strings.Count(text, "\n") + 1
	if lines <= MaxInstructionsLines && len(text) <= MaxInstructionsBytes {
		return Problem{}, false
	}
	msg := fmt.Sprintf("the instructions are %d lines and %s (about %d tokens), past the %d lines and %d tokens the format recommends: move details into references/ and point to them", lines, size(int64(len(text))), len(text)/4, MaxInstructionsLines, MaxInstructionsBytes/4)
	if len(text) > MaxShownBytes {
		msg += fmt.Sprintf("; past %s, a skill's section shows only their start", size(MaxShownBytes))
	}
	return Problem{File: k.file, Rule: RuleInstructionsSize, Message: msg}, true
}

// isSkill reports whether fsys is a skill's directory: it holds a file
// named SKILL.md in any case.
func isSkill(fsys fs.FS) bool {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return false
	}
	for _, e := range entries {
		if strings.EqualFold(e.Name(), FileName) && !e.IsDir() {
			return true
		}
	}
	return false
}
