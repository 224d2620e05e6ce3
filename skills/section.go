package skills

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/unfold-dev/unfold/internal/markdown"
	"github.com/unfold-dev/unfold/internal/printable"
	"github.com/unfold-dev/unfold/internal/utf8cut"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/visibility"
)

// SectionKey is the key of the skills section unless [Key] says otherwise.
const SectionKey = "skills"

// MaxShownBytes bounds the content a file's section shows, and the
// instructions a skill's section shows; past it, the section says where
// the whole file is.
const MaxShownBytes = 64 << 10

// briefLength is the most a skill's brief holds, in characters.
const briefLength = 80

// intro is the body of the skills section: how skills are used here.
const intro = `Skills are folders of instructions, scripts and resources for particular
tasks. When a task matches a skill's description, open the skill to read its
instructions before you start; open its files (under scripts/, references/,
assets/ or anywhere in its folder) as the instructions point to them. A
skill's instructions name its directory: paths in them are relative to it,
and its scripts run from there with the bash or python environment.`

// SectionOption configures [Set.Section].
type SectionOption func(*sectionConfig)

type sectionConfig struct {
	key, title string
	priority   int
	// readMore says how to reach a skill's files past those listed.
	readMore func(skill string) string
}

// Key sets the skills section's key (default [SectionKey]).
func Key(key string) SectionOption { return func(c *sectionConfig) { c.key = key } }

// Title sets the skills section's title (default "Skills").
func Title(title string) SectionOption { return func(c *sectionConfig) { c.title = title } }

// Priority sets the budget priority of the skills section and of every
// skill in it: under a token budget, sections are given back in full
// highest priority first, each one that fits in the room left (see
// prompt.WithBudget).
func Priority(p int) SectionOption { return func(c *sectionConfig) { c.priority = p } }

// ReadMore sets what a skill's section says to do to reach its files past
// the [MaxFiles] listed, given the skill's name: words that follow "to
// see them, " ("read any as the resource ..."). The default, "list the
// skill's directory", suits a session with a shell; one without says
// what it offers.
func ReadMore(read func(skill string) string) SectionOption {
	return func(c *sectionConfig) { c.readMore = read }
}

// Section returns the skills section, to place in a prompt: an
// introduction to skills, and the skills as its subsections, each showing
// its name and description (see [Skill.Section]). Its summary names the
// skills. It returns nil when the set has no skill: a prompt then says
// nothing about skills.
//
// Under a token budget, the budget decides how many skills show their
// description in full: the others show a brief of it (its first words),
// and when even that does not fit, the section shows its summary.
func (s *Set) Section(opts ...SectionOption) *section.Section {
	if len(s.skills) == 0 {
		return nil
	}
	c := sectionConfig{key: SectionKey, title: "Skills"}
	for _, o := range opts {
		o(&c)
	}
	children := make([]*section.Section, len(s.skills))
	names := make([]string, len(s.skills))
	for i, k := range s.skills {
		children[i] = k.section(c.priority, c.readMore)
		names[i] = k.Name
	}
	noun := "skills"
	if len(names) == 1 {
		noun = "skill"
	}
	return section.New(section.Spec[section.None]{
		Key:      c.key,
		Title:    c.title,
		Body:     intro,
		Summary:  fmt.Sprintf("%d %s for particular tasks: %s.", len(names), noun, strings.Join(names, ", ")),
		Children: children,
		Priority: c.priority,
	})
}

// Section returns the skill's section. Its key and title are the skill's
// name; it shows its description (its summary) until it is opened, and
// then its instructions, read from SKILL.md at every render, under a line
// naming the skill's directory. The section is folded
// ([section.Spec] LazyChildren): when it opens, or a key below it does,
// its files are listed ([Skill.Files]), each a subsection that shows its
// path, size and first line until it is opened on its own, and then its
// content. Nothing in the skill runs.
func (k *Skill) Section() *section.Section { return k.section(0, nil) }

// section is the skill's section; readMore is as [ReadMore] sets it.
func (k *Skill) section(priority int, readMore func(skill string) string) *section.Section {
	return section.New(section.Spec[section.None]{
		Key:          k.Name,
		Title:        k.Name,
		Content:      func(section.None) (string, error) { return k.text(readMore), nil },
		Summary:      section.Literal(k.Description), // text, not a template
		Brief:        section.Literal(brief(k.Description)),
		Visibility:   visibility.Const(visibility.Summary),
		Separate:     true,
		LazyChildren: func() []*section.Section { return k.fileSections(priority) },
		Priority:     priority,
	})
}

