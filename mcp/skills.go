package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/internal/printable"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/skills"
)

// SkillURIPrefix is followed by a skill's name (its instructions) or by
// its name, a slash and a file's path (the file): unfold://skill/pdf,
// unfold://skill/pdf/scripts/extract.py. Each segment of the path is
// percent-encoded (url.PathEscape): scripts/100%25done.py.
const SkillURIPrefix = "unfold://skill/"

// SkillFileURITemplate reads any file of a skill, listed or past the
// skills.MaxFiles listed: unfold://skill/pdf/reference/forms.md.
const SkillFileURITemplate = SkillURIPrefix + "{skill}/{+path}"

// skillsPrompt returns the template to serve: opts.Prompt with the skills
// section after its sections, or the skills section alone when there is
// no prompt; opts.Prompt when there is no skill. A skill's section says
// to reach the files past those listed as this session can: as
// resources, and by listing the skill's directory with the shell when
// the session offers one.
func (s *conn) skillsPrompt(opts Options) (*prompt.Template, error) {
	if opts.Skills == nil || opts.Skills.Len() == 0 {
		return opts.Prompt, nil
	}
	hasShell := slices.Contains(s.names, shellName)
	sec := opts.Skills.Section(skills.ReadMore(func(name string) string {
		how := "read any of them as the resource " + SkillURIPrefix + url.PathEscape(name) + "/<path>, the path relative to the skill's directory"
		if hasShell {
			how = "list the skill's directory, and " + how
		}
		return how
	}))
	if opts.Prompt != nil {
		return opts.Prompt.With(sec)
	}
	return prompt.New("unfold/mcp", "workbench", sec)
}

// skillsInstructions tells clients how skills are offered.
func skillsInstructions(set *skills.Set) string {
	if set == nil || set.Len() == 0 {
		return ""
	}
	return " Skills (the prompt's skills section) open with " + prompt.OpenSectionsName + "; each is also an MCP prompt named after it and the resource " +
		SkillURIPrefix + "<name>, and each of its files the resource " + SkillURIPrefix + "<name>/<path>."
}

// addSkills offers every skill as an MCP prompt, named after it, that
// gives its instructions, and as resources: its instructions and each of
// its files. A skill named like the server's own prompt is not offered as
// a prompt (its resources and section still are).
func (s *conn) addSkills(set *skills.Set) {
	if set == nil {
		return
	}
	for _, k := range set.Skills() {
		if s.tmpl != nil && s.tmpl.Key() == k.Name {
			s.log.Warn("mcp: a skill has the name of the server's prompt; it is not offered as a prompt", "skill", k.Name)
		} else {
			err := s.addPrompt(&sdk.Prompt{Name: k.Name, Title: "Skill: " + k.Name, Description: k.Description},
				func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
					return &sdk.GetPromptResult{
						Description: k.Description,
						Messages:    []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: skillPromptText(k)}}},
					}, nil
				})
			if err != nil {
				s.log.Warn("mcp: a skill is not offered as a prompt", "skill", k.Name, "err", err)
			}
		}
		uri := skillURI(k.Name)
		err := s.addResource(&sdk.Resource{
			URI: uri, Name: "skill-" + k.Name, Title: "Skill: " + k.Name,
			Description: k.Description, MIMEType: "text/markdown",
		}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			text, err := k.Instructions()
			if err != nil {
				return nil, err
			}
			return textResource(uri, "text/markdown", text), nil
		})
		if err != nil {
			s.log.Warn("mcp: a skill's instructions are not offered as a resource", "skill", k.Name, "err", err)
		}
		for _, p := range k.Files() {
			fileURI := skillURI(k.Name, p)
			err := s.addResource(&sdk.Resource{
				URI: fileURI, Name: "skill-" + k.Name + "-" + printable.String(p), Title: k.Name + ": " + printable.String(p),
				Description: "A file of the skill " + k.Name + ".", MIMEType: mimeType(p, nil),
			}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return readSkillFile(k, p, fileURI)
			})
			if err != nil {
				s.log.Warn("mcp: a skill's file is not offered as a resource", "skill", k.Name, "file", p, "err", err)
			}
		}
	}
	if set.Len() > 0 {
		s.srv.AddResourceTemplate(&sdk.ResourceTemplate{
			URITemplate: SkillFileURITemplate,
			Name:        "skill-file",
			Title:       "Skill file",
			Description: "Any file of a skill, by its path in the skill's directory (each segment percent-encoded), listed or not: hidden files are not read.",
		}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			uri := req.Params.URI
			name, p, ok := parseSkillURI(uri)
			k, found := set.Skill(name)
			if !ok || !found {
				return nil, sdk.ResourceNotFoundError(uri)
			}
			return readSkillFile(k, p, uri)
		})
	}
}

