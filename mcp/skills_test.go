package mcp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/mcp"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/skills"
)

// loadSkills loads the skills package's valid test skills as if they were
// at /opt/skills.
func loadSkills(t *testing.T) *skills.Set {
	t.Helper()
	set, err := skills.LoadFolders(skills.Folder{FS: os.DirFS("../skills/testdata/valid"), Dir: "/opt/skills"})
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 3 {
		t.Fatalf("got %d skills, want 3: %v", set.Len(), set.Problems())
	}
	return set
}

func readText(t *testing.T, c *client, uri string) *sdk.ResourceContents {
	t.Helper()
	res, err := c.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: got %d contents, want 1", uri, len(res.Contents))
	}
	return res.Contents[0]
}

// TestSkillsLevels opens each level over MCP, as a client with no skills
// support would: the catalog in the prompt, a skill through open_sections
// (its context file) and as an MCP prompt, its files as sections and as
// resources.
func TestSkillsLevels(t *testing.T) {
	_, c := setup(t, mcp.Options{Skills: loadSkills(t)}, withCounter(t))

	// Level 1: the catalog is in the prompt, and open_sections is offered.
	catalog := readText(t, c, mcp.PromptURI).Text
	for _, w := range []string{"(skills)", "### 1.3. pdf (skills.pdf)\n\nExtracts the text of PDF files"} {
		if !strings.Contains(catalog, w) {
			t.Errorf("prompt: got no %q in:\n%s", w, catalog)
		}
	}
	if strings.Contains(catalog, "Run the extraction script") {
		t.Errorf("prompt: got a skill's instructions before it was opened")
	}
	if tools := listTools(t, c); tools[prompt.OpenSectionsName] == nil {
		t.Errorf("tools: got %v, want open_sections", toolNames(tools))
	}

	// Level 2: open_sections writes the skill to a context file, read as a
	// resource.
	res := call(t, c, prompt.OpenSectionsName, map[string]any{"section_keys": []string{"skills.pdf"}, "reason": "a PDF task"})
	got := strings.Join(texts(res), "\n")
	if res.IsError || !strings.Contains(got, "context/skills.pdf.md") || !strings.Contains(got, "unfold://context/skills.pdf.md") {
		t.Fatalf("open skills.pdf: got %q", got)
	}
	skill := readText(t, c, "unfold://context/skills.pdf.md").Text
	for _, w := range []string{"Skill directory: `/opt/skills/pdf`.", "Run the extraction script", "`scripts/extract.py`, 149 bytes"} {
		if !strings.Contains(skill, w) {
			t.Errorf("context/skills.pdf.md: got no %q in:\n%s", w, skill)
		}
	}
	if strings.Contains(skill, "print(\"extracting\"") {
		t.Errorf("context/skills.pdf.md: got the script's content, want its summary")
	}

	// Level 3: a file opens on its own.
	res = call(t, c, prompt.OpenSectionsName, map[string]any{"section_keys": []string{"skills.pdf.scripts-extract-py"}, "reason": "run it"})
	if res.IsError {
		t.Fatalf("open the script: got %q", texts(res))
	}
	if script := readText(t, c, "unfold://context/skills.pdf.scripts-extract-py.md").Text; !strings.Contains(script, "print(\"extracting\", sys.argv[1])") {
		t.Errorf("the script's context file: got %q, want its content", script)
	}

	// A file of a skill never opened: the catalog named no file of it
	// (they are found when it opens), yet its key opens it.
	if strings.Contains(catalog, "scripts-hello-sh") {
		t.Errorf("prompt: got the files of a skill not opened named in:\n%s", catalog)
	}
	res = call(t, c, prompt.OpenSectionsName, map[string]any{"section_keys": []string{"skills.greet.scripts-hello-sh"}, "reason": "see what it runs"})
	if res.IsError {
		t.Fatalf("open greet's script: got %q", texts(res))
	}
	if script := readText(t, c, "unfold://context/skills.greet.scripts-hello-sh.md").Text; !strings.Contains(script, "Path: `/opt/skills/greet/scripts/hello.sh`.") {
		t.Errorf("greet's script's context file: got %q, want its content", script)
	}
}

