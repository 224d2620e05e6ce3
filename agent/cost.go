package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"strings"
	"sync"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input       float64 `json:"input"`                 // input tokens not served from the cache
	CachedInput float64 `json:"cached_input"`          // input tokens served from the cache
	CacheWrite  float64 `json:"cache_write,omitempty"` // input tokens written to the cache (0: billed as Input)
	Output      float64 `json:"output"`
}

// Cost estimates what u cost at p, in US dollars: never negative (a
// negative count or price counts as 0) and never past math.MaxFloat64.
func (p Price) Cost(u Usage) float64 {
	write := p.CacheWrite
	if write == 0 {
		write = p.Input
	}
	prompt, cached, written := nonNegative(u.PromptTokens), nonNegative(u.CachedTokens), nonNegative(u.CacheWriteTokens)
	plain := max(prompt-cached-written, 0)
	cost := (plain*max(p.Input, 0) + cached*max(p.CachedInput, 0) +
		written*max(write, 0) + nonNegative(u.CompletionTokens)*max(p.Output, 0)) / 1e6
	return min(cost, math.MaxFloat64)
}

// nonNegative returns n as a float64, 0 if it is negative.
func nonNegative(n int) float64 { return float64(max(n, 0)) }

// Prices maps model names to prices. A name matches a model whose name is
// the same, or the same with a snapshot's date or "-latest" after it
// ("gpt-5" prices "gpt-5-2025-08-07", "claude-opus-4-1" prices
// "claude-opus-4-1-20250805" and Vertex AI's "claude-opus-4-1@20250805").
// Other models whose names start with it are
// not its ("gpt-5" does not price "gpt-5-pro", nor "claude-opus-4"
// "claude-opus-4-5"): they have prices of their own.
type Prices map[string]Price

// DefaultPrices returns the list prices of some well-known models as they
// were when this table was written. Prices change: override them with
// [ReadPrices] (unfold agent --prices).
func DefaultPrices() Prices {
	return Prices{
		"gpt-5":             {Input: 1.25, CachedInput: 0.125, Output: 10},
		"gpt-5-chat-latest": {Input: 1.25, CachedInput: 0.125, Output: 10},
		"gpt-5-mini":        {Input: 0.25, CachedInput: 0.025, Output: 2},
		"gpt-5-nano":        {Input: 0.05, CachedInput: 0.005, Output: 0.4},
		"gpt-4.1":           {Input: 2, CachedInput: 0.5, Output: 8},
		"gpt-4.1-mini":      {Input: 0.4, CachedInput: 0.1, Output: 1.6},
		"gpt-4o":            {Input: 2.5, CachedInput: 1.25, Output: 10},
		"gpt-4o-mini":       {Input: 0.15, CachedInput: 0.075, Output: 0.6},
		"claude-opus-4":     {Input: 15, CachedInput: 1.5, CacheWrite: 18.75, Output: 75},
		"claude-opus-4-0":   {Input: 15, CachedInput: 1.5, CacheWrite: 18.75, Output: 75},
		"claude-opus-4-5":   {Input: 5, CachedInput: 0.5, CacheWrite: 6.25, Output: 25},
		"claude-opus-4-1":   {Input: 15, CachedInput: 1.5, CacheWrite: 18.75, Output: 75},
		"claude-sonnet-4":   {Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15},
		"claude-sonnet-4-0": {Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15},
		"claude-sonnet-4-5": {Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15},
		"claude-haiku-4-5":  {Input: 1, CachedInput: 0.1, CacheWrite: 1.25, Output: 5},
		"claude-3-5-haiku":  {Input: 0.8, CachedInput: 0.08, CacheWrite: 1, Output: 4},
	}
}

// Lookup returns the price of model: the entry of the same name, else
// that of the name model is with a snapshot's date (-YYYY-MM-DD,
// -YYYYMMDD, @YYYYMMDD) or "-latest" cut off. A model of no entry has no price.
func (p Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	if m := snapshot().FindStringIndex(model); m != nil {
		pr, ok := p[model[:m[0]]]
		return pr, ok
	}
	return Price{}, false
}

// snapshot matches what follows a model's name in the name of one of its
// snapshots or aliases; compiled on first use, as the package's start
// builds nothing it may not need.
var snapshot = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8}|-latest)$`)
})

// Merge returns p with the entries of over added or replaced.
func (p Prices) Merge(over Prices) Prices {
	out := maps.Clone(p)
	if out == nil {
		out = Prices{}
	}
	maps.Copy(out, over)
	return out
}

// maxPricesBytes bounds a price table ReadPrices accepts.
const maxPricesBytes = 1 << 20

// ReadPrices reads a price table as JSON: an object from model names to
// {"input", "cached_input", "cache_write", "output"}, US dollars per
// million tokens. Unknown fields and negative prices are errors.
func ReadPrices(r io.Reader) (Prices, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPricesBytes+1))
	if err != nil {
		return nil, fmt.Errorf("agent: read prices: %w", err)
	}
	if len(data) > maxPricesBytes {
		return nil, fmt.Errorf("agent: read prices: larger than %d bytes", maxPricesBytes)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var p Prices
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("agent: read prices: %w; want {\"model\": {\"input\": 1.25, \"cached_input\": 0.125, \"output\": 10}}", err)
	}
	for name, pr := range p {
		if pr.Input < 0 || pr.CachedInput < 0 || pr.CacheWrite < 0 || pr.Output < 0 {
			return nil, fmt.Errorf("agent: read prices: %s: a price is negative", name)
		}
	}
	return p, nil
}
