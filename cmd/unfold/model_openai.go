//go:build !unfold_noopenai

package main

import (
	"errors"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/openai"
)

// openaiModel is the client of an OpenAI-compatible endpoint, for the
// API f names. A build with the tag unfold_noopenai leaves it out, and
// with it the OpenAI SDK, about 33 MB of the binary (docs/design.md,
// "Front ends").
func openaiModel(base, model, key string, f agentFlags) (agent.Model, error) {
	opts := []openai.Option{openai.WithAPIKey(key), openai.WithTimeout(f.timeout), openai.WithMaxRetries(f.maxRetries)}
	if f.maxTokens > 0 {
		opts = append(opts, openai.WithMaxTokens(f.maxTokens))
	}
	if f.api == "responses" {
		return openai.NewResponses(base, model, opts...)
	}
	return openai.New(base, model, opts...)
}

// openaiStatus is the status of a reply an OpenAI-compatible endpoint
// answered err with; 0 when err is not one.
func openaiStatus(err error) int {
	var se *openai.StatusError
	if errors.As(err, &se) {
		return se.StatusCode
	}
	return 0
}
