// Package jsonpos says where in its input a JSON decoding error is, as a
// person editing the file counts: line and column.
package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Describe returns err, an error decoding data as JSON, with its line and
// column: "invalid character 'x' … (line 3, column 7)". An input that ends
// too soon is described by ends ("the file ends before the JSON value
// does"); an error with no offset in data is returned as it reads.
func Describe(data []byte, err error, ends string) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ends
	}
	if off < 0 || off > int64(len(data)) {
		return err.Error()
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	return fmt.Sprintf("%v (line %d, column %d)", err, line, max(col, 1))
}
