package unfold_test

import (
	"os"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/visibility"
)

// TestDesignEvents keeps the events table of docs/design.md true: every
// event name a saved session log can hold is listed there.
func TestDesignEvents(t *testing.T) {
	doc, err := os.ReadFile(designFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		visibility.EventSet, visibility.EventClear, visibility.EventClearAll,
		orchestrator.EventCommandExecuted, envs.EventCommandUsed,
	} {
		if !strings.Contains(string(doc), "| `"+name+"` |") {
			t.Errorf("%s: the events table has no row for %q", designFile, name)
		}
	}
}
