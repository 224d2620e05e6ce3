package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/internal/readfile"
	"github.com/unfold-dev/unfold/internal/utf8cut"
)

// CacheDir is where a project keeps the manifests, relative to its root.
const CacheDir = ".unfold/mcp"

// MaxManifestBytes bounds a cached manifest, and what a server's lists
// take as JSON together when they are fetched.
const MaxManifestBytes = 16 << 20

// Bounds on what one server's manifest may hold, so that a careless or
// hostile server cannot flood the prompt, the cache or memory
// (docs/reliability.md): longer texts are cut with a note, a longer
// schema leaves its tool out, a longer list is refused.
const (
	// MaxInstructions bounds a server's instructions, in bytes.
	MaxInstructions = 16 << 10
	// MaxDescription bounds a tool's description, in bytes.
	MaxDescription = 8 << 10
	// MaxSchema bounds a tool's input or output schema, as JSON.
	MaxSchema = 64 << 10
	// MaxListed bounds each list a server gives (tools, resources,
	// resource templates, prompts), over all its pages.
	MaxListed = 1000
)

// Manifest is what an upstream server offers: its identity, instructions,
// tools, resources and prompts. It is cached per server, keyed by the hash
// of the server's configuration, so that no server starts until one of its
// tools is called.
type Manifest struct {
	ConfigHash        string                  `json:"config_hash"`
	Name              string                  `json:"name,omitempty"`
	Title             string                  `json:"title,omitempty"`
	Version           string                  `json:"version,omitempty"`
	Instructions      string                  `json:"instructions,omitempty"`
	Tools             []*sdk.Tool             `json:"tools"`
	Resources         []*sdk.Resource         `json:"resources,omitempty"`
	ResourceTemplates []*sdk.ResourceTemplate `json:"resource_templates,omitempty"`
	Prompts           []*sdk.Prompt           `json:"prompts,omitempty"`
	Fetched           time.Time               `json:"fetched"`
	// TaskOnly names the tools listed to run only as MCP tasks
	// (execution.taskSupport "required"), which unfold does not make: they
	// are not in Tools, and not offered.
	TaskOnly []string `json:"task_only,omitempty"`
	// LeftOut holds the tools listed with an input or output schema over
	// MaxSchema, by name, each with why: they are not in Tools, so that
	// their schemas are not kept, and not offered.
	LeftOut map[string]string `json:"left_out,omitempty"`
	// Format is the version of what a manifest holds (manifestFormat): a
	// cached one of another version is listed again, so that what this
	// release reads (TaskOnly, LeftOut) is there.
	Format int `json:"format"`
}

// manifestFormat is the version of Manifest this release writes: 2 since
// TaskOnly, 3 since LeftOut.
const manifestFormat = 3

// maxLeftOutName bounds the name of a tool left out, as LeftOut keeps it.
const maxLeftOutName = 128

// readManifest reads the cached manifest of cfg from dir; ok is false when
// there is none, or it was fetched with another configuration.
func readManifest(dir string, cfg ServerConfig) (m Manifest, ok bool) {
	if dir == "" {
		return Manifest{}, false
	}
	data, err := readfile.Read(filepath.Join(dir, cfg.Name+".json"), MaxManifestBytes)
	if err != nil {
		return Manifest{}, false
	}
	if json.Unmarshal(data, &m) != nil || m.ConfigHash != cfg.Hash() || m.Format != manifestFormat {
		return Manifest{}, false
	}
	if max(len(m.Tools), len(m.Resources), len(m.ResourceTemplates), len(m.Prompts)) > MaxListed {
		return Manifest{}, false
	}
	m.cut()
	return m, true
}

// writeManifest writes m to dir through a temporary file renamed into
// place, so a reader never sees half a manifest.
func writeManifest(dir, name string, m Manifest) error {
	if dir == "" {
		return nil
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("gateway: cache manifest of %s: %w", name, err)
	}
	if len(data) >= MaxManifestBytes {
		return fmt.Errorf("gateway: cache manifest of %s: it is %d bytes, more than the %d a cached manifest may take; the server starts to list its tools each time instead",
			name, len(data), MaxManifestBytes)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("gateway: cache manifest of %s: %w", name, err)
	}
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return fmt.Errorf("gateway: cache manifest of %s: %w", name, err)
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, name+".json"))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("gateway: cache manifest of %s: %w", name, err)
	}
	return nil
}

// fetchManifest lists what a connected server offers. Lists the server does
// not support (its capabilities leave them out) are empty; tools that tasks
// saw listed as MCP tasks only are left out of Tools, named in TaskOnly.
// What is kept is bounded as it is listed, page by page: a tool whose
// schema is over MaxSchema is kept by name only, in LeftOut, and a list
// that takes more than MaxManifestBytes of JSON stops with an error.
// listErr says what went wrong listing method; a page over what unfold
// reads in one message (the SDK's own error says only "exceeded") is
// named as such, with what to do.
func listErr(method string, err error) error {
	if msg := err.Error(); strings.Contains(msg, frameTooLarge) || strings.Contains(msg, eventTooLarge) {
		return fmt.Errorf("%s: %w: one page of the list is over the %d MiB unfold reads in one message; "+
			"the server should list fewer at a time (a smaller page, with nextCursor), or leave it out of the configuration", method, err, MaxResponseBytes>>20)
	}
	return fmt.Errorf("%s: %w", method, err)
}

