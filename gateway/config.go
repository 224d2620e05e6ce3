package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/internal/readfile"
)

// ProjectConfig is the configuration file read at a project's root, as
// Claude Code reads it.
const ProjectConfig = ".mcp.json"

// MaxConfigBytes bounds a configuration file.
const MaxConfigBytes = 1 << 20

// DefaultTimeout bounds a call to an upstream server when its configuration
// sets none.
const DefaultTimeout = 60 * time.Second

// ServerConfig is one upstream MCP server: a command to start (stdio) or a
// streamable HTTP endpoint.
type ServerConfig struct {
	// Name is the server's name in the configuration: letters, digits, '_'
	// and '-'. Its tools are offered as NAME__TOOL.
	Name string `json:"-"`
	// Command, Args, Env and Dir start a stdio server.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"cwd,omitempty"`
	// URL and Headers reach a streamable HTTP server.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Timeout bounds each call (0: DefaultTimeout); in a file, "timeout"
	// in seconds.
	Timeout time.Duration `json:"-"`
	// Priority orders the server's section for token budgets: under a
	// budget, servers list their tools highest priority first, each one
	// whose list fits in the room left; the others show a count.
	Priority int `json:"-"`
	// File is where the server was declared, for messages.
	File string `json:"-"`
	// Connect, when set, makes the transport instead of Command or URL (an
	// in-memory server, in tests and programs).
	Connect func(ctx context.Context) (sdk.Transport, error) `json:"-"`

	// masks maps the values variables were expanded to (and their
	// escaped forms) to their ${VAR} references, for messages (mask.go).
	masks map[string]string
}

// timeout is the per-call bound.
func (c ServerConfig) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// Hash identifies the configuration: a cached manifest is used only for the
// configuration it was fetched with.
func (c ServerConfig) Hash() string {
	data, _ := json.Marshal(struct {
		ServerConfig
		Name    string
		Timeout time.Duration
	}{c, c.Name, c.Timeout})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}