// TestSkillPromptsAndResources checks that every skill is an MCP prompt
// named after it and resources: its instructions and each file, text or
// blob.
func TestSkillPromptsAndResources(t *testing.T) {
	_, c := setup(t, mcp.Options{Skills: loadSkills(t)}, withCounter(t))
	list, err := c.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if want := []string{"greet", "minimal", "pdf", "workbench"}; !slices.Equal(names, want) {
		t.Errorf("prompts: got %v, want %v", names, want)
	}
	got, err := c.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "greet"})
	if err != nil {
		t.Fatal(err)
	}
	text := got.Messages[0].Content.(*sdk.TextContent).Text
	for _, w := range []string{"Use the skill greet.", "Skill directory: `/opt/skills/greet`.", "Run `bash scripts/hello.sh NAME`", "- scripts/hello.sh: unfold://skill/greet/scripts/hello.sh"} {
		if !strings.Contains(text, w) {
			t.Errorf("prompt greet: got no %q in:\n%s", w, text)
		}
	}
	if got.Description != "Greets someone by name with the house greeting. Use when asked to greet." {
		t.Errorf("prompt greet: description %q", got.Description)
	}

	resources, err := c.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	uris := map[string]string{}
	for _, r := range resources.Resources {
		uris[r.URI] = r.MIMEType
	}
	for uri, mt := range map[string]string{
		"unfold://skill/pdf":                         "text/markdown",
		"unfold://skill/pdf/scripts/extract.py":      "text/plain",
		"unfold://skill/pdf/references/REFERENCE.md": "text/markdown",
		"unfold://skill/pdf/assets/logo.png":         "image/png",
		"unfold://skill/minimal":                     "text/markdown",
	} {
		if uris[uri] != mt {
			t.Errorf("resource %s: got type %q, want %q", uri, uris[uri], mt)
		}
	}
	if body := readText(t, c, "unfold://skill/pdf"); !strings.HasPrefix(body.Text, "# PDF\n") || strings.Contains(body.Text, "name: pdf") {
		t.Errorf("unfold://skill/pdf: got %q, want the instructions without the front matter", body.Text)
	}
	if script := readText(t, c, "unfold://skill/pdf/scripts/extract.py"); !strings.HasPrefix(script.Text, "#!/usr/bin/env python3") {
		t.Errorf("the script: got %q", script.Text)
	}
	png, err := os.ReadFile("../skills/testdata/valid/pdf/assets/logo.png")
	if err != nil {
		t.Fatal(err)
	}
	if logo := readText(t, c, "unfold://skill/pdf/assets/logo.png"); string(logo.Blob) != string(png) || logo.Text != "" {
		t.Errorf("the logo: got blob %q, text %q, want the file's bytes as a blob", logo.Blob, logo.Text)
	}
	if _, err := c.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "unfold://skill/pdf/../../etc/passwd"}); err == nil {
		t.Errorf("a path out of the skill: got no error")
	}
}

// TestSkillsWithPrompt puts the skills after a prompt's sections.
func TestSkillsWithPrompt(t *testing.T) {
	tmpl := prompt.MustNew("test", "assistant", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Help."}))
	_, c := setup(t, mcp.Options{Prompt: tmpl, Skills: loadSkills(t)}, withCounter(t))
	text := readText(t, c, mcp.PromptURI).Text
	if !strings.HasPrefix(text, "## 1. Task (task)") || !strings.Contains(text, "## 2. Skills (skills)") {
		t.Errorf("prompt: got %q, want the task, then the skills", text)
	}
	got, err := c.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "assistant"})
	if err != nil || !strings.Contains(got.Messages[0].Content.(*sdk.TextContent).Text, "### 2.3. pdf (skills.pdf)") {
		t.Errorf("the prompt's own MCP prompt: got %v, %v, want the skills in it", got, err)
	}
}

