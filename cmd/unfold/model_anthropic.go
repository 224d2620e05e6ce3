package main

import (
	"errors"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/anthropic"
)

// anthropicModel is the client of the Messages API.
func anthropicModel(base, model, key string, f agentFlags) (agent.Model, error) {
	opts := []anthropic.Option{anthropic.WithAPIKey(key), anthropic.WithTimeout(f.timeout), anthropic.WithMaxRetries(f.maxRetries)}
	if f.maxTokens > 0 {
		opts = append(opts, anthropic.WithMaxTokens(f.maxTokens))
	}
	return anthropic.New(base, model, opts...)
}

// anthropicStatus is the status of a reply the Messages API answered err
// with; 0 when err is not one.
func anthropicStatus(err error) int {
	var se *anthropic.StatusError
	if errors.As(err, &se) {
		return se.StatusCode
	}
	return 0
}