// serverName is what a server's name may be: it becomes part of tool names
// and section keys.
var serverName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`) })

// LoadConfigs reads the project's .mcp.json (when there is one) and each of
// files, in order, with ${VAR} and ${VAR:-default} expanded from lookup
// (nil: the process environment), and VS Code's and Cursor's
// ${workspaceFolder} as the project (see ParseConfig). A stdio server runs in the directory of
// the file that declared it (the project's, for its .mcp.json), as Claude
// Code runs a project's servers in the project: a relative "cwd" is
// resolved against that directory, and a relative command path
// ("./bin/srv") against the server's directory. A name declared twice is
// an error naming both files. Servers left out (see ParseConfig) come back
// as skipped, one error each, for the caller to warn about.
func LoadConfigs(project string, files []string, lookup func(string) (string, bool)) (servers []ServerConfig, skipped []error, err error) {
	var paths []string
	if project != "" {
		p := project + string(os.PathSeparator) + ProjectConfig
		found, err := projectConfig(p)
		if err != nil {
			return nil, nil, err
		}
		if found {
			paths = append(paths, p)
		}
	}
	paths = append(paths, files...)
	v := vars{lookup: lookup}
	if v.lookup == nil {
		v.lookup = os.LookupEnv
	}
	if project != "" {
		if v.project, err = filepath.Abs(project); err != nil {
			return nil, nil, fmt.Errorf("gateway: %s: %w", project, err)
		}
	}
	var out []ServerConfig
	for _, p := range paths {
		data, err := readfile.Read(p, MaxConfigBytes)
		if err != nil {
			return nil, nil, fmt.Errorf("gateway: %w", err)
		}
		list, skip, err := parseConfig(p, data, v)
		if err != nil {
			return nil, nil, err
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, nil, fmt.Errorf("gateway: %s: %w", p, err)
		}
		skipped = append(skipped, skip...)
		for _, c := range list {
			if i := slices.IndexFunc(out, func(o ServerConfig) bool { return strings.EqualFold(o.Name, c.Name) }); i >= 0 {
				if o := out[i]; o.Name != c.Name {
					return nil, nil, fmt.Errorf("gateway: %s: server %q: differs only in case from %q, declared in %s; rename one (names that differ only in case would share one cache file, .unfold/mcp/NAME.json, where file names ignore case)", p, c.Name, o.Name, o.File)
				}
				return nil, nil, fmt.Errorf("gateway: %s: server %q: declared in %s too; keep one, or rename one", p, c.Name, out[i].File)
			}
			out = append(out, inDir(c, filepath.Dir(abs)))
		}
	}
	return out, skipped, nil
}

// projectConfig reports whether the project's configuration file p is
// there. A symbolic link that leads nowhere is an error, not a file that
// is missing: the link was made to be read.
func projectConfig(p string) (bool, error) {
	_, err := os.Stat(p)
	if err == nil {
		return true, nil
	}
	if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(p)
		return false, fmt.Errorf("gateway: %s: a symbolic link to %s, which cannot be read (%v); fix the link, or remove it", p, target, errors.Unwrap(err))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, fmt.Errorf("gateway: %w", err)
}

// inDir makes c's working directory and a relative command path absolute,
// against dir, the directory of the file that declared c.
func inDir(c ServerConfig, dir string) ServerConfig {
	if c.Command == "" {
		return c
	}
	switch {
	case c.Dir == "":
		c.Dir = dir
	case !filepath.IsAbs(c.Dir):
		c.Dir = filepath.Join(dir, c.Dir)
	}
	// A bare name is looked up in PATH; a path with a separator is
	// relative to where the server runs.
	if strings.ContainsRune(c.Command, filepath.Separator) && !filepath.IsAbs(c.Command) {
		c.Command = filepath.Join(c.Dir, c.Command)
	}
	return c
}

// Timeouts a file may set, in seconds: below a millisecond no call can
// finish, and above a day a hung server is never noticed.
const (
	minTimeout = 0.001
	maxTimeout = 24 * 60 * 60
)

// rawServer is a server entry as written. Fields other clients use
// (autoApprove, alwaysAllow, ...) are ignored.
type rawServer struct {
	Type     *string            `json:"type"`
	Command  *string            `json:"command"`
	Args     *[]string          `json:"args"`
	Env      *map[string]string `json:"env"`
	Cwd      *string            `json:"cwd"`
	URL      *string            `json:"url"`
	Headers  *map[string]string `json:"headers"`
	Timeout  *float64           `json:"timeout"`
	Disabled *bool              `json:"disabled"`
	EnvFile  *string            `json:"envFile"`
}

// ParseConfig reads the mcpServers format of Claude Code, Claude Desktop and
// Cursor: {"mcpServers": {"NAME": {"command", "args", "env"} or {"type":
// "http", "url", "headers"}}}. Errors name the file, the server and the
// field. Servers marked "disabled" are left out; so are servers the file
// declares for other clients ("type": "sse", or a type unfold does not
// know), servers whose name unfold cannot use (a dot, a space, over 32
// characters), and servers that use a variable that is not set or whose
// command or url is empty once expanded: each comes back in skipped, an
// error that names the file, the server and what to do, and the other
// servers are read. Paths are kept as written (see LoadConfigs).
//
// VS Code's and Cursor's spellings are read too: ${env:VAR} is ${VAR},
// ${userHome} the home directory, ${pathSeparator} and ${/} the path
// separator, and a stdio server's "envFile" (a dotenv file, its path
// relative to file's directory) gives it the variables it sets, those of
// "env" taking precedence. ${workspaceFolder} and
// ${workspaceFolderBasename} are the project, which LoadConfigs knows and
// ParseConfig does not: here they leave the server out, as do the
// editor's other variables (${file}, ${input:...}, ...), with an error
// that names them as the editor's.
func ParseConfig(file string, data []byte, lookup func(string) (string, bool)) (servers []ServerConfig, skipped []error, err error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	return parseConfig(file, data, vars{lookup: lookup})
}

// parseConfig is ParseConfig with the variables of v.
func parseConfig(file string, data []byte, v vars) (servers []ServerConfig, skipped []error, err error) {
	var doc struct {
		Servers *map[string]json.RawMessage `json:"mcpServers"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("gateway: %s: not a JSON object with \"mcpServers\": %v", file, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("gateway: %s: text after the JSON object, at byte %d; remove it (a file holds one object)", file, dec.InputOffset())
	}
	if doc.Servers == nil || *doc.Servers == nil {
		return nil, nil, fmt.Errorf("gateway: %s: no \"mcpServers\" object; write the servers as {\"mcpServers\": {\"NAME\": {\"command\": ...}}} (a file of another format, such as VS Code's \"servers\", is not read)", file)
	}
	names := make([]string, 0, len(*doc.Servers))
	for n := range *doc.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		c, err := parseServer(file, name, (*doc.Servers)[name], v)
		var skip *skipError
		switch {
		case errors.As(err, &skip):
			skipped = append(skipped, skip.err)
		case err != nil:
			return nil, nil, err
		case c.Name != "": // not disabled
			servers = append(servers, c)
		}
	}
	return servers, skipped, nil
}

