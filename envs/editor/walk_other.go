//go:build !linux

package editor

import "context"

// walkFast has no walk by directory handles outside Linux: the search
// walks through afero.
func (e *Editor) walkFast(context.Context, *searcher, *ignorer) error { return errNoFastWalk }
