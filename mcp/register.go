package mcp

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// The SDK panics on a resource address it cannot parse. Addresses come
// from data (an upstream server's manifest, a skill's file names), so each
// is checked before it is registered, and a panic the checks missed is
// turned into an error: one bad address leaves that resource out, never
// the server down.

// ownScheme is the scheme of unfold's own resources; no upstream resource
// may use it.
const ownScheme = "unfold"

// schemePrefix matches a URI scheme and its colon at the start of a string.
var schemePrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):`) })

// checkURI returns why uri cannot be a resource's address: it does not
// parse, or has no scheme.
func checkURI(uri string) error {
	u, err := url.Parse(uri)
	if err != nil {
		return err
	}
	if u.Scheme == "" {
		return fmt.Errorf("%q has no scheme", uri)
	}
	return nil
}

// checkTemplate returns why t cannot be a resource template: it is not a
// valid URI template, or does not start with a scheme.
func checkTemplate(t string) error {
	if _, err := uritemplate.New(t); err != nil {
		return fmt.Errorf("URI template %q is invalid: %w", t, err)
	}
	if !schemePrefix().MatchString(t) {
		return fmt.Errorf("URI template %q does not start with a scheme", t)
	}
	return nil
}

// scheme returns the scheme t starts with, lower-case ("" when none).
func scheme(t string) string {
	m := schemePrefix().FindStringSubmatch(t)
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}

// guard runs an SDK registration, turning a panic into an error.
func guard(add func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the MCP SDK refused it: %v", v)
		}
	}()
	add()
	return nil
}

// addResource registers r, unless its address is not one the SDK takes.
func (s *conn) addResource(r *sdk.Resource, h sdk.ResourceHandler) error {
	if err := checkURI(r.URI); err != nil {
		return err
	}
	return guard(func() { s.srv.AddResource(r, h) })
}

// addResourceTemplate registers t, unless its template is not one the SDK
// takes.
func (s *conn) addResourceTemplate(t *sdk.ResourceTemplate, h sdk.ResourceHandler) error {
	if err := checkTemplate(t.URITemplate); err != nil {
		return err
	}
	return guard(func() { s.srv.AddResourceTemplate(t, h) })
}

// addPrompt registers p, unless the SDK refuses it.
func (s *conn) addPrompt(p *sdk.Prompt, h sdk.PromptHandler) error {
	return guard(func() { s.srv.AddPrompt(p, h) })
}

// escapePath percent-encodes each segment of a slash-separated path, so
// that any file name makes a valid URI path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/")
}
