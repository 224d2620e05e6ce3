package orchestrator

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/cmdline"
	"github.com/unfold-dev/unfold/internal/jsonpos"
	"github.com/unfold-dev/unfold/internal/procs"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
)

//go:embed envspec.schema.json
var specSchemaJSON string

// SpecSchema returns the JSON schema every env/*.json spec file is validated
// against.
func SpecSchema() string { return specSchemaJSON }

// maxSpecBytes bounds the size of a spec file.
const maxSpecBytes = 1 << 20

// ReservedNames returns the names of the tools the front ends offer
// beside the environments' command tools, which are named for their
// environments: help, open_sections, the MCP gateway's find_tools and
// call_tool, and the agent's use_tool. A spec file may not take one of
// these names, nor a name holding "__", which MCP tools'
// SERVER__TOOL names hold. This is the one list of them.
func ReservedNames() []string { return slices.Clone(reservedNames) }

var reservedNames = []string{tools.HelpName, prompt.OpenSectionsName, findToolsName, callToolName, useToolName}

// The names of tools of packages above this one, which the agent's tests
// keep equal to theirs: agent.UseToolName, the tool through which an
// agent calls the tools of sections opened during its run, and the MCP
// gateway's gateway.FindToolsName, gateway.CallToolName and
// gateway.Separator (of SERVER__TOOL names).
const (
	useToolName   = "use_tool"
	findToolsName = "find_tools"
	callToolName  = "call_tool"
	mcpSeparator  = "__"
)

const specSchemaURL = "https://unfold.dev/schema/envspec.json"

// specSchemas holds the compiled schema: the kind check and one schema per
// kind, so a file's errors are about its own kind's fields.
var specSchemas = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(specSchemaURL, strings.NewReader(specSchemaJSON)); err != nil {
		return nil, err
	}
	out := make(map[string]*jsonschema.Schema)
	for key, frag := range map[string]string{"": "", "interactive": "#/$defs/interactive", "process": "#/$defs/process"} {
		s, err := c.Compile(specSchemaURL + frag)
		if err != nil {
			return nil, err
		}
		out[key] = s
	}
	return out, nil
})

// specFile is a spec file's fields, both kinds together.
type specFile struct {
	Kind        string            `json:"kind"`
	Command     string            `json:"command"`
	Prompt      string            `json:"prompt"`
	Cont        string            `json:"continuation"`
	Init        []string          `json:"init"`
	Description string            `json:"description"`
	OnDemand    bool              `json:"on_demand"`
	Executable  string            `json:"executable"`
	Args        []string          `json:"args"`
	Dir         string            `json:"dir"`
	Env         map[string]string `json:"env"`
	Timeout     float64           `json:"timeout"`
	Hard        bool              `json:"hard"`
	Quiet       float64           `json:"quiet"`
	Budget      int               `json:"budget"`
	Limits      procs.Limits      `json:"limits"`
	Hints       *specHints        `json:"hints"`
}

// specHints are a spec file's hints; a field left out is what MCP assumes
// ([tools.AssumedHints]).
type specHints struct {
	ReadOnly    *bool `json:"read_only"`
	Destructive *bool `json:"destructive"`
	Idempotent  *bool `json:"idempotent"`
	OpenWorld   *bool `json:"open_world"`
}

// hints fills in the fields left out: a read-only environment destroys
// nothing.
func (h *specHints) hints() tools.Hints {
	out := tools.AssumedHints
	if h.ReadOnly != nil && *h.ReadOnly {
		out.Destructive = false
	}
	for _, f := range []struct {
		from *bool
		to   *bool
	}{{h.ReadOnly, &out.ReadOnly}, {h.Destructive, &out.Destructive}, {h.Idempotent, &out.Idempotent}, {h.OpenWorld, &out.OpenWorld}} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
	return out
}

// limits returns the spec's soft limits.
func (s specFile) limits() envs.Defaults {
	return envs.Defaults{Quiet: seconds(s.Quiet), Wait: seconds(s.Timeout), Budget: s.Budget}
}

// seconds converts seconds, as a spec file, a message or a command tool's
// input gives them, to a duration: 0 stays 0 (no value), and a value
// above 0 is at least a nanosecond, not 0, which would be taken for no
// value and lift the limit asked for.
func seconds(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return max(time.Duration(s*float64(time.Second)), 1)
}

