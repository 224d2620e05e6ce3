//go:build !unfold_noanthropic

package main

import (
	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/anthropic"
)

// anthropicModel is the client of the Messages API. A build with the tag
// unfold_noanthropic leaves it out, and with it the Anthropic SDK.
func anthropicModel(base, model, key string, f agentFlags) (agent.Model, error) {
	opts := []anthropic.Option{anthropic.WithAPIKey(key), anthropic.WithTimeout(f.timeout), anthropic.WithMaxRetries(f.maxRetries)}
	if f.maxTokens > 0 {
		opts = append(opts, anthropic.WithMaxTokens(f.maxTokens))
	}
	return anthropic.New(base, model, opts...)
}