// parseSkillURI returns the skill's name and the file's path that uri,
// an address skillURI makes for a file, names.
func parseSkillURI(uri string) (name, p string, ok bool) {
	rest, ok := strings.CutPrefix(uri, SkillURIPrefix)
	if !ok {
		return "", "", false
	}
	segs := strings.Split(rest, "/")
	if len(segs) < 2 {
		return "", "", false
	}
	for i, seg := range segs {
		var err error
		if segs[i], err = url.PathUnescape(seg); err != nil || segs[i] == "" || strings.Contains(segs[i], "/") {
			return "", "", false
		}
	}
	return segs[0], strings.Join(segs[1:], "/"), true
}

// readSkillFile reads the file of k at p (see skills.Skill.ReadFile) as
// the resource uri: text of any type (JSON, XML, a schema) as text, the
// rest as a blob. A file that is not the skill's is not found.
func readSkillFile(k *skills.Skill, p, uri string) (*sdk.ReadResourceResult, error) {
	data, err := k.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	mt := mimeType(p, data)
	if !skills.IsText(data) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mt, Blob: data}}}, nil
	}
	return textResource(uri, mt, string(data)), nil
}

// skillURI is the address of a skill's instructions, or with a file's
// path, of that file: each segment percent-encoded, so that any file name
// (100%done.py) makes a valid address.
func skillURI(name string, file ...string) string {
	uri := SkillURIPrefix + url.PathEscape(name)
	for _, p := range file {
		uri += "/" + escapePath(p)
	}
	return uri
}

// skillPromptText is what a skill's MCP prompt says: the skill opened, and
// where its files are: every file of its directory, up to skills.MaxFiles,
// and how many more there are.
func skillPromptText(k *skills.Skill) string {
	var b strings.Builder
	b.WriteString("Use the skill " + k.Name + ". Its instructions follow (whole, past " + strconv.Itoa(skills.MaxShownBytes>>10) + " KiB, as the resource " + skillURI(k.Name) + ").\n\n")
	b.WriteString(k.Text())
	if files := k.Files(); len(files) > 0 {
		b.WriteString("\n\nIts files, to read as resources when the instructions point to them:\n")
		for _, p := range files {
			b.WriteString("- " + printable.String(p) + ": " + skillURI(k.Name, p) + "\n") // a name may hold a newline
		}
		if n := k.Omitted(); k.Uncounted() {
			fmt.Fprintf(&b, "- and %d or more, past the first %d (listing stopped after %d directory entries): not listed; read any of them as %s/<path>.\n", n, skills.MaxFiles, skills.MaxWalk, skillURI(k.Name))
		} else if n > 0 {
			fmt.Fprintf(&b, "- and %d more, past the first %d: not listed; read any of them as %s/<path>.\n", n, skills.MaxFiles, skillURI(k.Name))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// mimeType is a skill file's type, from its extension and, when data is
// given, its content: text/plain for text of no known type,
// application/octet-stream for anything else that is not text. Whether
// the file is served as text is decided by its content alone ([isText]):
// application/json, application/xml and the like are text too.
func mimeType(p string, data []byte) string {
	mt := mime.TypeByExtension(path.Ext(p))
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown":
		mt = "text/markdown"
	case ".py", ".sh", ".bash", ".txt", ".yaml", ".yml", ".toml", ".ts", ".go", ".rb":
		mt = "text/plain"
	}
	text := data == nil || skills.IsText(data)
	switch {
	case mt == "" && text:
		return "text/plain"
	case mt == "" || (strings.HasPrefix(mt, "text/") && !text):
		return "application/octet-stream"
	}
	return mt
}
