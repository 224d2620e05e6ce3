// Package skills loads Agent Skills, the open SKILL.md format, as prompt
// sections: a skill is a directory holding a SKILL.md (YAML front matter
// with a name and a description, then instructions in markdown) and, often,
// scripts/, references/ and assets/ folders, and any other file its
// instructions point to.
//
// Skills disclose themselves in three levels, and each level is a section
// that opens like any other (through open_sections, [prompt.Disclosure] or
// [prompt.Rendered.Open]):
//
//  1. The skills section lists every skill by name and description.
//  2. Opening a skill shows its instructions, read from SKILL.md then, under
//     a line naming the skill's directory, so that relative paths in them
//     work and its scripts run from there with the bash or python
//     environment.
//  3. Each file in the skill's directory (but SKILL.md and hidden ones) is
//     a subsection of its skill, summarized as its path, size and first
//     line, opened on its own to show its content. A skill's section is folded
//     ([section.Spec] LazyChildren): its files are listed when it opens, or
//     when a key below it does, so the catalog names none of them.
//
// Nothing in a skill runs when it loads or opens.
//
// # Loading
//
// [Load] reads skills folders on disk ([Discover] finds a project's:
// .claude/skills, .agents/skills and skills), [LoadFolders] any [fs.FS].
// Loading reads each skill's front matter, in parallel, and nothing else:
// the files in its directory are listed
// when first asked for ([Skill.Files]), which is when the skill opens; the
// instructions wait until the skill is opened, a file's first heading or
// line until its summary shows (a file that is not text, by [IsText], is
// shown as a binary file of its size).
//
//	dirs, err := skills.Discover(project)
//	set, err := skills.Load(dirs...)
//	for _, p := range set.Problems() {
//		log.Print(p) // file:line: message (rule)
//	}
//	tmpl, err := prompt.New("agents", "coder", intro, set.Section())
//
// # Limits
//
// What is read is bounded: [MaxFrontMatterBytes] of front matter,
// [MaxSkillBytes] of instructions, [MaxFileBytes] for a file read whole,
// [MaxShownBytes] of a file shown in its section, [MaxFiles] files listed
// per skill out of at most [MaxWalk] directory entries read, and
// [MaxSkills] skills per folder. The format's own limits are
// [MaxNameLength], [MaxDescriptionLength] and [MaxCompatibilityLength]
// characters. The front matter's shape is bounded before it is parsed:
// [MaxNesting] levels of lists and mappings, [MaxKeys] keys in a mapping.
//
// Only regular files are read: a SKILL.md or a skill's file that is a
// named pipe, a socket or a device, at the load or when it is read later,
// is refused with an error that says what it is (wrapping
// [ErrNotRegular]), rather than a read that waits for a writer. Files on
// disk are opened without waiting (on Unix) and looked at once open; a
// folder given to [LoadFolders] has its files looked at before they are
// opened too, since its [fs.FS] may open them waiting.
//
// # Confinement
//
// A skill loaded from disk ([Load]) is read through an [os.Root] on its
// directory: a file, or a folder at its top, that is a symbolic link
// leading out of the directory is not listed, its section names it as
// left out ([Skill.LinksOutside]), and reading a listed file that has
// become such a link fails. A SKILL.md that links out is a problem. Links
// inside the directory are followed. A folder given to [LoadFolders] is
// confined by its own [fs.FS].
//
// # Validation
//
// The front matter is parsed with github.com/goccy/go-yaml and checked
// the way the format's reference validator checks it: the fields are name
// (1 to 64 characters: lowercase letters a to z, digits and hyphens, not
// at either end nor two in a row, the directory's name), description (1 to
// 1,024 characters), and the optional license, compatibility (at most 500
// characters), metadata (strings to strings) and allowed-tools; no other
// field. A skill that breaks a rule is a [Problem] naming its file, line
// and [Rule], and is left out; the others load. [Validate] also reports a
// SKILL.md over [MaxSkillBytes] and links leading out of a skill's
// directory. `unfold skills validate DIR` prints the problems of a folder.
//
// # Budgets
//
// Each skill's section carries a brief of its description (its first
// sentence, cut short), so that under a token budget the budget decides
// how many skills show their description in full, lowest priority and
// last in the list first; the skills section's summary, naming every
// skill, is the smallest it gets.
package skills