// TestSkillLinksOutside serves a skill on disk whose references/ holds a
// link to a file outside it and a listed file that becomes such a link:
// neither is served, and the skill's prompt names neither.
func TestSkillLinksOutside(t *testing.T) {
	base := t.TempDir()
	refs := filepath.Join(base, "skills", "demo", "references")
	if err := os.MkdirAll(refs, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(base, "secret.txt")
	for name, data := range map[string]string{
		filepath.Join(base, "skills", "demo", skills.FileName): "---\nname: demo\ndescription: A demo.\n---\nRead references/.\n",
		filepath.Join(refs, "real.md"):                         "# Real\n",
		secret:                                                 "TOP SECRET\n",
	} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(refs, "notes.md")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	set, err := skills.Load(filepath.Join(base, "skills"))
	if err != nil {
		t.Fatal(err)
	}
	_, c := setup(t, mcp.Options{Skills: set}, withCounter(t))

	resources, err := c.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range resources.Resources {
		if strings.HasPrefix(r.URI, mcp.SkillURIPrefix) {
			uris = append(uris, r.URI)
		}
	}
	if want := []string{"unfold://skill/demo", "unfold://skill/demo/references/real.md"}; !slices.Equal(uris, want) {
		t.Errorf("resources: got %v, want %v", uris, want)
	}
	if _, err := c.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "unfold://skill/demo/references/notes.md"}); err == nil {
		t.Errorf("the link leading out: got no error")
	}
	got, err := c.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	if text := got.Messages[0].Content.(*sdk.TextContent).Text; strings.Contains(text, "unfold://skill/demo/references/notes.md") || !strings.Contains(text, "outside the skill's directory") {
		t.Errorf("prompt demo: got %q, want the link left out, and said so", text)
	}

	// A listed file replaced by a link leading out is not read.
	real := filepath.Join(refs, "real.md")
	if err := os.Remove(real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, real); err != nil {
		t.Fatal(err)
	}
	res, err := c.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "unfold://skill/demo/references/real.md"})
	if err == nil {
		t.Errorf("a listed file now a link leading out: got %v, want an error", res.Contents[0].Text)
	} else if !strings.Contains(err.Error(), "outside the skill's directory") {
		t.Errorf("a listed file now a link leading out: got %v, want an error saying it leads outside", err)
	}
}

// TestSkillFileNamesEscaped serves a skill whose file names are not valid
// in a URI as they are (a '%', a space, a '#', a '?'): the server starts,
// each file's address is percent-encoded, the skill's prompt names those
// addresses, and each reads back its file.
func TestSkillFileNamesEscaped(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"SKILL.md":                           "---\nname: odd\ndescription: Files with odd names.\n---\n\nRun the scripts.\n",
		"scripts/100%done.py":                "print(100)\n",
		"scripts/a b#c?d.sh":                 "echo odd\n",
		"references/%zz/notes.md":            "# Notes\n",
		"scripts/plain_name.py":              "print(1)\n",
		"scripts/a\n## 9. Forged\x1b[31m.py": "print(9)\n",
	}
	writeFiles(t, filepath.Join(dir, "odd"), files)
	set, err := skills.LoadFolders(skills.Folder{FS: os.DirFS(dir), Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 1 {
		t.Fatalf("got %d skills, want 1: %v", set.Len(), set.Problems())
	}
	_, c := setup(t, mcp.Options{Skills: set}, withCounter(t))
	got, err := c.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "odd"})
	if err != nil {
		t.Fatal(err)
	}
	text := got.Messages[0].Content.(*sdk.TextContent).Text
	for name, uri := range map[string]string{
		"scripts/100%done.py":     "unfold://skill/odd/scripts/100%25done.py",
		"scripts/a b#c?d.sh":      "unfold://skill/odd/scripts/a%20b%23c%3Fd.sh",
		"references/%zz/notes.md": "unfold://skill/odd/references/%25zz/notes.md",
		"scripts/plain_name.py":   "unfold://skill/odd/scripts/plain_name.py",
	} {
		if w := "- " + name + ": " + uri; !strings.Contains(text, w) {
			t.Errorf("prompt odd: got no %q in:\n%s", w, text)
		}
		if body := readText(t, c, uri); body.Text != files[name] {
			t.Errorf("read %s: got %q, want %q", uri, body.Text, files[name])
		}
	}
	// A name holding a newline and a terminal escape is listed on one
	// line, escaped, and its address reads it.
	uri := "unfold://skill/odd/scripts/a%0A%23%23%209.%20Forged%1B%5B31m.py"
	if w := `- scripts/a\n## 9. Forged\x1b[31m.py: ` + uri + "\n"; !strings.Contains(text, w) {
		t.Errorf("prompt odd: got no %q in:\n%s", w, text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "## 9.") || strings.ContainsRune(line, '\x1b') {
			t.Errorf("prompt odd: a line comes from a file's name: %q", line)
		}
	}
	if body := readText(t, c, uri); body.Text != "print(9)\n" {
		t.Errorf("read %s: got %q", uri, body.Text)
	}
	res, err := c.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Resources {
		if strings.ContainsAny(r.Title+r.Name, "\n\x1b") {
			t.Errorf("resource %s: title %q, name %q hold characters that do not print", r.URI, r.Title, r.Name)
		}
	}
}

