//go:build unfold_noanthropic

package main

import "github.com/unfold-dev/unfold/agent"

// anthropicModel refuses: this build left the Anthropic client out.
func anthropicModel(string, string, string, agentFlags) (agent.Model, error) {
	return nil, builtWithout("anthropic", "unfold_noanthropic")
}

// anthropicStatus is 0: this build has no Anthropic client to fail.
func anthropicStatus(error) int { return 0 }