// fileSections returns a section for each of the skill's files, listing
// them now if they are not yet.
func (k *Skill) fileSections(priority int) []*section.Section {
	files := k.Files()
	secs := make([]*section.Section, len(files))
	keys := map[string]bool{}
	for i, p := range files {
		secs[i] = section.New(section.Spec[section.None]{
			Key:         fileKey(p, keys),
			Title:       printable.String(p), // a file's name may hold a newline
			Content:     func(section.None) (string, error) { return k.fileContent(p), nil },
			LazySummary: func() string { return k.fileSummary(p) },
			Visibility:  visibility.Const(visibility.Summary),
			Separate:    true,
			Priority:    priority,
		})
	}
	return secs
}

// Text is the skill as its section shows it opened: the line naming its
// directory, the optional fields that matter when using it, and its
// instructions, read now: past [MaxShownBytes] they are cut at a line, and
// a last line says where to read the rest. A SKILL.md that cannot be read
// any more says so instead, so that a prompt holding the skill still
// renders.
func (k *Skill) Text() string { return k.text(nil) }

// text is [Skill.Text], saying to reach the files past those listed as
// readMore says (nil: list the skill's directory).
func (k *Skill) text(readMore func(skill string) string) string {
	more := "list the skill's directory"
	if readMore != nil {
		more = readMore(k.Name)
	}
	var blocks []string
	if k.Dir != "" {
		blocks = append(blocks, fmt.Sprintf("Skill directory: `%s`. Paths in these instructions are relative to it: run the skill's scripts from there.", printable.String(k.Dir)))
	}
	var facts []string
	if k.Compatibility != "" {
		facts = append(facts, "- Compatibility: "+printable.String(k.Compatibility))
	}
	if len(k.AllowedTools) > 0 {
		facts = append(facts, "- Allowed tools: "+printable.String(strings.Join(k.AllowedTools, " ")))
	}
	if k.License != "" {
		facts = append(facts, "- License: "+printable.String(k.License))
	}
	if n := k.Omitted(); k.Uncounted() {
		facts = append(facts, fmt.Sprintf("- Files: %d or more besides the %d listed below (listing stopped after %d directory entries); to see them, %s.", n, MaxFiles, MaxWalk, more))
	} else if n > 0 {
		facts = append(facts, fmt.Sprintf("- Files: %d more than the %d listed below; to see them, %s.", n, MaxFiles, more))
	}
	if out := k.LinksOutside(); len(out) > 0 {
		facts = append(facts, fmt.Sprintf("- Left out: `%s`: symbolic links leading outside the skill's directory, which are not read.", printable.String(strings.Join(out, "`, `"))))
	}
	if len(facts) > 0 {
		blocks = append(blocks, strings.Join(facts, "\n"))
	}
	text, err := k.Instructions()
	if err != nil {
		text = fmt.Sprintf("The instructions could not be read: %s.", printable.String(err.Error()))
	}
	text, long := cutText(text, MaxShownBytes)
	if text != "" {
		blocks = append(blocks, closeFences(text))
	}
	if long {
		where := "the skill's " + FileName
		if k.Dir != "" {
			where = "`" + printable.String(filepath.Join(k.Dir, FileName)) + "`"
		}
		blocks = append(blocks, fmt.Sprintf("[The instructions go on past %s: read the rest from %s.]", size(MaxShownBytes), where))
	}
	return strings.Join(blocks, "\n\n")
}

// cutText returns text cut to at most limit bytes, at the end of a line
// when one ends in them (never inside a character), and whether it was
// cut.
func cutText(text string, limit int) (string, bool) {
	if len(text) <= limit {
		return text, false
	}
	head := utf8cut.Prefix(text, limit)
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i]
	}
	return strings.TrimRight(head, " \t\r\n"), true
}

