//go:build unfold_noopenai

package main

import "github.com/unfold-dev/unfold/agent"

// openaiModel refuses: this build left the OpenAI client out.
func openaiModel(string, string, string, agentFlags) (agent.Model, error) {
	return nil, builtWithout("openai", "unfold_noopenai")
}

// openaiStatus is 0: this build has no OpenAI client to fail.
func openaiStatus(error) int { return 0 }
