package tools

import "errors"

// Halt marks err as an infrastructure fault or a control signal that
// [Tool.Call] must return as a Go error instead of a failed [Result]: a broken
// store, a lost connection, or a request to change the prompt (such as the
// prompt package's expansion error). The returned error reads exactly like err,
// and errors.Is and errors.As see through it to err. Halt(nil) is nil.
func Halt(err error) error {
	if err == nil {
		return nil
	}
	var h *haltError
	if errors.As(err, &h) {
		return err
	}
	return &haltError{err: err}
}

// IsHalt reports whether err, or any error it wraps, was marked with [Halt].
func IsHalt(err error) bool {
	var h *haltError
	return errors.As(err, &h)
}

// haltError is the mark Halt puts on an error; it adds nothing to the text.
type haltError struct{ err error }

func (h *haltError) Error() string { return h.err.Error() }
func (h *haltError) Unwrap() error { return h.err }