// skipError is a server ParseConfig leaves out, the other servers read.
type skipError struct{ err error }

func (e *skipError) Error() string { return e.err.Error() }

// parseServer reads the entry of server name in file: the zero
// ServerConfig when it is disabled, a *skipError when it is left out.
func parseServer(file, name string, entry json.RawMessage, v vars) (ServerConfig, error) {
	fail := func(field, format string, args ...any) error {
		at := fmt.Sprintf("gateway: %s: server %q", file, name)
		if field != "" {
			at += ": " + field
		}
		return fmt.Errorf(at+": "+format, args...)
	}
	if !serverName().MatchString(name) {
		// Other clients reading the file may take the name: the other
		// servers still start.
		return ServerConfig{}, &skipError{fail("", "names may use letters, digits, '_' and '-' (at most 32, starting with a letter or digit): they become part of tool names; the server is left out; rename it")}
	}
	var raw rawServer
	if err := json.Unmarshal(entry, &raw); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return ServerConfig{}, fail(te.Field, "want %s, got a JSON %s", te.Type, te.Value)
		}
		return ServerConfig{}, fail("", "want an object: %v", err)
	}
	if raw.Disabled != nil && *raw.Disabled {
		return ServerConfig{}, nil
	}
	c := ServerConfig{Name: name, File: file}
	expand := func(field, s string) (string, error) {
		out, err := v.expand(s)
		if err != nil {
			// The file may be right for an environment other than this
			// one: the other servers still start.
			return "", &skipError{fail(field, "%v; the server is left out", err)}
		}
		c.noteVars(field, s, v)
		return out, nil
	}
	kind := "stdio"
	if raw.Type != nil {
		kind = *raw.Type
	} else if raw.URL != nil && raw.Command == nil {
		kind = "http"
	}
	var err error
	switch kind {
	case "stdio":
		if raw.Command == nil || strings.TrimSpace(*raw.Command) == "" {
			return ServerConfig{}, fail("command", "missing: a stdio server needs the program to start")
		}
		if c.Command, err = expand("command", *raw.Command); err != nil {
			return ServerConfig{}, err
		}
		if strings.TrimSpace(c.Command) == "" {
			return ServerConfig{}, &skipError{fail("command", "%q is empty once expanded; set the variable to the program to start; the server is left out", *raw.Command)}
		}
		if raw.Args != nil {
			for i, a := range *raw.Args {
				v, err := expand(fmt.Sprintf("args[%d]", i), a)
				if err != nil {
					return ServerConfig{}, err
				}
				c.Args = append(c.Args, v)
			}
		}
		if raw.EnvFile != nil {
			if c.Env, err = readEnvFileOf(file, *raw.EnvFile, expand, &c); err != nil {
				return ServerConfig{}, err
			}
		}
		if raw.Env != nil {
			if c.Env == nil {
				c.Env = map[string]string{}
			}
			keys := slices.Sorted(maps.Keys(*raw.Env))
			for _, k := range keys {
				if c.Env[k], err = expand("env."+k, (*raw.Env)[k]); err != nil {
					return ServerConfig{}, err
				}
			}
		}
		if raw.Cwd != nil {
			if c.Dir, err = expand("cwd", *raw.Cwd); err != nil {
				return ServerConfig{}, err
			}
		}
	case "http", "streamable-http":
		if raw.EnvFile != nil {
			return ServerConfig{}, &skipError{fail("envFile", "an http server has no environment to set; the server is left out; remove envFile, or put the values in the url or headers as ${VAR}")}
		}
		if raw.URL == nil || strings.TrimSpace(*raw.URL) == "" {
			return ServerConfig{}, fail("url", "missing: an http server needs its endpoint")
		}
		if c.URL, err = expand("url", *raw.URL); err != nil {
			return ServerConfig{}, err
		}
		if strings.TrimSpace(c.URL) == "" {
			return ServerConfig{}, &skipError{fail("url", "%q is empty once expanded; set the variable to the server's endpoint; the server is left out", *raw.URL)}
		}
		if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
			return ServerConfig{}, fail("url", "%q is not an http:// or https:// address", *raw.URL)
		}
		if raw.Headers != nil {
			c.Headers = map[string]string{}
			keys := slices.Sorted(maps.Keys(*raw.Headers))
			for _, k := range keys {
				if c.Headers[k], err = expand("headers."+k, (*raw.Headers)[k]); err != nil {
					return ServerConfig{}, err
				}
			}
		}
	case "sse":
		// Other clients reading the same file use it.
		return ServerConfig{}, &skipError{fail("type", `"sse" servers are not supported, so the server is left out; use the server's streamable HTTP endpoint with "type": "http"`)}
	default:
		return ServerConfig{}, &skipError{fail("type", `unknown type %q, so the server is left out; want "stdio" or "http"`, kind)}
	}
	if raw.Timeout != nil {
		if t := *raw.Timeout; !(t >= minTimeout && t <= maxTimeout) {
			none := ""
			if t == 0 {
				none = " (0 is not \"no limit\": every call is bounded)"
			}
			return ServerConfig{}, fail("timeout", "want seconds from %v to %v, got %v%s; write a number in that range, or leave it out for %v", minTimeout, maxTimeout, t, none, DefaultTimeout)
		}
		c.Timeout = time.Duration(*raw.Timeout * float64(time.Second))
	}
	return c, nil
}

