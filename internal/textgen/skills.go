package textgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SkillDescription is the description of skill i that [WriteSkills]
// writes: about 200 characters, as real skills have.
func SkillDescription(i int) string {
	return fmt.Sprintf("Handles task %d from start to end. It reads the input files, checks them, runs the steps in order and writes a report. Use when the user asks for task %d.", i, i)
}

// WriteSkills writes n Agent Skills to dir (skill-000, skill-001, ...),
// each a SKILL.md with a description (SkillDescription), a license and 4
// KB of instructions, a script under scripts/ and a reference under
// references/: the folder the skills benchmarks load.
func WriteSkills(dir string, n int) error {
	body := strings.Repeat("Follow this step with care, then check the result before the next one.\n", 56)
	for i := range n {
		name := fmt.Sprintf("skill-%03d", i)
		files := map[string]string{
			"SKILL.md":                fmt.Sprintf("---\nname: %s\ndescription: %s\nlicense: MIT\n---\n\n# Skill %d\n\n%s", name, SkillDescription(i), i, body),
			"scripts/run.py":          "#!/usr/bin/env python3\n\"\"\"Runs the task.\"\"\"\nprint('ok')\n",
			"references/REFERENCE.md": "# Reference\n\nDetails of the task.\n",
		}
		for p, data := range files {
			path := filepath.Join(dir, name, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