func fetchManifest(ctx context.Context, cs *sdk.ClientSession, cfg ServerConfig, tasks *taskTools) (Manifest, error) {
	m := Manifest{ConfigHash: cfg.Hash(), Format: manifestFormat, Fetched: time.Now().UTC().Truncate(time.Second)}
	init := cs.InitializeResult()
	if init == nil {
		return m, errors.New("the server did not initialize")
	}
	if init.ServerInfo != nil {
		m.Name, m.Title, m.Version = init.ServerInfo.Name, init.ServerInfo.Title, init.ServerInfo.Version
	}
	m.Instructions = init.Instructions
	caps := init.Capabilities
	if caps == nil {
		caps = &sdk.ServerCapabilities{}
	}
	var size int // bytes of JSON kept so far
	grow := func(method string, n int) error {
		if size += n; size > MaxManifestBytes {
			return fmt.Errorf("%s: what the server lists takes more than %d MiB as JSON, more than unfold takes from one server; "+
				"split its tools across servers, or leave this one out of the configuration", method, MaxManifestBytes>>20)
		}
		return nil
	}
	keep := func(method string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		return grow(method, len(data))
	}
	m.Tools = []*sdk.Tool{}
	if caps.Tools != nil {
		listed := 0 // tools kept or left out: names left out may repeat
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return m, listErr("tools/list", err)
			}
			if listed == MaxListed {
				return m, tooMany("tools/list", "tools")
			}
			listed++
			if err := schemaFits(t); err != nil {
				if m.LeftOut == nil {
					m.LeftOut = map[string]string{}
				}
				name := utf8cut.Prefix(t.Name, maxLeftOutName)
				m.LeftOut[name] = err.Error()
				if err := grow("tools/list", len(name)+len(err.Error())); err != nil {
					return m, err
				}
				continue
			}
			t.Description = cutText(t.Description, MaxDescription, "the description")
			if err := keep("tools/list", t); err != nil {
				return m, err
			}
			m.Tools = append(m.Tools, t)
		}
		m.Tools, m.TaskOnly = tasks.split(m.Tools)
	}
	if caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return m, listErr("resources/list", err)
			}
			if len(m.Resources) == MaxListed {
				return m, tooMany("resources/list", "resources")
			}
			if err := keep("resources/list", r); err != nil {
				return m, err
			}
			m.Resources = append(m.Resources, r)
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return m, listErr("resources/templates/list", err)
			}
			if len(m.ResourceTemplates) == MaxListed {
				return m, tooMany("resources/templates/list", "resource templates")
			}
			if err := keep("resources/templates/list", r); err != nil {
				return m, err
			}
			m.ResourceTemplates = append(m.ResourceTemplates, r)
		}
	}
	if caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return m, listErr("prompts/list", err)
			}
			if len(m.Prompts) == MaxListed {
				return m, tooMany("prompts/list", "prompts")
			}
			if err := keep("prompts/list", p); err != nil {
				return m, err
			}
			m.Prompts = append(m.Prompts, p)
		}
	}
	// The tools' descriptions were cut as they were listed.
	m.cutInstructions()
	return m, nil
}

// cut cuts the server's texts to their bounds: its instructions to
// MaxInstructions, each tool's description to MaxDescription.
func (m *Manifest) cut() {
	m.cutInstructions()
	for _, t := range m.Tools {
		t.Description = cutText(t.Description, MaxDescription, "the description")
	}
}

// cutInstructions cuts the server's instructions to MaxInstructions.
func (m *Manifest) cutInstructions() {
	m.Instructions = cutText(m.Instructions, MaxInstructions, "the server's instructions")
}

// same reports whether m and o hold the same, whenever each was listed.
func (m Manifest) same(o Manifest) bool {
	m.Fetched, o.Fetched = time.Time{}, time.Time{}
	a, err := json.Marshal(m)
	if err != nil {
		return false
	}
	b, err := json.Marshal(o)
	return err == nil && bytes.Equal(a, b)
}

// schemaFits reports a tool whose input or output schema is over
// MaxSchema bytes of JSON, which unfold does not take.
func schemaFits(t *sdk.Tool) error {
	for _, s := range []struct {
		which  string
		schema any
	}{{"input", t.InputSchema}, {"output", t.OutputSchema}} {
		if s.schema == nil {
			continue
		}
		data, err := json.Marshal(s.schema)
		if err != nil {
			return fmt.Errorf("%s schema: %w", s.which, err)
		}
		if len(data) > MaxSchema {
			return schemaTooLarge(s.which, len(data))
		}
	}
	return nil
}

// schemaTooLarge is the error of a tool's schema of n bytes of JSON, over
// MaxSchema.
func schemaTooLarge(which string, n int) error {
	return fmt.Errorf("%s schema: %d bytes of JSON, more than the %d unfold takes from one tool", which, n, MaxSchema)
}

// tooMany is the error of a list past MaxListed: a server that lists
// without end (a cursor that never ends) stops there too.
func tooMany(method, what string) error {
	return fmt.Errorf("%s: the server lists more than %d %s, more than unfold takes from one server; "+
		"split them across servers, or leave this one out of the configuration", method, MaxListed, what)
}

// cutText returns s cut to at most max bytes, a note that says what was
// cut and how long it was included (so that cutting again changes
// nothing), at a line or word boundary when one is near and never inside
// a character; s itself when it fits.
func cutText(s string, max int, what string) string {
	if len(s) <= max {
		return s
	}
	note := fmt.Sprintf("\n\n[unfold cut %s here: it was %d bytes]", what, len(s))
	cut := utf8cut.Prefix(s, max-len(note))
	if i := strings.LastIndexAny(cut, "\n "); i >= len(cut)/2 {
		cut = strings.TrimRight(cut[:i], " \n")
	}
	return cut + note
}
