package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/prompt"
)

// listed is what an upstream server's manifest registered with the SDK
// server: its resources, resource templates and prompts.
type listed struct {
	uris      []string
	templates []string
	prompts   []string
}

// upstreamChanged follows a change of an upstream server's manifest: the
// gateway's section is built again and replaces the old one (the session's
// openings stay), the tool list follows (tools/list_changed), and so do the
// server's resources and prompts.
func (s *conn) upstreamChanged(*gateway.Upstream) {
	p, err := s.composePrompt()
	if err == nil {
		err = s.disc.Replace(0, p)
	}
	if err != nil {
		s.log.Error("mcp: an upstream server changed, and the prompt did not build again", "err", err)
		return
	}
	s.refresh()
	s.syncUpstreams()
}

// syncUpstreams registers each upstream server's resources, templates and
// prompts as its manifest has them, replacing what it registered before.
// Prompts are named SERVER__PROMPT; resources keep their addresses. An
// upstream resource never replaces unfold's own or another server's: an
// address in the unfold: scheme, or one an earlier server registered, is
// left out with a warning, and so is one the SDK cannot parse.
func (s *conn) syncUpstreams() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.gw.Upstreams() {
		m := u.Manifest()
		if old := s.upstream[u.Name()]; old != nil {
			if len(old.uris) > 0 {
				s.srv.RemoveResources(old.uris...)
			}
			if len(old.templates) > 0 {
				s.srv.RemoveResourceTemplates(old.templates...)
			}
			if len(old.prompts) > 0 {
				s.srv.RemovePrompts(old.prompts...)
			}
		}
		uris, templates := s.upstreamTaken(u.Name())
		l := &listed{}
		skip := func(kind, addr string, err error) {
			s.log.Warn("mcp: an upstream server's "+kind+" is left out", "server", u.Name(), kind, addr, "err", err)
		}
		for _, r := range m.Resources {
			res := *r
			res.Name = u.Name() + gateway.Separator + r.Name
			res.Title = u.Name() + ": " + orName(r.Title, r.Name)
			err := upstreamAddress(r.URI, scheme(r.URI), uris)
			if err == nil {
				err = s.addResource(&res, readUpstream(u))
			}
			if err != nil {
				skip("resource", r.URI, err)
				continue
			}
			uris[r.URI] = u.Name()
			l.uris = append(l.uris, r.URI)
		}
		for _, t := range m.ResourceTemplates {
			tmpl := *t
			tmpl.Name = u.Name() + gateway.Separator + t.Name
			tmpl.Title = u.Name() + ": " + orName(t.Title, t.Name)
			err := upstreamAddress(t.URITemplate, scheme(t.URITemplate), templates)
			if err == nil {
				err = s.addResourceTemplate(&tmpl, readUpstream(u))
			}
			if err != nil {
				skip("template", t.URITemplate, err)
				continue
			}
			templates[t.URITemplate] = u.Name()
			l.templates = append(l.templates, t.URITemplate)
		}
		for _, p := range m.Prompts {
			pr := *p
			pr.Name = u.Name() + gateway.Separator + p.Name
			pr.Title = u.Name() + ": " + orName(p.Title, p.Name)
			name := p.Name
			if err := s.addPrompt(&pr, func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
				return u.GetPrompt(ctx, name, req.Params.Arguments)
			}); err != nil {
				skip("prompt", pr.Name, err)
				continue
			}
			l.prompts = append(l.prompts, pr.Name)
		}
		s.upstream[u.Name()] = l
	}
}

// upstreamTaken returns the resource addresses and templates the upstream
// servers other than name registered, each mapped to its server.
func (s *conn) upstreamTaken(name string) (uris, templates map[string]string) {
	uris, templates = make(map[string]string), make(map[string]string)
	for server, l := range s.upstream {
		if server == name {
			continue
		}
		for _, u := range l.uris {
			uris[u] = server
		}
		for _, t := range l.templates {
			templates[t] = server
		}
	}
	return uris, templates
}

// upstreamAddress returns why an upstream server may not register addr (a
// resource's URI or a template), whose scheme is sch: it is in unfold's
// own scheme, or another server registered it (taken maps addresses to
// their servers).
func upstreamAddress(addr, sch string, taken map[string]string) error {
	if sch == ownScheme {
		return fmt.Errorf("%q is in the %s: scheme of this server's own resources", addr, ownScheme)
	}
	if other, ok := taken[addr]; ok {
		return fmt.Errorf("%q is registered by the server %s already", addr, other)
	}
	return nil
}

// maxNamed bounds the tools of one server the instructions name.
const maxNamed = 20

// gatewayInstructions tells clients about the upstream servers: each one's
// name, its tools' names (the first maxNamed) or why they are not known,
// and how to open them. A client reads them once, at initialize.
func gatewayInstructions(g *gateway.Gateway) string {
	var b strings.Builder
	b.WriteString("MCP servers behind this one, their tools offered once opened:")
	for i, u := range g.Upstreams() {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s (%s)", u.Name(), upstreamTools(u))
	}
	b.WriteString(". Open a server's tools with " + prompt.OpenSectionsName + " (key \"" + g.Key() + ".SERVER\", or \"" + g.Key() + ".SERVER.tools.TOOL\" for one), or find them with " +
		gateway.FindToolsName + "; call them as SERVER" + gateway.Separator + "TOOL or with " + gateway.CallToolName + ".")
	return b.String()
}

// upstreamTools names u's tools for the instructions: the first maxNamed
// and how many more, or why they are not known yet.
func upstreamTools(u *gateway.Upstream) string {
	m := u.Manifest()
	switch {
	case m.ConfigHash == "" && u.Starting():
		return "starting; " + gateway.FindToolsName + " finds its tools once it has listed them"
	case m.ConfigHash == "":
		return "it did not start; " + gateway.FindToolsName + " and " + gateway.CallToolName + " try it again"
	case len(m.Tools) == 0:
		return "no tools"
	}
	names := make([]string, 0, min(len(m.Tools), maxNamed))
	for _, t := range m.Tools[:min(len(m.Tools), maxNamed)] {
		names = append(names, t.Name)
	}
	list := strings.Join(names, ", ")
	if more := len(m.Tools) - len(names); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return list
}

// readUpstream reads a resource from u.
func readUpstream(u *gateway.Upstream) sdk.ResourceHandler {
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return u.ReadResource(ctx, req.Params.URI)
	}
}

func orName(title, name string) string {
	if title != "" {
		return title
	}
	return name
}

// withProgress passes the progress an upstream server reports during a
// call on to the client, under the client's token, when it asked for
// progress.
func withProgress(ctx context.Context, req *sdk.CallToolRequest) context.Context {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return ctx
	}
	ss := req.Session
	return gateway.WithProgress(ctx, func(progress, total float64, message string) {
		_ = ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: progress, Total: total, Message: message})
	})
}
