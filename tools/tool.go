package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	schema "github.com/google/jsonschema-go/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/session"
)

// Context is what a handler gets besides its context.Context and its
// input: the session and filesystem of the prompt that offered the tool.
// [Tool.Call] hands the handler a transaction's view of the caller's
// Session, committed only when the call succeeds (see the package
// documentation).
type Context struct {
	Session *session.Session // may be nil
	FS      afero.Fs         // may be nil
}

// Result is what the model sees of a call.
type Result struct {
	Message string // the text the model reads
	// Value is the handler's output. On a failed call it is what the
	// handler returned with its error, and nil when that was the zero value
	// (or when the handler never ran).
	Value   any
	Success bool
}

// Handler does a tool's work. ctx is the caller's: a handler that blocks
// returns when it is done. It returns an error when the work failed; the
// error's text becomes the failed result's message, written for the model.
// Wrap an error with [Halt] to have [Tool.Call] return it as a Go error
// instead. A handler may be called from many goroutines at once.
type Handler[In, Out any] func(ctx context.Context, tc Context, in In) (Out, error)

// Tool is a named, described function with JSON schemas for its input and
// output, ready to offer to a model. Create one with [New]; a Tool is
// immutable and safe for concurrent use.
type Tool struct {
	name        string
	description string
	input       json.RawMessage
	output      json.RawMessage
	inputSchema *schema.Schema                     // the inferred input schema, for the guard and to explain validation errors
	rawGuard    *schema.Schema                     // what the guard reads of a raw tool's input schema (see guardSchema)
	compiled    func() (*jsonschema.Schema, error) // the input schema, compiled at the first call
	hints       *Hints                             // nil: the tool says nothing (see WithHints)
	run         func(ctx context.Context, tc Context, args []byte) (Result, ending, error)
}

// ending is how a call's handler ended.
type ending uint8

const (
	notRun   ending = iota // the arguments did not decode into the input type
	returned               // the handler returned
	panicked               // the handler, or encoding its output, panicked
)

// New returns a tool named name (at most [MaxNameLen] bytes) that runs h. The input schema is inferred
// from In, which must be a struct; the output schema from Out. Field names
// come from json tags, fields without omitempty or omitzero are required, a
// `description:"..."` tag describes a field and an `enum:"a,b,c"` tag lists
// the values a string field accepts.
//
// New fails when name does not satisfy [ValidName], when description is
// empty, when h is nil, or when In or Out has no JSON schema (see [TypeError]).
func New[In, Out any](name, description string, h Handler[In, Out]) (*Tool, error) {
	if err := checkSpec(name, description, h == nil); err != nil {
		return nil, fmt.Errorf("tools: new: %w", err)
	}
	fail := func(format string, args ...any) (*Tool, error) {
		return nil, fmt.Errorf("tools: new: tool %q: "+format, append([]any{name}, args...)...)
	}
	sc, err := schemasFor(reflect.TypeFor[In](), reflect.TypeFor[Out]())
	if err != nil {
		return fail("%w", err)
	}
	t := &Tool{
		name:        name,
		description: description,
		input:       sc.input,
		output:      sc.output,
		inputSchema: sc.in,
		compiled:    sc.compiled,
	}

	t.run = func(ctx context.Context, tc Context, args []byte) (res Result, end ending, err error) {
		defer func() {
			if r := recover(); r != nil {
				res, end, err = Result{Message: fmt.Sprintf("Tool %s panicked: %v", name, r)}, panicked, nil
			}
		}()
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return Result{Message: invalidPrefix + decodeProblem(err, reflect.TypeFor[In](), args)}, notRun, nil
		}
		out, err := h(ctx, tc, in)
		if err != nil {
			res, err := failure(ctx, name, err)
			if !reflect.ValueOf(&out).Elem().IsZero() {
				res.Value = out // what the handler had to show for the failed work
			}
			return res, returned, err
		}
		msg, err := message(out)
		if err != nil {
			return Result{Message: fmt.Sprintf("Tool %s produced a result that cannot be encoded as JSON: %v", name, err)}, returned, nil
		}
		return Result{Message: msg, Value: out, Success: true}, returned, nil
	}
	return t, nil
}

