package prompt_test

import (
	"testing"

	"github.com/unfold-dev/unfold/prompttest"
)

// golden compares got with testdata/<name>, or rewrites it when the tests
// run with UNFOLD_UPDATE_GOLDEN=1.
func golden(t *testing.T, name, got string) {
	t.Helper()
	prompttest.Golden(t, name, got)
}
