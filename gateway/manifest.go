package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/internal/readfile"
)

// CacheDir is where a project keeps the manifests, relative to its root.
const CacheDir = ".unfold/mcp"

// MaxManifestBytes bounds a cached manifest.
const MaxManifestBytes = 16 << 20

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
}

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
	if json.Unmarshal(data, &m) != nil || m.ConfigHash != cfg.Hash() {
		return Manifest{}, false
	}
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
// not support (its capabilities leave them out) are empty.
func fetchManifest(ctx context.Context, cs *sdk.ClientSession, cfg ServerConfig) (Manifest, error) {
	m := Manifest{ConfigHash: cfg.Hash(), Fetched: time.Now().UTC().Truncate(time.Second)}
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
	m.Tools = []*sdk.Tool{}
	if caps.Tools != nil {
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return m, fmt.Errorf("tools/list: %w", err)
			}
			m.Tools = append(m.Tools, t)
		}
	}
	if caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return m, fmt.Errorf("resources/list: %w", err)
			}
			m.Resources = append(m.Resources, r)
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return m, fmt.Errorf("resources/templates/list: %w", err)
			}
			m.ResourceTemplates = append(m.ResourceTemplates, r)
		}
	}
	if caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return m, fmt.Errorf("prompts/list: %w", err)
			}
			m.Prompts = append(m.Prompts, p)
		}
	}
	return m, nil
}
