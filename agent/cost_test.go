package agent_test

import (
	"math"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
)

func TestPriceCost(t *testing.T) {
	p := agent.Price{Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15}
	u := agent.Usage{PromptTokens: 10_000, CachedTokens: 6_000, CacheWriteTokens: 1_000, CompletionTokens: 2_000}
	// 3,000 plain at 3, 6,000 cached at 0.3, 1,000 written at 3.75, 2,000 out at 15.
	want := (3000*3 + 6000*0.3 + 1000*3.75 + 2000*15) / 1e6
	if got := p.Cost(u); math.Abs(got-want) > 1e-12 {
		t.Errorf("got %v, want %v", got, want)
	}
	// No cache-write price: writes cost what input does.
	if got, want := (agent.Price{Input: 2}).Cost(agent.Usage{PromptTokens: 1000, CacheWriteTokens: 500}), 1000*2/1e6; math.Abs(got-want) > 1e-12 {
		t.Errorf("writes without a price: got %v, want %v", got, want)
	}
}

func TestPricesLookup(t *testing.T) {
	p := agent.DefaultPrices()
	for model, want := range map[string]float64{
		"gpt-5": 1.25, "gpt-5-2025-08-07": 1.25, "gpt-5-mini-2025-08-07": 0.25, "claude-sonnet-4-5-20250929": 3,
		"claude-opus-4-5": 5, "claude-opus-4-5-20251101": 5, "claude-opus-4-20250514": 15, "claude-3-5-haiku-latest": 0.8,
		// Anthropic's aliases of the Claude 4 models, Vertex AI's
		// snapshots, and OpenAI's alias of the ChatGPT model.
		"claude-sonnet-4-0": 3, "claude-opus-4-0": 15, "claude-sonnet-4-5@20250929": 3, "claude-opus-4-1@20250805": 15,
		"claude-haiku-4-5@20251001": 1, "gpt-5-chat-latest": 1.25,
	} {
		if got, ok := p.Lookup(model); !ok || got.Input != want {
			t.Errorf("%s: got %+v, %v, want input %v", model, got, ok, want)
		}
	}
	// Other models whose names start with an entry's have prices of
	// their own, not that entry's.
	for _, model := range []string{"gpt-50", "gpt-5-pro", "gpt-5-pro-2025-10-06", "gpt-4.1-nano", "gpt-4o-mini-tts", "gpt-5.1", "claude-opus-4-6", "gpt-5-2025-08", "gpt-5-latest-preview", "claude-sonnet-4-5@2025", "claude-sonnet-4-5@latest", "gpt-5-chat"} {
		if got, ok := p.Lookup(model); ok {
			t.Errorf("%s: got %+v, want no price", model, got)
		}
	}
	over, err := agent.ReadPrices(strings.NewReader(`{"gpt-5": {"input": 1, "cached_input": 0.1, "output": 8}, "local": {"input": 0, "cached_input": 0, "output": 0}}`))
	if err != nil {
		t.Fatal(err)
	}
	m := p.Merge(over)
	if got, _ := m.Lookup("gpt-5"); got.Input != 1 {
		t.Errorf("override: got %+v", got)
	}
	if _, ok := m.Lookup("local"); !ok {
		t.Error("an added model is missing")
	}
	if got, _ := p.Lookup("gpt-5"); got.Input != 1.25 {
		t.Error("Merge changed the table it was called on")
	}
	for _, bad := range []string{`{"m": {"input": -1}}`, `{"m": {"inptu": 1}}`, `[1]`, `{`} {
		if _, err := agent.ReadPrices(strings.NewReader(bad)); err == nil || !strings.HasPrefix(err.Error(), "agent: read prices: ") {
			t.Errorf("%s: got %v, want an error", bad, err)
		}
	}
}

// TestCostBounded: counts past any real figure, or negative, never give
// a negative cost, an infinite one, or a sum that wraps around.
func TestCostBounded(t *testing.T) {
	p := agent.Price{Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15}
	for _, tt := range []struct {
		name string
		u    agent.Usage
		want float64
	}{
		{"negative", agent.Usage{PromptTokens: -100, CompletionTokens: -1000000, CachedTokens: -5, CacheWriteTokens: -7}, 0},
		{"negative output", agent.Usage{PromptTokens: 1000000, CompletionTokens: -1000000}, 3},
		{"cached past the prompt", agent.Usage{PromptTokens: 0, CachedTokens: math.MaxInt, CacheWriteTokens: math.MaxInt}, (math.MaxInt*0.3 + math.MaxInt*3.75) / 1e6},
		{"largest", agent.Usage{PromptTokens: math.MaxInt, CompletionTokens: math.MaxInt}, math.MaxInt * 18 / 1e6},
	} {
		if got := p.Cost(tt.u); math.Abs(got-tt.want) > tt.want*1e-12 {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := (agent.Price{Input: math.MaxFloat64}).Cost(agent.Usage{PromptTokens: math.MaxInt}); math.IsInf(got, 0) || got != math.MaxFloat64 {
		t.Errorf("a price past any real one: got %v, want %v", got, math.MaxFloat64)
	}
}

// TestUsageAddSaturates: sums held at the ends of int instead of wrapping.
func TestUsageAddSaturates(t *testing.T) {
	big := agent.Usage{PromptTokens: math.MaxInt, CompletionTokens: math.MaxInt, CachedTokens: math.MaxInt - 1, CacheWriteTokens: 1, RequestTokens: math.MinInt, PrefixTokens: 5}
	got := big.Add(agent.Usage{PromptTokens: 1, CompletionTokens: math.MaxInt, CachedTokens: 2, CacheWriteTokens: 2, RequestTokens: -1, PrefixTokens: -7})
	want := agent.Usage{PromptTokens: math.MaxInt, CompletionTokens: math.MaxInt, CachedTokens: math.MaxInt, CacheWriteTokens: 3, RequestTokens: math.MinInt, PrefixTokens: -2}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if total := big.Total(); total != math.MaxInt {
		t.Errorf("total: got %d, want %d", total, math.MaxInt)
	}
}
