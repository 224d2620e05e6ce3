package envs

import "errors"

// ErrClosed is returned, wrapped, by Execute on an environment that has been
// closed. Test for it with errors.Is.
var ErrClosed = errors.New("environment is closed")
