package anthropic

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The tool search tool, which deferred tools need, is there for Claude
// Haiku 4.5, Sonnet 4.5 and Opus 4.5 and the models after them; the API
// refuses a request that offers it to an earlier model (Sonnet 4, Opus 4
// and 4.1, the Claude 3 models).
// The patterns are compiled on first use, not when the program starts.
var (
	// claude-sonnet-4-5, claude-opus-4-1-20250805, claude-sonnet-4-20250514
	// (no minor version: the date is not one), claude-haiku-4-5@20251001
	modelName = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:$|[^0-9])`)
	})
	// claude-3-5-sonnet-20241022, claude-3-opus-latest, claude-2.1
	oldModelName = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`claude-(\d+)(?:[-.](\d))?(?:$|[^0-9])`)
	})
)

// hasToolSearch says whether model has the tool search tool. A name it
// does not know as Claude's is taken to have it, so that such a model
// keeps its deferred tools; should the API refuse them,
// [Client.Complete]'s error says how to run without.
func hasToolSearch(model string) bool {
	name := strings.ToLower(model)
	m := modelName().FindStringSubmatch(name)
	if m == nil {
		m = oldModelName().FindStringSubmatch(name)
	}
	if m == nil {
		return true
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2]) // "" when absent: 0
	return major > 4 || major == 4 && minor >= 5
}

// refusedSearch adds to err, a reply to a request with deferred tools,
// what to do when the API refused them: the model does not have the tool
// search tool.
func refusedSearch(err error, model string) error {
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest {
		return err
	}
	msg := strings.ToLower(se.Message)
	if !strings.Contains(msg, "tool_search") && !strings.Contains(msg, "tool search") && !strings.Contains(msg, "defer_loading") && !strings.Contains(msg, "tool_reference") {
		return err
	}
	return fmt.Errorf("%w: the sections' tools were sent deferred, with the tool search tool, which model %s may not have; run with the rerender disclosure instead (unfold agent --disclosure rerender, or agent.WithDisclosure(agent.DisclosureRerender))", err, model)
}
