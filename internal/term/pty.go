package term

import "errors"

// Terminal size of [OpenPTY]; 0x0 would make programs that ask (stty size)
// see 0 0.
const (
	Rows = 50
	Cols = 200
)

// ErrUnsupported is returned by the terminal helpers on platforms other
// than Linux.
var ErrUnsupported = errors.New("term: pseudo-terminal environments need Linux")
