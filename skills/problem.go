package skills

import (
	"fmt"
	"strconv"

	"github.com/unfold-dev/unfold/internal/printable"
)

// Rule names a rule of the Agent Skills format that a skill can break. A
// [Problem] carries one, so that tools can count and filter by rule.
type Rule string

// The rules. Every rule but [RuleUnique] is about one skill alone; the
// reference validator checks the same ones, but for [RuleLinks],
// [RuleSkillSize], [RuleDescriptionCharacters] and
// [RuleInstructionsSize], which are this package's own.
const (
	// RuleSkillFile: a skill directory holds a file named exactly SKILL.md
	// that can be read.
	RuleSkillFile Rule = "skill-file"
	// RuleFrontMatter: SKILL.md starts with a line "---", a YAML mapping
	// follows, and a line "---" closes it within MaxFrontMatterBytes; its
	// lists and mappings nest at most MaxNesting levels deep, and a
	// mapping has at most MaxKeys keys. Its lines end with LF or CRLF,
	// it holds no document end ("...") with fields after it, and no
	// explicit key ("? name").
	RuleFrontMatter Rule = "front-matter"
	// RuleYAML: the front matter is valid YAML, with no key given twice.
	RuleYAML Rule = "yaml"
	// RuleKnownFields: the front matter has only the fields the format
	// defines: name, description, license, compatibility, metadata and
	// allowed-tools.
	RuleKnownFields Rule = "known-fields"
	// RuleNameRequired: name is given, a non-empty string.
	RuleNameRequired Rule = "name-required"
	// RuleNameLength: name is at most 64 characters.
	RuleNameLength Rule = "name-length"
	// RuleNameCharacters: name holds only lowercase letters a to z, digits
	// and hyphens.
	RuleNameCharacters Rule = "name-characters"
	// RuleNameHyphens: name neither starts nor ends with a hyphen, nor
	// holds two in a row.
	RuleNameHyphens Rule = "name-hyphens"
	// RuleNameDirectory: name is the name of the skill's directory.
	RuleNameDirectory Rule = "name-directory"
	// RuleDescriptionRequired: description is given, a non-empty string
	// with a character that shows (not only white space or zero-width
	// characters).
	RuleDescriptionRequired Rule = "description-required"
	// RuleDescriptionLength: description is at most 1,024 characters.
	RuleDescriptionLength Rule = "description-length"
	// RuleDescriptionCharacters: description holds no control character
	// but newlines and tabs, no line or paragraph separator and no
	// character that reorders the text (U+202E).
	RuleDescriptionCharacters Rule = "description-characters"
	// RuleLicense: license, when given, is a string.
	RuleLicense Rule = "license"
	// RuleCompatibility: compatibility, when given, is a string of 1 to
	// 500 characters.
	RuleCompatibility Rule = "compatibility"
	// RuleMetadata: metadata, when given, maps string keys to string
	// values.
	RuleMetadata Rule = "metadata"
	// RuleAllowedTools: allowed-tools, when given, is a space-separated
	// string (a list of strings is accepted too); a number or a boolean is
	// not a string.
	RuleAllowedTools Rule = "allowed-tools"
	// RuleUnique: no two skills loaded together have the same name; the
	// first one found is kept.
	RuleUnique Rule = "name-unique"
	// RuleFolderSize: a skills folder holds at most MaxSkills directories.
	RuleFolderSize Rule = "folder-size"
	// RuleLinks: no file of a skill, nor a folder at its top, is a
	// symbolic link leading outside the skill's directory (such a link is
	// never read, see [Skill.LinksOutside]) or to nothing.
	// [Validate] checks it; [Load] leaves the link out and keeps the skill.
	RuleLinks Rule = "links-inside"
	// RuleSkillSize: SKILL.md is at most MaxSkillBytes, so that its
	// instructions can be read. [Validate] checks it; [Load] reads only
	// the front matter, and the skill's section says when its
	// instructions cannot be read.
	RuleSkillSize Rule = "skill-size"
	// RuleInstructionsSize: the instructions are under the size the
	// format recommends, 500 lines and about 5,000 tokens
	// ([MaxInstructionsLines], [MaxInstructionsBytes]). [Validate] reports it
	// as a warning ([Report.Warnings]); past MaxShownBytes a skill's
	// section shows the start of them and says where the rest is.
	RuleInstructionsSize Rule = "instructions-size"
)

// Problem is a rule a skill breaks: the skill is left out, and the others
// load ([RuleLinks] and [RuleSkillSize], which [Validate] alone reports,
// leave nothing out of a load).
type Problem struct {
	// File is the file or directory at fault, as named on disk when the
	// skills folder is (see [Folder]): most often a SKILL.md.
	File string `json:"file"`
	// Line is the 1-based line in File, or 0 when the problem is not on a
	// line (a missing file).
	Line    int    `json:"line,omitempty"`
	Rule    Rule   `json:"rule"`
	Message string `json:"message"`
}

// String is "file:line: message (rule)", as compilers print problems, so
// editors can jump to them. It is one line: characters of the file's name
// or the message that do not print (a newline, a terminal escape) are
// escaped as Go escapes them, since names come from the skills folder.
func (p Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc += ":" + strconv.Itoa(p.Line)
	}
	return printable.String(fmt.Sprintf("%s: %s (%s)", loc, p.Message, p.Rule))
}