// InteractiveSpec is a validated spec file of kind "interactive".
type InteractiveSpec struct {
	Name    string   // environment name (the file name without .json)
	File    string   // the spec file, relative to the project directory
	Command string   // the command line that starts the program
	Args    []string // Command split into words; a program word with a slash is resolved from Dir
	Prompt  string   // regular expression matching the program's prompt; it compiles
	// Continuation is a regular expression matching the program's
	// continuation prompt; it compiles, and "" means the driver's default.
	Continuation string
	Init         []string      // commands sent after every start of the program
	Description  string        // one-line summary
	Dir          string        // the project directory
	Limits       envs.Defaults // soft limits: quiet, timeout (wait) and budget
	Hard         bool          // the timeout interrupts the command
	Resources    procs.Limits  // resource limits for the program
	// StartCheck, when set, is called before every start of the program:
	// an error refuses the start, and the response gives it
	// ([WithoutSpecReload] sets it).
	StartCheck func() error
}

// InteractiveFactory makes the environment for an interactive spec file.
type InteractiveFactory func(InteractiveSpec) (envs.Env, error)

// WithInteractive sets how interactive spec files become environments. The
// default registers an environment that validates but cannot run: the
// terminal-driven implementation lives in its own package, which plugs in
// here.
func WithInteractive(f InteractiveFactory) Option {
	return func(o *Orchestrator) { o.interactive = f }
}

// ProcessFactory makes the environment for a process spec file.
type ProcessFactory func(ProcessSpec) (envs.Env, error)

// WithProcesses sets how process spec files become environments (default
// [NewProcess], which starts the program on first use). A dry run plugs in
// environments that start nothing.
func WithProcesses(f ProcessFactory) Option {
	return func(o *Orchestrator) { o.processes = f }
}

// SpecError is a spec file that failed to load.
type SpecError struct {
	File string // relative to the project directory, like "env/db.json"
	Msg  string // what is wrong, naming the field
}

func (e *SpecError) Error() string { return e.File + ": " + e.Msg }

// loadSpec registers the environment the spec file at path (rel from the
// project directory) with content data declares, and returns its name, or
// why it could not.
func (o *Orchestrator) loadSpec(projectDir, path, rel string, data []byte) (string, error) {
	fail := func(format string, args ...any) (string, error) {
		return "", &SpecError{File: rel, Msg: fmt.Sprintf(format, args...)}
	}
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	if err := ValidName(name); err != nil {
		return fail("the file name gives the environment's name: %v; rename the file", err)
	}
	if slices.Contains(reservedNames, name) {
		return fail("the name %s is taken by a tool the front ends offer (%s); rename the file", name, strings.Join(reservedNames, ", "))
	}
	if strings.Contains(name, mcpSeparator) {
		return fail("the name %s holds %s, which MCP tools' names (SERVER%sTOOL) hold: an environment could take an MCP tool's name; rename the file without %s", name, mcpSeparator, mcpSeparator, mcpSeparator)
	}
	spec, err := parseSpec(data)
	if err != nil {
		return fail("%v", err)
	}
	var opts []RegisterOption
	if spec.OnDemand {
		opts = append(opts, OnDemand())
	}
	opts = append(opts, Description(spec.Description), Budget(spec.Budget), specLimits(spec))
	if spec.Hints != nil {
		opts = append(opts, Hints(spec.Hints.hints()))
	}
	var env envs.Env
	switch spec.Kind {
	case "interactive":
		args, err := cmdline.Split(spec.Command)
		if err == nil && len(args) == 0 {
			err = errors.New("no program in it")
		}
		if err != nil {
			return fail("field \"command\": %v", err)
		}
		if args[0], err = resolveProgram(projectDir, "command", args[0]); err != nil {
			return fail("%v", err)
		}
		is := InteractiveSpec{Name: name, File: rel, Command: spec.Command, Args: args, Prompt: spec.Prompt, Continuation: spec.Cont, Init: spec.Init, Description: spec.Description, Dir: projectDir,
			Limits: spec.limits(), Hard: spec.Hard, Resources: spec.Limits}
		if o.fixedSpecs != "" {
			is.StartCheck = o.pin(newProgramPin(projectDir, projectDir, rel, o.fixedSpecs, args[0], args[1:], nil))
		}
		factory := o.interactive
		if factory == nil {
			factory = newUnavailableInteractive
		}
		env, err = factory(is)
		if err != nil {
			return fail("%v", err)
		}
	case "process":
		ps, err := processSpec(projectDir, name, rel, spec)
		if err != nil {
			return fail("%v", err)
		}
		if o.fixedSpecs != "" {
			ps.StartCheck = o.pin(newProgramPin(projectDir, ps.Dir, rel, o.fixedSpecs, ps.Executable, ps.Args, ps.Env))
		}
		factory := o.processes
		if factory == nil {
			factory = func(ps ProcessSpec) (envs.Env, error) { return NewProcess(ps) }
		}
		if env, err = factory(ps); err != nil {
			return fail("%v", err)
		}
	}
	if err := o.register(name, env, rel, opts...); err != nil {
		if c, ok := env.(envs.Closer); ok {
			_ = c.Close()
		}
		return fail("%v", err)
	}
	return name, nil
}

