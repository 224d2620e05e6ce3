package term

import "errors"

// Terminal size of [OpenPTY]; 0x0 would make programs that ask (stty size)
// see 0 0.
const (
	Rows = 50
	Cols = 200
)

// Size is a terminal's size in characters.
type Size struct{ Rows, Cols uint16 }

// ErrUnsupported is returned by the terminal helpers on platforms other
// than Linux.
var ErrUnsupported = errors.New("term: pseudo-terminal environments need Linux")