// fileContent is a file's section in full: its path and its content (a
// markdown file as it is, but for its YAML front matter, in a yaml code
// block; other text in a code block), or what it is when
// it is binary or cannot be read.
func (k *Skill) fileContent(p string) string {
	where := "`" + printable.String(path.Join(k.Dir, p)) + "`"
	data, n, err := k.readHead(p, MaxShownBytes)
	if err != nil {
		return fmt.Sprintf("Path: %s. The file could not be read: %s.", where, printable.String(err.Error()))
	}
	more := n > int64(len(data))
	if isBinary(data, more) {
		return fmt.Sprintf("Path: %s. A binary file of %s: use it from its path.", where, size(n))
	}
	if more {
		// Cut at a line, never inside a character.
		if i := bytes.LastIndexByte(data, '\n'); i > 0 {
			data = data[:i]
		}
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	var b strings.Builder
	fmt.Fprintf(&b, "Path: %s.\n\n", where)
	if isMarkdown(p) {
		if fm, body, ok := leadingFrontMatter(text); ok {
			// Shown as written: re-leveled, its closing line would make its
			// last field a heading.
			fence := strings.Repeat("`", max(3, longestRun(fm, '`')+1))
			b.WriteString(fence + "yaml\n" + fm + "\n" + fence)
			if body = strings.TrimSpace(body); body != "" {
				b.WriteString("\n\n" + closeFences(body))
			}
		} else {
			b.WriteString(closeFences(strings.TrimSpace(text)))
		}
	} else {
		fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
		b.WriteString(fence + language(p) + "\n" + strings.TrimRight(text, "\n") + "\n" + fence)
	}
	if more {
		fmt.Fprintf(&b, "\n\n[The file goes on past %s: read the rest from %s.]", size(MaxShownBytes), where)
	}
	return b.String()
}

// leadingFrontMatter splits a markdown file's YAML front matter, from its
// opening line "---" to its closing one, both kept, from the rest; ok is
// false when the file does not start with a closed front matter.
func leadingFrontMatter(text string) (fm, body string, ok bool) {
	text = strings.TrimPrefix(text, "\uFEFF")
	first, rest, found := strings.Cut(text, "\n")
	if !found || strings.TrimRight(first, " \t\r") != delimiter {
		return "", "", false
	}
	for at := len(first) + 1; rest != ""; {
		line, next, _ := strings.Cut(rest, "\n")
		if strings.TrimRight(line, " \t\r") == delimiter {
			return strings.TrimRight(text[:at+len(line)], "\r"), next, true
		}
		at += len(line) + 1
		rest = next
	}
	return "", "", false
}

// fileSummary is a file's section as summarized: its path, size and first
// heading or line.
func (k *Skill) fileSummary(p string) string {
	s := "`" + printable.String(p) + "`"
	f, err := k.Inspect(p)
	switch {
	case err != nil:
		return s + ": cannot be read now"
	case f.Binary:
		return s + ", " + size(f.Size) + ", binary"
	case f.First != "":
		return s + ", " + size(f.Size) + ": " + f.First
	}
	return s + ", " + size(f.Size)
}

// brief is a description's first sentence, cut to briefLength characters;
// empty when that is the whole description.
func brief(desc string) string {
	first := desc
	for i := 0; i+1 < len(first); i++ {
		if (first[i] == '.' || first[i] == '!' || first[i] == '?') && (first[i+1] == ' ' || first[i+1] == '\n') {
			first = first[:i+1]
			break
		}
	}
	first = cut(strings.Join(strings.Fields(first), " "), briefLength)
	if first == strings.Join(strings.Fields(desc), " ") {
		return ""
	}
	if !strings.HasSuffix(first, "…") {
		first += " …"
	}
	return first
}

// fileKey turns a file's path into a section key unique among its
// siblings: lowercase, with every character a key cannot hold made a
// hyphen ("scripts/fill_form.py" is "scripts-fill_form-py"); a long path
// keeps its start and a hash of the whole.
func fileKey(p string, taken map[string]bool) string {
	var b strings.Builder
	for _, r := range strings.ToLower(p) {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	key := b.String()
	if len(key) > 64 {
		h := fnv.New32a()
		h.Write([]byte(p))
		key = fmt.Sprintf("%s-%08x", key[:55], h.Sum32())
	}
	base := key
	for n := 2; taken[key]; n++ {
		suffix := "-" + strconv.Itoa(n)
		key = base[:min(len(base), 64-len(suffix))] + suffix
	}
	taken[key] = true
	return key
}

// closeFences dedents text and closes a code fence it leaves open, which
// would swallow the rest of the prompt.
func closeFences(text string) string {
	return markdown.CloseFence(markdown.Dedent(text))
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	most, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			most = max(most, run)
		} else {
			run = 0
		}
	}
	return most
}

func isMarkdown(p string) bool {
	ext := strings.ToLower(path.Ext(p))
	return ext == ".md" || ext == ".markdown"
}

// language names a file's language for its code block, from its
// extension; empty when unknown.
func language(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".py":
		return "python"
	case ".sh", ".bash":
		return "bash"
	case ".js", ".mjs", ".cjs":
		return "javascript"
	case ".ts":
		return "typescript"
	case ".go":
		return "go"
	case ".rb":
		return "ruby"
	case ".json":
		return "json"
	case ".yaml", ".yml":
		return "yaml"
	case ".toml":
		return "toml"
	case ".html", ".htm":
		return "html"
	case ".css":
		return "css"
	case ".sql":
		return "sql"
	case ".xml":
		return "xml"
	case ".csv":
		return "csv"
	}
	return ""
}

// size writes a byte count for people: "812 bytes", "2.1 KB", "3.4 MB".
func size(n int64) string {
	switch {
	case n < 1000:
		unit := "bytes"
		if n == 1 {
			unit = "byte"
		}
		return strconv.FormatInt(n, 10) + " " + unit
	case n < 1000*1000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + " KB"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
}