// checkSpec checks what every tool needs: a valid name, a description and
// a handler.
func checkSpec(name, description string, nilHandler bool) error {
	if err := checkName(name); err != nil {
		return err
	}
	if strings.TrimSpace(description) == "" {
		return fmt.Errorf("tool %q: empty description; say what the tool does and when to use it", name)
	}
	if nilHandler {
		return fmt.Errorf("tool %q: nil handler", name)
	}
	return nil
}

// MustNew is like [New] but panics on error. It suits tools declared in
// package-level variables.
func MustNew[In, Out any](name, description string, h Handler[In, Out]) *Tool {
	t, err := New(name, description, h)
	if err != nil {
		panic(err)
	}
	return t
}

// Name returns the tool's name.
func (t *Tool) Name() string { return t.name }

// Description returns the tool's description.
func (t *Tool) Description() string { return t.description }

// InputSchema returns a copy of the JSON Schema (draft 2020-12) object that
// the arguments of [Tool.Call] must satisfy.
func (t *Tool) InputSchema() json.RawMessage { return bytes.Clone(t.input) }

// OutputSchema returns a copy of the JSON Schema (draft 2020-12) of the
// value a successful call produces.
func (t *Tool) OutputSchema() json.RawMessage { return bytes.Clone(t.output) }

// Call validates args against the input schema, decodes them into the
// tool's input type and runs the handler. Empty args ("", whitespace or
// null) mean {}.
//
// Invalid arguments, handler errors and handler panics come back as a Result
// with Success false and a message for the model, and a nil error. Only an
// error the handler wrapped with [Halt], or a handler error while ctx is
// done (ctx.Err() != nil), comes back as a Go error; the Result then
// carries the error's text too.
//
// A call that fails changes nothing in tc.Session: the handler gets a
// transaction's view of it ([session.Session.Begin]), whose events are
// committed when the call succeeds and discarded when it does not. A
// failed call whose handler ran is then recorded in tc.Session as a
// [CallFailed] event, unless its error is a [Halt], which is the program's
// to handle. See the package documentation.
//
// Calling a nil Tool (what prompt's Rendered.Tool returns for a name the
// render does not offer) or a zero one (not made by [New] or [NewRaw]) is
// an error.
func (t *Tool) Call(ctx context.Context, tc Context, args json.RawMessage) (Result, error) {
	if t == nil || t.run == nil {
		what := "nil tool: there is no tool to call (a lookup such as Rendered.Tool returns nil for a name that is not offered); check the tool before calling it"
		if t != nil {
			what = "zero tool: it has no name or handler; make tools with tools.New or tools.NewRaw"
		}
		err := errors.New("tools: call: " + what)
		return Result{Message: err.Error()}, err
	}
	if ctx == nil {
		ctx = context.Background() // as a caller that has no context of its own means
	}
	raw, doc, problem := parseArgs(args)
	if problem != "" {
		return Result{Message: invalidPrefix + problem}, nil
	}
	if t.inputSchema != nil {
		g := guard{}
		g.check(t.inputSchema, doc)
		if g.hazard || g.count > floodLimit {
			return Result{Message: invalidPrefix + g.report()}, nil
		}
	} else if t.rawGuard != nil { // a tool made with NewRaw
		g := guard{raw: true}
		g.numbers(doc)
		if !g.hazard {
			g.check(t.rawGuard, doc)
		}
		if g.hazard || g.count > floodLimit {
			return Result{Message: invalidPrefix + g.report()}, nil
		}
	}
	if msg := t.validate(doc); msg != "" {
		return Result{Message: invalidPrefix + msg}, nil
	}
	sess := tc.Session
	if sess == nil {
		res, _, err := t.run(ctx, tc, raw)
		return res, err
	}
	tx := sess.Begin()
	tc.Session = tx.Session()
	res, end, err := t.run(ctx, tc, raw)
	if res.Success && err == nil {
		// The reducers' failures were the answers the handler's own
		// dispatches got; only a commit that could not happen is news.
		if cerr := tx.Commit(); errors.Is(cerr, session.ErrEnded) {
			return res, fmt.Errorf("tools: call %s: %w", t.name, cerr)
		}
		return res, nil
	}
	discarded := tx.Discard()
	if end != notRun && !IsHalt(err) {
		recordFailure(sess, t.name, res.Message, end == panicked, discarded)
	}
	return res, err
}

