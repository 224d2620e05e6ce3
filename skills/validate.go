package skills

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Report is what [Validate] found: the skills that keep the rules and the
// problems of those that do not; [Report.Checked] counts both.
type Report struct {
	Valid    []string  // the names of the valid skills, by name
	Problems []Problem // each naming its file, line and rule
}

// Checked returns how many skills were checked: the valid ones and those
// with problems.
func (r *Report) Checked() int {
	files := map[string]bool{}
	for _, p := range r.Problems {
		files[filepath.Dir(p.File)] = true
	}
	return len(r.Valid) + len(files)
}

// Validate checks the skills at dir the way the format's reference
// validator does: dir is one skill (it holds a SKILL.md) or a folder of
// skills. A dir with no skill, or one that cannot be read, is an error.
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
	for _, k := range skills {
		r.Valid = append(r.Valid, k.Name)
	}
	return r, nil
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
