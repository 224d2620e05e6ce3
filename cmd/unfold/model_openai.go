package main

import (
	"errors"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/openai"
)

// openaiModel is the client of an OpenAI-compatible endpoint, for the
// API f names.
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