// parseSpec decodes and validates a spec file's bytes.
func parseSpec(data []byte) (specFile, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return specFile{}, fmt.Errorf("not valid JSON: %s", jsonpos.Describe(data, err, "the file ends before the JSON value does"))
	}
	if _, err := dec.Token(); err != io.EOF {
		return specFile{}, errors.New("not valid JSON: more than one JSON value in the file")
	}
	schemas, err := specSchemas()
	if err != nil {
		return specFile{}, fmt.Errorf("internal error: the spec schema does not compile: %v", err)
	}
	if err := schemas[""].Validate(doc); err != nil {
		return specFile{}, schemaError(err)
	}
	kind := doc.(map[string]any)["kind"].(string)
	if err := schemas[kind].Validate(doc); err != nil {
		return specFile{}, schemaError(err)
	}
	// The schema counts 4e9 and 8000.0 as integers, as JSON Schema does;
	// they are written as whole numbers before the fields are decoded.
	whole, err := json.Marshal(wholeNumbers(doc))
	if err != nil {
		return specFile{}, fmt.Errorf("internal error: %v", err)
	}
	var spec specFile
	if err := json.Unmarshal(whole, &spec); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return specFile{}, fmt.Errorf("field %q: %s is out of range; write a smaller whole number", te.Field, strings.TrimPrefix(te.Value, "number "))
		}
		return specFile{}, fmt.Errorf("internal error: %v", err)
	}
	if spec.Kind == "interactive" {
		re, err := regexp.Compile(spec.Prompt)
		if err != nil {
			return specFile{}, fmt.Errorf("field \"prompt\": not a valid regular expression (Go RE2 syntax): %v", err)
		}
		if re.MatchString("") {
			return specFile{}, fmt.Errorf("field \"prompt\": %q matches the empty string, so it would match the end of any output and every command would end before its output came; write the prompt's text, such as \"sqlite> \"", spec.Prompt)
		}
		if spec.Cont != "" {
			re, err := regexp.Compile(spec.Cont)
			if err != nil {
				return specFile{}, fmt.Errorf("field \"continuation\": not a valid regular expression (Go RE2 syntax): %v", err)
			}
			if re.MatchString("") {
				return specFile{}, fmt.Errorf("field \"continuation\": %q matches the empty string, so every command would end as incomplete; write the continuation prompt's text, such as \"db-# \"", spec.Cont)
			}
		}
	}
	if err := checkEnv(spec.Env); err != nil {
		return specFile{}, fmt.Errorf("field \"env\": %v", err)
	}
	for i, a := range spec.Args {
		if strings.ContainsRune(a, 0) {
			return specFile{}, fmt.Errorf("field \"args[%d]\": holds a NUL character, which no argument can hold", i)
		}
	}
	return spec, nil
}

// maxWholeExponent bounds the exponent of a number wholeNumbers rewrites:
// larger ones are out of range of every integer field anyway, and writing
// them out would take memory in proportion to the exponent.
const maxWholeExponent = 40

