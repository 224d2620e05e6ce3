package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/internal/readfile"
	"github.com/unfold-dev/unfold/prompt"
)

// Resource addresses.
const (
	// ScreenURIPrefix is followed by an environment's name: its screen,
	// read live.
	ScreenURIPrefix = "unfold://screen/"
	// ContextURIPrefix is followed by a context file's name, "<key>.md":
	// what open_sections wrote to context/<key>.md.
	ContextURIPrefix = "unfold://context/"
	// ContextURITemplate reads any context file by name.
	ContextURITemplate = ContextURIPrefix + "{file}"
	// PromptURI is the prompt as rendered now, when the server has one.
	PromptURI = "unfold://prompt"
	// OutputURIPrefix is followed by the name of a file under
	// context/output: the whole of a result or an output that was cut to
	// the output budget, as its note names it.
	OutputURIPrefix = ContextURIPrefix + "output/"
	// OutputURITemplate reads any saved output by name.
	OutputURITemplate = OutputURIPrefix + "{file}"
)

// MaxContextBytes bounds a context file read as a resource.
const MaxContextBytes = 16 << 20

// outputDir is where cut results and outputs are saved, under the
// project: gateway.OutputDir, which is the environments' too.
const outputDir = gateway.OutputDir

// outputFile matches the names saved outputs have: one file of
// context/output, no path.
var outputFile = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`) })

// contextFile matches the names open_sections gives context files: a dotted
// section path and ".md" (keys are lower-case letters, digits, '-' and '_').
var contextFile = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*\.md$`) })

// addResources registers the screens (see syncScreens), the context file
// template and, with a prompt, the prompt as a resource and as an MCP
// prompt.
func (s *conn) addResources() error {
	s.syncScreens()
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: ContextURITemplate,
		Name:        "context-file",
		Title:       "Context file",
		Description: "A section's full content, written by " + prompt.OpenSectionsName + " to " + prompt.ContextDir + "/<key>.md.",
		MIMEType:    "text/markdown",
	}, s.readContext)
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: OutputURITemplate,
		Name:        "saved-output",
		Title:       "Saved output",
		Description: "The whole of a tool's result or a command's output that was cut to the output budget, saved in " + outputDir + "/ under the name its note gives.",
		MIMEType:    "text/plain",
	}, s.readOutput)
	tmpl := s.tmpl
	if tmpl == nil {
		return nil
	}
	s.srv.AddResource(&sdk.Resource{
		URI:         PromptURI,
		Name:        "prompt",
		Title:       tmpl.Namespace() + "/" + tmpl.Key(),
		Description: "The prompt with the environments' screens, as rendered now: summarized sections show how to open them.",
		MIMEType:    "text/markdown",
	}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		text, err := s.promptText()
		if err != nil {
			return nil, err
		}
		return textResource(PromptURI, "text/markdown", text), nil
	})
	s.srv.AddPrompt(&sdk.Prompt{
		Name:        tmpl.Key(),
		Title:       tmpl.Namespace() + "/" + tmpl.Key(),
		Description: "The prompt with the environments' screens, as rendered now.",
	}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return s.getPrompt()
	})
	return nil
}

func textResource(uri, mime, text string) *sdk.ReadResourceResult {
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mime, Text: text}}}
}

// readScreen reads an environment's screen, or the orchestrator's own. It
// is a preview: a client reads a resource when it chooses to, and what it
// does with it the server cannot tell, so an edit stays checked against
// the screen that went back with the editor's own command.
func (s *conn) readScreen(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	text, ok := s.screenText(uri)
	if !ok {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	return textResource(uri, "text/plain", text), nil
}

// readContext reads a context file from the filesystem: a regular file of
// at most MaxContextBytes.
func (s *conn) readContext(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	file, ok := strings.CutPrefix(uri, ContextURIPrefix)
	if !ok || !contextFile().MatchString(file) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	data, err := readfile.ReadFS(s.fs, path.Join(prompt.ContextDir, file), MaxContextBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("mcp: read %s: %w", uri, err)
	}
	return textResource(uri, "text/markdown", string(data)), nil
}

// readOutput reads a saved output: a regular file directly in
// context/output, of at most MaxContextBytes.
func (s *conn) readOutput(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	file, ok := strings.CutPrefix(uri, OutputURIPrefix)
	if !ok || !outputFile().MatchString(file) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	name := path.Join(outputDir, file)
	// Saved outputs are files of their own: a link there (to a file
	// elsewhere in the project) is not one.
	if linked(s.fs, outputDir) || linked(s.fs, name) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	data, err := readfile.ReadFS(s.fs, name, MaxContextBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("mcp: read %s: %w", uri, err)
	}
	return textResource(uri, "text/plain", string(data)), nil
}

// linked reports whether name is a symbolic link in fsys.
func linked(fsys afero.Fs, name string) bool {
	l, ok := fsys.(afero.Lstater)
	if !ok {
		return false
	}
	fi, _, err := l.LstatIfPossible(name)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// withReadSaved makes a call's cut result say how this session reads the
// whole: as a resource, and with the editor and grep when it offers
// them.
func (s *conn) withReadSaved(ctx context.Context) context.Context {
	s.mu.Lock()
	names := slices.Clone(s.names)
	s.mu.Unlock()
	return gateway.WithReadSaved(ctx, gateway.ReadSavedWith(names, true))
}

// addContextResources lists the context files open_sections wrote as
// resources (the SDK notifies clients that the list changed) and returns a
// line naming their addresses, for the tool's message.
func (s *conn) addContextResources(written []string) string {
	var uris []string
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range written {
		file, ok := strings.CutPrefix(p, prompt.ContextDir+"/")
		if !ok || !contextFile().MatchString(file) {
			continue
		}
		uri := ContextURIPrefix + file
		uris = append(uris, uri)
		if s.contexts[file] {
			continue
		}
		s.contexts[file] = true
		s.srv.AddResource(&sdk.Resource{
			URI:         uri,
			Name:        "context-" + strings.TrimSuffix(file, ".md"),
			Title:       "Context: " + strings.TrimSuffix(file, ".md"),
			Description: "The full content of section " + strings.TrimSuffix(file, ".md") + ", written by " + prompt.OpenSectionsName + ".",
			MIMEType:    "text/markdown",
		}, s.readContext)
	}
	if len(uris) == 0 {
		return ""
	}
	return "\nAlso readable as resources: " + strings.Join(uris, ", ")
}

// shellName is the name of the built-in shell environment, which lists a
// skill's directory.
const shellName = "bash"
