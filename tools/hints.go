package tools

// Hints say what a tool's calls do to the world around it, so that a
// client can decide which calls to confirm with its user: the Model Context
// Protocol's tool annotations (readOnlyHint, destructiveHint,
// idempotentHint, openWorldHint). They are a tool's own account of itself,
// not a guarantee: a client should not trust them from a server it does
// not trust.
type Hints struct {
	// ReadOnly: a call changes nothing.
	ReadOnly bool `json:"read_only"`
	// Destructive: a call may delete or overwrite what was there, not only
	// add to it. It means something only when ReadOnly is false.
	Destructive bool `json:"destructive"`
	// Idempotent: a second call with the same arguments has no further
	// effect. It means something only when ReadOnly is false.
	Idempotent bool `json:"idempotent"`
	// OpenWorld: a call may reach beyond a closed domain: the network,
	// other programs, other systems.
	OpenWorld bool `json:"open_world"`
}

// AssumedHints are what the Model Context Protocol tells clients to assume
// of a tool that says nothing about itself: it may change and destroy, a
// repeated call may act again, and it may reach anything.
var AssumedHints = Hints{Destructive: true, OpenWorld: true}

// WithHints returns a copy of t that carries h. t itself is not changed.
func (t *Tool) WithHints(h Hints) *Tool {
	c := *t
	c.hints = &h
	return &c
}

// Hints returns the hints the tool carries, and whether it carries any;
// without them, h is AssumedHints.
func (t *Tool) Hints() (h Hints, ok bool) {
	if t.hints == nil {
		return AssumedHints, false
	}
	return *t.hints, true
}
