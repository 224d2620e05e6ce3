package visibility_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/visibility"
)

func TestModeString(t *testing.T) {
	tests := []struct {
		mode visibility.Mode
		want string
	}{
		{visibility.Full, "FULL"},
		{visibility.Summary, "SUMMARY"},
		{visibility.Mode(7), "Mode(7)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.mode.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if visibility.Mode(0) != visibility.Full {
		t.Errorf("got zero Mode %v, want FULL", visibility.Mode(0))
	}
}

func TestModeJSON(t *testing.T) {
	t.Run("marshal", func(t *testing.T) {
		tests := []struct {
			mode    visibility.Mode
			want    string
			wantErr string
		}{
			{visibility.Full, `"full"`, ""},
			{visibility.Summary, `"summary"`, ""},
			{visibility.Mode(2), "", "visibility: invalid mode 2"},
		}
		for _, tt := range tests {
			t.Run(tt.mode.String(), func(t *testing.T) {
				got, err := json.Marshal(tt.mode)
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Errorf("got %s, %v, want an error containing %q", got, err, tt.wantErr)
					}
					return
				}
				if err != nil || string(got) != tt.want {
					t.Errorf("got %s, %v, want %s", got, err, tt.want)
				}
			})
		}
	})
	t.Run("unmarshal", func(t *testing.T) {
		tests := []struct {
			in      string
			want    visibility.Mode
			wantErr string
		}{
			{`"full"`, visibility.Full, ""},
			{`"summary"`, visibility.Summary, ""},
			{`"FULL"`, visibility.Full, ""},
			{`"Summary"`, visibility.Summary, ""},
			{`"sUmMaRy"`, visibility.Summary, ""},
			{`"half"`, 0, `visibility: unknown mode "half": want full or summary`},
			{`""`, 0, `visibility: unknown mode "": want full or summary`},
			{`null`, 0, `visibility: unknown mode "": want full or summary`},
			{`1`, 0, `visibility: mode must be a string, "full" or "summary"`},
			{`{}`, 0, `visibility: mode must be a string, "full" or "summary"`},
		}
		for _, tt := range tests {
			t.Run(tt.in, func(t *testing.T) {
				got := visibility.Mode(9) // unchanged on error
				err := json.Unmarshal([]byte(tt.in), &got)
				if tt.wantErr != "" {
					if err == nil || err.Error() != tt.wantErr {
						t.Errorf("got %v, want %q", err, tt.wantErr)
					}
					if got != 9 {
						t.Errorf("got mode %v after an error, want it unchanged", got)
					}
					return
				}
				if err != nil || got != tt.want {
					t.Errorf("got %v, %v, want %v", got, err, tt.want)
				}
			})
		}
	})
	t.Run("round trip", func(t *testing.T) {
		for _, m := range []visibility.Mode{visibility.Full, visibility.Summary} {
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var got visibility.Mode
			if err := json.Unmarshal(data, &got); err != nil || got != m {
				t.Errorf("got %v, %v, want %v", got, err, m)
			}
		}
	})
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    visibility.Mode
		wantErr bool
	}{
		{"full", visibility.Full, false},
		{"FULL", visibility.Full, false},
		{"Full", visibility.Full, false},
		{"fULL", visibility.Full, false},
		{"summary", visibility.Summary, false},
		{"SUMMARY", visibility.Summary, false},
		{"Summary", visibility.Summary, false},
		{"summarY", visibility.Summary, false},
		{"", visibility.Full, true},
		{" full", visibility.Full, true},
		{"summarized", visibility.Full, true},
		{"0", visibility.Full, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := visibility.ParseMode(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("got error %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "want full or summary") {
				t.Errorf("got %q, want it to say what is accepted", err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWhy(t *testing.T) {
	tests := []struct {
		why  visibility.Why
		want string
	}{
		{visibility.Declared, "declared"},
		{visibility.Selected, "selector"},
		{visibility.Overridden, "override"},
		{visibility.Budget, "budget"},
		{visibility.NoSummary, "no summary"},
		{visibility.Why(9), "Why(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.why.String(); got != tt.want {
				t.Errorf("String: got %q, want %q", got, tt.want)
			}
			data, err := json.Marshal(tt.why)
			if want := `"` + tt.want + `"`; err != nil || string(data) != want {
				t.Errorf("JSON: got %s, %v, want %s", data, err, want)
			}
		})
	}
}