// wholeNumbers rewrites in place the numbers of a document decoded with
// UseNumber that are whole but written with a fraction or an exponent
// (8000.0, 4e9) as plain integers, and returns the document.
func wholeNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = wholeNumbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = wholeNumbers(x)
		}
	case json.Number:
		text := string(v)
		if !strings.ContainsAny(text, ".eE") {
			return v
		}
		if i := strings.IndexAny(text, "eE"); i >= 0 {
			exp, err := strconv.Atoi(text[i+1:])
			if err != nil || exp > maxWholeExponent || exp < -maxWholeExponent {
				return v
			}
		}
		r, ok := new(big.Rat).SetString(text)
		if ok && r.IsInt() {
			return json.Number(r.Num().String())
		}
	}
	return v
}

// reservedVars are the variables unfold sets for the programs of process
// environments: the environment's name, and the mark that finds the
// processes a program left behind where no cgroup can be made
// (internal/procs). A spec may not set them.
var reservedVars = []string{"UNFOLD_ENV", "UNFOLD_PROCS"}

// checkEnv refuses variables a process environment cannot be given: a
// name that is empty or holds "=" or NUL, a value holding NUL, or one of
// unfold's own ([reservedVars]).
func checkEnv(env map[string]string) error {
	keys := slices.Sorted(maps.Keys(env))
	for _, k := range keys {
		switch {
		case k == "":
			return errors.New("a variable has an empty name; give it a name")
		case strings.ContainsAny(k, "=\x00"):
			return fmt.Errorf("variable %q: a name may not hold \"=\" or NUL", k)
		case slices.Contains(reservedVars, k):
			return fmt.Errorf("variable %q: unfold sets it (%s); use another name", k, strings.Join(reservedVars, ", "))
		case strings.ContainsRune(env[k], 0):
			return fmt.Errorf("variable %q: its value holds a NUL character, which no variable can hold", k)
		}
	}
	return nil
}

// processSpec resolves a process spec file's paths.
func processSpec(projectDir, name, rel string, spec specFile) (ProcessSpec, error) {
	dir := projectDir
	if spec.Dir != "" {
		dir = spec.Dir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(projectDir, dir)
		}
		// Inside is judged with symlinks resolved on both sides: a project
		// opened through a symlink holds the dirs its real path names, and
		// a symlink in the project that leads out of it does not.
		realProject, err := filepath.EvalSymlinks(projectDir)
		if err != nil {
			realProject = projectDir
		}
		realDir, err := filepath.EvalSymlinks(dir)
		if err != nil { // missing: refused below, as outside if its words say so
			realDir = dir
		}
		if !within(realProject, realDir) && (err == nil || !within(projectDir, dir)) {
			leads := ""
			if err == nil && within(projectDir, dir) {
				leads = fmt.Sprintf(" (a symlink leads it to %s)", realDir)
			}
			return ProcessSpec{}, fmt.Errorf("field \"dir\": %q is outside the project directory%s; give a directory inside it, relative to it", spec.Dir, leads)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return ProcessSpec{}, fmt.Errorf("field \"dir\": %q is not a directory", spec.Dir)
		}
	}
	exe, err := resolveProgram(projectDir, "executable", spec.Executable)
	if err != nil {
		return ProcessSpec{}, err
	}
	return ProcessSpec{
		Name:        name,
		File:        rel,
		Executable:  exe,
		Args:        spec.Args,
		Dir:         dir,
		Env:         spec.Env,
		Description: spec.Description,
		Timeout:     seconds(spec.Timeout),
		Hard:        spec.Hard,
		Quiet:       seconds(spec.Quiet),
		Budget:      spec.Budget,
		Resources:   spec.Limits,
	}, nil
}

// within reports whether path is dir or lies under it, by their words.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel)
}

// resolveProgram finds the program a spec file names in field: a word with
// a slash is a path, a relative one from the project directory (not from
// the working directory of the program that loads the spec); another word
// is looked up in PATH, and stays as it is.
func resolveProgram(projectDir, field, word string) (string, error) {
	if !strings.ContainsRune(word, filepath.Separator) && !strings.ContainsRune(word, '/') {
		if _, err := exec.LookPath(word); err != nil {
			return "", fmt.Errorf("field %q: %q is not found in PATH", field, word)
		}
		return word, nil
	}
	path := word
	if !filepath.IsAbs(path) {
		path = filepath.Join(projectDir, path)
	}
	if fi, err := os.Stat(path); err != nil || fi.IsDir() {
		return "", fmt.Errorf("field %q: %q does not exist (relative paths start at the project directory)", field, word)
	}
	return path, nil
}