// readEnvFileOf reads the envFile entry of a stdio server declared in
// file: name, expanded, taken against file's directory. Its values are
// masked in the server's messages as ${KEY} when they look like secrets
// (see addMask), as the values of variables are.
func readEnvFileOf(file, name string, expand func(field, s string) (string, error), c *ServerConfig) (map[string]string, error) {
	p, err := expand("envFile", name)
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(file), p)
	}
	env, err := readEnvFile(p)
	if err != nil {
		fix := "create the file, or remove envFile"
		if errors.Is(err, errEnvLine) {
			fix = "correct the line, or remove envFile"
		}
		return nil, &skipError{fmt.Errorf("gateway: %s: server %q: envFile: %w; the server is left out; %s", file, c.Name, err, fix)}
	}
	for k, val := range env {
		c.addMask(k, val, false)
	}
	return env, nil
}

// varRef matches ${VAR} and ${VAR:-default}, VS Code's and Cursor's
// ${env:VAR} (groups 1 to 4), and their ${config:...}, ${command:...},
// ${input:...} and ${/} (group 5).
var varRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{(env:)?([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}|\$\{((?:config|command|input):[^}]*|/)\}`)
})

// editorOnly are the variables of VS Code and Cursor that unfold does not
// know (their value is the file open in the editor, its selection, ...):
// when no environment variable of the name is set, the error names them
// as the editor's.
var editorOnly = map[string]bool{
	"file": true, "fileWorkspaceFolder": true, "relativeFile": true, "relativeFileDirname": true,
	"fileBasename": true, "fileBasenameNoExtension": true, "fileExtname": true, "fileDirname": true,
	"fileDirnameBasename": true, "cwd": true, "lineNumber": true, "selectedText": true,
	"execPath": true, "defaultBuildTask": true,
}

// vars is what a file's ${...} references are expanded from.
type vars struct {
	lookup func(string) (string, bool) // the environment
	// project is the project's directory, absolute: VS Code's and
	// Cursor's ${workspaceFolder}; "" when there is none.
	project string
}

// expand replaces the references in s (see varRef). A variable that is
// not set and has no default is an error naming it.
func (v vars) expand(s string) (string, error) {
	var failed error
	out := varRef().ReplaceAllStringFunc(s, func(ref string) string {
		val, err := v.value(varRef().FindStringSubmatch(ref))
		if err != nil {
			if failed == nil {
				failed = err
			}
			return ref
		}
		return val
	})
	if failed != nil {
		return "", failed
	}
	return out, nil
}

// value is the value of the reference varRef matched as m.
func (v vars) value(m []string) (string, error) {
	env, name, hasDefault, def, editor := m[1] != "", m[2], m[3] != "", m[4], m[5]
	if editor == "/" {
		return string(filepath.Separator), nil
	}
	if editor != "" {
		return "", fmt.Errorf("${%s} is a variable of VS Code and Cursor that unfold does not know; write its value instead, or ${VAR} for an environment variable", editor)
	}
	if !env {
		if val, ok, err := v.editorVar(name); ok {
			return val, err
		}
	}
	if val, ok := v.lookup(name); ok && (val != "" || !hasDefault) {
		return val, nil
	}
	if hasDefault {
		return def, nil
	}
	if !env && editorOnly[name] {
		return "", fmt.Errorf("${%s} is a variable of VS Code and Cursor that unfold does not know (it is no environment variable either); write its value instead", name)
	}
	return "", fmt.Errorf("${%s} is not set; set it, or write ${%s:-default}", name, name)
}

// editorVar is the value of VS Code's and Cursor's variable name, and
// whether unfold knows it: ${workspaceFolder} is the project,
// ${workspaceFolderBasename} its name, ${userHome} the home directory.
func (v vars) editorVar(name string) (string, bool, error) {
	switch name {
	case "workspaceFolder", "workspaceFolderBasename":
		if v.project == "" {
			return "", true, fmt.Errorf("${%s} is VS Code's and Cursor's project folder, and unfold has no project here (it reads the project's .mcp.json and the --mcp-config files with --project DIR); write the path instead", name)
		}
		if name == "workspaceFolderBasename" {
			return filepath.Base(v.project), true, nil
		}
		return v.project, true, nil
	case "userHome":
		for _, k := range []string{"HOME", "USERPROFILE"} {
			if home, ok := v.lookup(k); ok && home != "" {
				return home, true, nil
			}
		}
		return "", true, errors.New("${userHome} is the home directory, and neither HOME nor USERPROFILE is set; set HOME, or write the path instead")
	case "pathSeparator":
		return string(filepath.Separator), true, nil
	}
	return "", false, nil
}

// fromEnv reports whether the reference varRef matched as m takes its
// value from the environment (rather than from the editor's variables).
func (v vars) fromEnv(m []string) bool {
	if m[5] != "" {
		return false
	}
	if m[1] != "" {
		return true
	}
	_, editor, _ := v.editorVar(m[2])
	return !editor
}

// readEnvFile reads a dotenv file (see parseDotenv), at most
// MaxConfigBytes.
func readEnvFile(path string) (map[string]string, error) {
	data, err := readfile.Read(path, MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	env, err := parseDotenv(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	return env, nil
}