// TestSkillFilesAnywhere serves a skill whose instructions point to files
// outside scripts/, references/ and assets/, and whose text files have
// types of application/*: every file is a resource, named in the skill's
// prompt, and text is served as text whatever its type, binary content as
// a blob whatever its extension.
func TestSkillFilesAnywhere(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"SKILL.md":              "---\nname: forms\ndescription: Fills forms.\n---\n\nRead forms.md and follow its instructions.\n",
		"forms.md":              "# Filling forms\n",
		"reference/api.md":      "# API\n",
		"schemas/form.xsd":      `<?xml version="1.0"?><xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"/>` + "\n",
		"data/fields.json":      `{"fields": ["name", "date"]}` + "\n",
		"assets/icon.svg":       `<svg xmlns="http://www.w3.org/2000/svg"/>` + "\n",
		"assets/latin1.json":    "{\"caf\xe9\": 1}\n",
		"examples/nul.txt":      "a\x00b\n",
		".secrets/token":        "hidden\n",
		"examples/.env":         "TOKEN=hidden\n",
		"examples/run/first.py": "print('first')\n",
	}
	writeFiles(t, filepath.Join(dir, "forms"), files)
	set, err := skills.Load(dir)
	if err != nil || set.Len() != 1 {
		t.Fatalf("got %v, %v, want the skill", set, err)
	}
	_, c := setup(t, mcp.Options{Skills: set}, withCounter(t))

	got, err := c.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "forms"})
	if err != nil {
		t.Fatal(err)
	}
	text := got.Messages[0].Content.(*sdk.TextContent).Text
	for _, w := range []string{"- forms.md: unfold://skill/forms/forms.md", "- reference/api.md: unfold://skill/forms/reference/api.md", "- examples/run/first.py: unfold://skill/forms/examples/run/first.py"} {
		if !strings.Contains(text, w) {
			t.Errorf("prompt forms: got no %q in:\n%s", w, text)
		}
	}
	if strings.Contains(text, "secrets") || strings.Contains(text, ".env") {
		t.Errorf("prompt forms: names a hidden file:\n%s", text)
	}

	for _, name := range []string{"forms.md", "reference/api.md", "schemas/form.xsd", "data/fields.json", "assets/icon.svg", "examples/run/first.py"} {
		body := readText(t, c, "unfold://skill/forms/"+name)
		if body.Text != files[name] || body.Blob != nil {
			t.Errorf("read %s: got text %q, blob %q (type %s), want its text", name, body.Text, body.Blob, body.MIMEType)
		}
	}
	if body := readText(t, c, "unfold://skill/forms/data/fields.json"); body.MIMEType != "application/json" {
		t.Errorf("read data/fields.json: got type %q, want application/json", body.MIMEType)
	}
	for name, mt := range map[string]string{"assets/latin1.json": "application/json", "examples/nul.txt": "application/octet-stream"} {
		body := readText(t, c, "unfold://skill/forms/"+name)
		if string(body.Blob) != files[name] || body.Text != "" || body.MIMEType != mt {
			t.Errorf("read %s: got text %q, blob %q (type %s), want its bytes as a blob of type %s", name, body.Text, body.Blob, body.MIMEType, mt)
		}
	}
	for _, name := range []string{".secrets/token", "examples/.env", skills.FileName} {
		if _, err := c.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "unfold://skill/forms/" + name}); err == nil {
			t.Errorf("read %s: got no error, want it not served", name)
		}
	}
}

