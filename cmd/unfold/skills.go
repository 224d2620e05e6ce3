package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/promptfile"
	"github.com/unfold-dev/unfold/skills"
)

const skillsHelp = `Usage: unfold skills validate DIR...

Check Agent Skills the way the format's reference validator does. Each DIR
is one skill (a directory holding SKILL.md) or a folder of skills (each
NAME/SKILL.md). Every problem is printed as FILE:LINE: message (rule); the
exit status is 1 when there is any, 0 when every skill is valid. A warning
(FILE: warning: message (rule)) says what the format recommends and a
valid skill does not do: instructions over 500 lines or about 5,000
tokens (instructions-size); a skill's section shows the first 64 KiB of
them. With several DIRs, a valid skill whose name an earlier DIR's valid
skill has is a problem (name-unique), as --skills A --skills B would
leave it out.

The rules: SKILL.md starts with YAML front matter between "---" lines;
name is 1 to 64 characters of lowercase letters, digits and hyphens (not at
either end, never two in a row) and is the directory's name; description
is 1 to 1,024 characters; license, compatibility (at most 500
characters), metadata (strings to strings) and allowed-tools are optional;
no other field.
`

// skillDirs is the value of a repeatable --skills flag.
type skillDirs []string

func (d *skillDirs) String() string { return strings.Join(*d, ",") }

func (d *skillDirs) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("empty directory")
	}
	*d = append(*d, v)
	return nil
}

// skillsFlag adds the --skills flag to fs.
func skillsFlag(fs *flag.FlagSet) *skillDirs {
	d := &skillDirs{}
	fs.Var(d, "skills", "a skills `DIR`ectory (each skill a NAME/SKILL.md) to offer; repeat for more")
	return d
}

// loadSkills loads the skills of project's skills folders (none when
// project is empty) and of dirs, in that order, and reports each skill
// left out on stderr. It returns nil when there is no skill.
func loadSkills(project string, dirs []string, stderr io.Writer, cmd string) (*skills.Set, error) {
	var all []string
	if project != "" {
		found, err := skills.Discover(project)
		if err != nil {
			return nil, err
		}
		all = append(all, found...)
	}
	all = append(all, dirs...)
	if len(all) == 0 {
		return nil, nil
	}
	set, err := skills.Load(all...)
	if err != nil {
		return nil, err
	}
	for _, p := range set.Problems() {
		fmt.Fprintf(stderr, "unfold %s: skill left out: %s\n", cmd, p)
	}
	if set.Len() == 0 {
		return nil, nil
	}
	return set, nil
}

// skillsClash refuses the prompt file f, read from name, when a top-level
// heading has the key the skills section takes, naming its line: the
// skills section would clash with it.
func skillsClash(name string, f *promptfile.File, set *skills.Set) error {
	if set == nil || set.Len() == 0 {
		return nil
	}
	if line := f.Line(skills.SectionKey); line > 0 {
		return fmt.Errorf("%s:%d: the heading's key is %q, which the skills section takes: give the heading another key, as in \"# Skills {#my-skills}\"", name, line, skills.SectionKey)
	}
	return nil
}

// withSkills returns t with the skills section after its own sections, or
// t when there is no skill.
func withSkills(t *prompt.Template, set *skills.Set) (*prompt.Template, error) {
	if set == nil {
		return t, nil
	}
	return t.With(set.Section())
}

func runSkills(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, skillsHelp)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, skillsHelp)
		return 0
	case "validate":
	default:
		fmt.Fprintf(stderr, "unfold skills: unknown subcommand %q: want validate\n\n%s", args[0], skillsHelp)
		return 2
	}
	fs := flag.NewFlagSet("skills validate", flag.ContinueOnError)
	if code := parseFlagsArgs(fs, skillsHelp, args[1:], stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "unfold skills validate: want at least one DIR\n\n%s", skillsHelp)
		return 2
	}
	code := 0
	loaded := map[string]string{} // the SKILL.md of each valid skill's name, across DIRs
	for _, dir := range fs.Args() {
		r, err := skills.Validate(dir)
		if err != nil {
			fmt.Fprintf(stderr, "unfold skills validate: %v\n", err)
			code = 1
			continue
		}
		r.Unique(loaded)
		for _, p := range r.Problems {
			fmt.Fprintln(stdout, p)
		}
		for _, w := range r.Warnings {
			w.Message = "warning: " + w.Message
			fmt.Fprintln(stdout, w)
		}
		warned := ""
		if n := len(r.Warnings); n > 0 {
			warned = fmt.Sprintf(", %d %s", n, plural(n, "warning", "warnings"))
		}
		fmt.Fprintf(stdout, "%s: %d %s checked, %d valid%s\n", dir, r.Checked(), plural(r.Checked(), "skill", "skills"), len(r.Valid), warned)
		if len(r.Problems) > 0 {
			code = 1
		}
	}
	return code
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