// validate runs jsonschema on the decoded arguments and explains what it
// finds. The guard keeps known hazards away from it; should it panic anyway,
// the call fails instead of the program.
func (t *Tool) validate(doc any) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprintf("the arguments could not be checked: %v", r)
		}
	}()
	compiled, err := t.compiled()
	if err != nil {
		return fmt.Sprintf("the arguments could not be checked: %v", err)
	}
	if err := compiled.Validate(doc); err != nil {
		return t.explain(err, doc)
	}
	return ""
}

// failure turns a handler error into the result of a call, and into a Go
// error when it is a Halt or the caller's context is done.
func failure(ctx context.Context, name string, err error) (Result, error) {
	msg := err.Error()
	if msg == "" {
		msg = fmt.Sprintf("Tool %s failed.", name)
	}
	res := Result{Message: msg}
	if IsHalt(err) {
		return res, err
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(err, ctxErr) {
			return res, err
		}
		return res, fmt.Errorf("tools: call %s: %w: %w", name, context.Cause(ctx), err)
	}
	return res, nil
}

// message is the text of a successful result: "null" for a nil pointer or
// interface, a fmt.Stringer's String, a string as it is, anything else as
// JSON (without HTML escaping, which only hurts readability for the model).
func message(out any) (string, error) {
	v := reflect.ValueOf(out)
	if !v.IsValid() || v.Kind() == reflect.Pointer && v.IsNil() {
		return "null", nil
	}
	if s, ok := out.(fmt.Stringer); ok {
		return s.String(), nil
	}
	if v.Kind() == reflect.String {
		return v.String(), nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// schemas are what New infers and compiles for a pair of input and output
// types. They depend only on the types, so they are built once per pair and
// shared: tools created per request (such as a prompt's open_sections, made
// at every render) cost a map lookup instead of inference and compilation.
type schemas struct {
	in            *schema.Schema
	input, output json.RawMessage // never modified once cached
	// compiled compiles input when a call is first validated: a program
	// that makes tools it never calls (a render, a help) does not pay for
	// it, and inferred schemas always compile (see compile).
	compiled func() (*jsonschema.Schema, error)
}

// schemaCache maps [2]reflect.Type{In, Out} to *schemas.
var schemaCache sync.Map

func schemasFor(inType, outType reflect.Type) (*schemas, error) {
	key := [2]reflect.Type{inType, outType}
	if sc, ok := schemaCache.Load(key); ok {
		return sc.(*schemas), nil
	}
	if inType.Kind() != reflect.Struct {
		return nil, fmt.Errorf("input type %s is not a struct; tool arguments are a JSON object, so use a struct (struct{} for none)", inType)
	}
	in, err := infer(inType)
	if err != nil {
		return nil, fmt.Errorf("input type %s: %w", inType, err)
	}
	if in.Type != "object" {
		return nil, fmt.Errorf("input type %s has its own JSON or text encoding methods, so no schema can list its fields; use a struct without them", inType)
	}
	// A pointer output is described by its element, as an object when it
	// points to a struct: MCP takes only object output schemas.
	elem := outType
	for elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	out, err := infer(elem)
	if err != nil {
		return nil, fmt.Errorf("output type %s: %w", outType, err)
	}
	sc := &schemas{in: in}
	if sc.input, err = encode(in); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if sc.output, err = encode(out); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	sc.compiled = sync.OnceValues(func() (*jsonschema.Schema, error) { return compile(sc.input) })
	actual, _ := schemaCache.LoadOrStore(key, sc)
	return actual.(*schemas), nil
}

// compile compiles an inferred input schema. It fails only when inference
// produced something jsonschema rejects, which would be a bug here.
func compile(input json.RawMessage) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.AssertContent = true
	const url = "mem://tools/input.json"
	if err := c.AddResource(url, bytes.NewReader(input)); err != nil {
		return nil, err
	}
	return c.Compile(url)
}