// TestSkillFilesPastTheCap serves a skill with more files than
// skills.MaxFiles, most in node_modules, and instructions that point to
// reference/guide.md: the guide is listed (dependency folders come
// last), the prompt counts the rest and says how to read them, any file
// past the list reads through the skill-file template, and the skill's
// section says to do what this session can (no shell here: read them as
// resources).
func TestSkillFilesPastTheCap(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"many/SKILL.md":           "---\nname: many\ndescription: Many files.\n---\n\nRead reference/guide.md.\n",
		"many/reference/guide.md": "# Guide\n",
	}
	for i := range skills.MaxFiles + 3 {
		files[fmt.Sprintf("many/node_modules/p%03d.js", i)] = "n\n"
	}
	writeFiles(t, dir, files)
	set, err := skills.Load(dir)
	if err != nil || set.Len() != 1 {
		t.Fatalf("got %v, %v, want the skill", set, err)
	}
	_, c := setup(t, mcp.Options{Skills: set}, withCounter(t))
	got, err := c.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "many"})
	if err != nil {
		t.Fatal(err)
	}
	text := got.Messages[0].Content.(*sdk.TextContent).Text
	last := fmt.Sprintf("- node_modules/p%03d.js: ", skills.MaxFiles-2)
	more := fmt.Sprintf("- and 4 more, past the first %d: not listed; read any of them as unfold://skill/many/<path>.", skills.MaxFiles)
	if !strings.Contains(text, "- reference/guide.md: unfold://skill/many/reference/guide.md") || !strings.Contains(text, last) || !strings.HasSuffix(text, more) {
		t.Errorf("prompt many: got %q ... %q, want the guide, the first files and then %q", text[:min(len(text), 300)], text[max(0, len(text)-300):], more)
	}
	for _, name := range []string{"reference/guide.md", fmt.Sprintf("node_modules/p%03d.js", skills.MaxFiles+2)} {
		if body := readText(t, c, "unfold://skill/many/"+name); body.Text != files["many/"+name] {
			t.Errorf("read %s: got %q, want the file", name, body.Text)
		}
	}
	for _, name := range []string{"../many/SKILL.md", "node_modules/%2E%2E/SKILL.md", "reference/%2Fguide.md", "nothere.md", "SKILL.md"} {
		if _, err := c.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "unfold://skill/many/" + name}); err == nil {
			t.Errorf("read %s: got no error, want it not found", name)
		}
	}
	call(t, c, prompt.OpenSectionsName, map[string]any{"section_keys": []string{"skills.many"}, "reason": "a task"})
	skill := readText(t, c, "unfold://context/skills.many.md").Text
	want := fmt.Sprintf("- Files: 4 more than the %d listed below; to see them, read any of them as the resource unfold://skill/many/<path>, the path relative to the skill's directory.", skills.MaxFiles)
	if !strings.Contains(skill, want) || strings.Contains(skill, "list the skill's directory") {
		t.Errorf("context/skills.many.md: got no %q in:\n%s", want, skill)
	}
}

// writeFiles writes files, slash-separated paths under dir, making their
// folders.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
